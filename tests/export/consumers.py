"""The consumers' parsers, rewritten from their sources, stricter where the C++ is silent.

htsim: FatTreeTopology::load and set_custom_params (sim/datacenter/fat_tree_topology.cpp of
Broadcom/csg-htsim). HPCC: the config loop and topology reading of simulation/scratch/third.cc
(alibaba-edu/High-Precision-Congestion-Control), with ns-3's DataRate::DoParse and Time(string).
Each raises Rejected where the C++ exits, asserts, aborts or would read something else than meant
(stoi on "92.5" reads 92; ">> uint32_t" on "1.5" reads 1 and leaves ".5" as the next key).
"""
import re


class Rejected(Exception):
    pass


def _int(token, what):
    if not re.fullmatch(r"-?\d+", token):
        read = re.match(r"-?\d*", token).group() or "nothing"
        raise Rejected(f"{what}: '{token}' is not an integer (stoi would read {read})")
    return int(token)


def _tokenize(line):
    # tokenize() in connection_matrix.cpp: getline(ss, s, ' ') -- empty fields kept, no trailing one.
    if line == "":
        return []
    tokens = line.split(" ")
    if tokens[-1] == "":
        tokens.pop()
    return tokens


HTSIM_TIER_KEYS = {"downlink_speed_gbps", "radix_up", "radix_down", "queue_up", "queue_down", "oversubscribed",
                   "bundle", "switch_latency_ns", "downlink_latency_ns"}


def htsim_load(text):
    """What FatTreeTopology::load builds from a .topo, with the stock main_*.cpp (-q given or not,
    queuesize is non-zero: load() presets every tier's queue to it)."""
    nodes = tiers = podsize = 0
    lines = text.split("\n")
    tier = {t: {"downlink_speed_gbps": 0, "radix_up": 0, "radix_down": 0, "oversubscribed": 1, "bundle": 1,
                "switch_latency_ns": 0, "downlink_latency_ns": 0} for t in range(3)}
    done = [False] * 3
    current = -1
    header = True
    for number, line in enumerate(lines, 1):
        tokens = _tokenize(line)
        if not tokens or tokens[0][:1] == "#":
            continue
        key = tokens[0].lower()
        if len(tokens) != 2:
            raise Rejected(f"line {number}: '{line}': a key and one value")
        if header and key != "tier":
            if key not in ("nodes", "tiers", "podsize"):
                raise Rejected(f"line {number}: '{key}' before the first Tier is not read")
            value = _int(tokens[1], key)
            if key == "nodes":
                nodes = value
            elif key == "tiers":
                tiers = value
            else:
                podsize = value
            continue
        if header:
            header = False
            if nodes == 0:
                raise Rejected("Missing number of nodes in header")
            if tiers == 0:
                raise Rejected("Missing number of tiers in header")
            if tiers < 2 or tiers > 3:
                raise Rejected(f"Invalid number of tiers: {tiers}")
            if podsize == 0:
                raise Rejected("Missing pod size in header")
        if key == "tier":
            current = _int(tokens[1], "tier")
            if current < 0 or current > 2:
                raise Rejected(f"Invalid tier {current} at line {number}")
            done[current] = True
            continue
        if key in ("queue_up", "queue_down"):
            raise Rejected(f"Duplicate {key} setting for tier {current} at line {number} (load() sets it from -q)")
        if key not in HTSIM_TIER_KEYS:
            raise Rejected(f"line {number}: '{tokens[0]}' is not a key load() reads")
        if current < 0:
            raise Rejected(f"line {number}: {key} before any Tier")
        default = 1 if key in ("oversubscribed", "bundle") else 0
        if tier[current][key] != default:
            raise Rejected(f"Duplicate {key} setting for tier {current} at line {number}")
        if key == "radix_up" and current == 2:
            raise Rejected(f"Can't specific radix_up for tier {current}")
        tier[current][key] = _int(tokens[1], key)
    if header:
        raise Rejected("no Tier section")
    for t in range(tiers):
        c = tier[t]
        if not done[t]:
            raise Rejected(f"No configuration found for tier {t}")
        if c["downlink_speed_gbps"] == 0:
            raise Rejected(f"Missing downlink_speed_gbps for tier {t}")
        if c["downlink_latency_ns"] == 0:
            raise Rejected(f"Missing downlink_latency_ns for tier {t}")
        if t < tiers - 1 and c["radix_up"] == 0:
            raise Rejected(f"Missing radix_up for tier {t}")
        if c["radix_down"] == 0:
            raise Rejected(f"Missing radix_down for tier {t}")
    return _set_custom_params(nodes, tiers, podsize, tier)


def _set_custom_params(nodes, tiers, podsize, tier):
    speed = [tier[t]["downlink_speed_gbps"] * 10**9 for t in range(3)]
    down = [tier[t]["radix_down"] for t in range(3)]
    up = [tier[t]["radix_up"] for t in range(3)]
    bundle = [tier[t]["bundle"] for t in range(3)]
    oversub = [tier[t]["oversubscribed"] for t in range(3)]
    for t in range(tiers):
        if down[t] % bundle[t]:
            raise Rejected(f"Mismatch between tier {t} down radix of {down[t]} and bundlesize {bundle[t]}")
        if t < tiers - 1 and up[t] % bundle[t + 1]:
            raise Rejected(f"Mismatch between tier {t} up radix of {up[t]} and tier {t + 1} down bundlesize")
    if nodes % podsize:
        raise Rejected("No_of_nodes is not a multiple of hosts_per_pod")
    pods = nodes // podsize
    if bundle[0] != 1:
        raise Rejected("assert(_bundlesize[TOR_TIER] == 1)")
    if podsize % down[0]:
        raise Rejected(f"Mismatch between TOR radix {down[0]} and podsize {podsize}")
    tor_per_pod = podsize // down[0]
    if (nodes * speed[0]) % (speed[1] * oversub[0]):
        raise Rejected("assert: ToR uplinks not a whole number")
    tor_uplinks = nodes * speed[0] // (speed[1] * oversub[0])
    if down[0] // up[0] != oversub[0]:
        raise Rejected(f"Mismatch between TOR radix ({down[0]} down, {up[0]} up) and oversubscription {oversub[0]}")
    if tor_uplinks % (pods * down[1]):
        raise Rejected("assert: ToR uplinks not a multiple of pods x agg down radix")
    agg_per_pod = tor_uplinks // (pods * down[1])
    if agg_per_pod * bundle[1] != up[0]:
        raise Rejected(f"Mismatch between TOR up radix {up[0]} and {agg_per_pod} aggregation switches per pod")
    core = 0
    if tiers == 3:
        if (tor_uplinks * speed[1]) % (speed[2] * oversub[1]):
            raise Rejected("assert: agg uplinks not a whole number")
        agg_uplinks = tor_uplinks * speed[1] // (speed[2] * oversub[1])
        if agg_uplinks % down[2]:
            raise Rejected("assert: agg uplinks not a multiple of core down radix")
        core = agg_uplinks // down[2]
        if core % agg_per_pod or core * bundle[2] // agg_per_pod != up[1]:
            raise Rejected("Mismatch between the AGG switch up-radix and the core switches")
    ntor, nagg = tor_per_pod * pods, agg_per_pod * pods
    # init_network: every ToR its hosts, and (two tiers) every aggregation switch by a bundle.
    links = {"host": ntor * down[0], "tor_agg": ntor * (nagg if tiers == 2 else agg_per_pod) * bundle[1]}
    return {"NSRV": nodes, "NTOR": ntor, "NAGG": nagg, "NCORE": core, "links": links, "tiers": tier,
            "speed_bps": speed}


# --- HPCC (scratch/third.cc) ---

def ns3_data_rate(s):
    """DataRate::DoParse: bits per second, or Rejected (ns-3 aborts)."""
    n = len(s) - len(s.lstrip("0123456789."))
    if n == len(s):
        raise Rejected(f"rate '{s}': no unit")
    units = {"bps": 1, "b/s": 1, "Bps": 8, "B/s": 8, "kbps": 1e3, "kb/s": 1e3, "Kbps": 1e3, "Kb/s": 1e3,
             "kBps": 8e3, "kB/s": 8e3, "KBps": 8e3, "KB/s": 8e3, "Kib/s": 1024, "KiB/s": 8192,
             "Mbps": 1e6, "Mb/s": 1e6, "MBps": 8e6, "MB/s": 8e6, "Mib/s": 1024**2, "MiB/s": 8 * 1024**2,
             "Gbps": 1e9, "Gb/s": 1e9, "GBps": 8e9, "GB/s": 8e9, "Gib/s": 1024**3, "GiB/s": 8 * 1024**3}
    number, unit = s[:n], s[n:]
    if unit not in units or not re.fullmatch(r"\d+(\.\d*)?|\.\d+", number):
        raise Rejected(f"rate '{s}': DataRate cannot parse it")
    return int(float(number) * units[unit])  # (uint64_t)(r * factor)


def ns3_time_ns(s):
    """Time(const std::string&) in ns; ns-3's default resolution is ns, so a fraction is lost."""
    n = len(s) - len(s.lstrip("+-0123456789."))
    number, unit = s[:n], s[n:]
    factors = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1, "ps": 1e-3, "fs": 1e-6, "": 1e9}
    if unit not in factors or not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", number):
        raise Rejected(f"time '{s}': Can't Parse Time")
    value = float(number) * factors[unit]
    if value != int(value):
        raise Rejected(f"time '{s}': {value} ns, finer than ns-3's resolution (whole ns)")
    return int(value)


def _uint(token, what, bits=32):
    if not re.fullmatch(r"\d+", token) or int(token) >= 2**bits:
        raise Rejected(f"{what}: '{token}' is not a uint{bits}")
    return int(token)


def _double(token, what):
    try:
        return float(token)
    except ValueError:
        raise Rejected(f"{what}: '{token}' is not a number") from None


U, D, S = "uint32", "double", "string"
# The if-chain of third.cc, in order: key -> what `conf >>` reads after it.
HPCC_KEYS = [
    ("ENABLE_QCN", [U]), ("USE_DYNAMIC_PFC_THRESHOLD", [U]), ("CLAMP_TARGET_RATE", [U]), ("PAUSE_TIME", [D]),
    ("DATA_RATE", [S]), ("LINK_DELAY", [S]), ("PACKET_PAYLOAD_SIZE", [U]), ("L2_CHUNK_SIZE", [U]),
    ("L2_ACK_INTERVAL", [U]), ("L2_BACK_TO_ZERO", [U]), ("TOPOLOGY_FILE", [S]), ("FLOW_FILE", [S]),
    ("TRACE_FILE", [S]), ("TRACE_OUTPUT_FILE", [S]), ("SIMULATOR_STOP_TIME", [D]), ("ALPHA_RESUME_INTERVAL", [D]),
    ("RP_TIMER", [D]), ("EWMA_GAIN", [D]), ("FAST_RECOVERY_TIMES", [U]), ("RATE_AI", [S]), ("RATE_HAI", [S]),
    ("ERROR_RATE_PER_LINK", [D]), ("CC_MODE", [U]), ("RATE_DECREASE_INTERVAL", [D]), ("MIN_RATE", [S]),
    ("FCT_OUTPUT_FILE", [S]), ("HAS_WIN", [U]), ("GLOBAL_T", [U]), ("MI_THRESH", [U]), ("VAR_WIN", [U]),
    ("FAST_REACT", [U]), ("U_TARGET", [D]), ("INT_MULTI", [U]), ("RATE_BOUND", [U]), ("ACK_HIGH_PRIO", [U]),
    ("DCTCP_RATE_AI", [S]), ("PFC_OUTPUT_FILE", [S]), ("LINK_DOWN", ["uint64", U, U]), ("ENABLE_TRACE", [U]),
    ("KMAX_MAP", ["map", U]), ("KMIN_MAP", ["map", U]), ("PMAX_MAP", ["map", D]), ("BUFFER_SIZE", [U]),
    ("QLEN_MON_FILE", [S]), ("QLEN_MON_START", ["uint64"]), ("QLEN_MON_END", ["uint64"]), ("MULTI_RATE", [U]),
    ("SAMPLE_FEEDBACK", [U]), ("PINT_LOG_BASE", [D]), ("PINT_PROB", [D]),
]


def hpcc_config(text):
    """The config loop of third.cc: every key it reads, once, in its order, each value as read."""
    words = text.split()
    spec = dict(HPCC_KEYS)
    seen, out, i = [], {}, 0

    def take(kind, what):
        nonlocal i
        if i >= len(words):
            raise Rejected(f"{what}: value missing at the end")
        token = words[i]
        i += 1
        if kind == U:
            return _uint(token, what)
        if kind == "uint64":
            return _uint(token, what, 64)
        if kind == D:
            return _double(token, what)
        return token

    while i < len(words):
        key = words[i]
        i += 1
        if key not in spec:
            raise Rejected(f"'{key}' is not a key third.cc reads (it would skip it silently)")
        if key in seen:
            raise Rejected(f"{key} given twice")
        seen.append(key)
        kinds = spec[key]
        if kinds[0] == "map":
            n = _uint(words[i], key) if i < len(words) else 0
            i += 1
            out[key] = {take("uint64", f"{key} rate"): take(kinds[1], f"{key} value") for _ in range(n)}
        else:
            values = [take(k, key) for k in kinds]
            out[key] = values[0] if len(values) == 1 else values
    order = [k for k, _ in HPCC_KEYS]
    if seen != order:
        missing = [k for k in order if k not in seen]
        raise Rejected(f"keys missing {missing}" if missing else f"keys out of third.cc's order: {seen}")
    if out["BUFFER_SIZE"] * 1024 * 1024 >= 2**32:
        raise Rejected("BUFFER_SIZE * 1024 * 1024 overflows third.cc's uint32")
    return out


def hpcc_topology(text, config):
    """The topology reading of third.cc, and the switch setup that asserts on the ECN maps. Returns
    the links and `capacity`, {(a, b): b/s} per node pair (a < b) of the graph third.cc routes on."""
    words = text.split()
    pos = 0

    def take():
        nonlocal pos
        if pos >= len(words):
            raise Rejected("topology file ends early")
        pos += 1
        return words[pos - 1]

    node_num, switch_num, link_num = (_uint(take(), w) for w in ("node_num", "switch_num", "link_num"))
    switches = [_uint(take(), "switch id") for _ in range(switch_num)]
    for s in switches:
        if s >= node_num:
            raise Rejected(f"switch id {s} >= node_num {node_num}")
    links = []
    # main() of third.cc, after qbb.Install: nbr2if[snode][dnode] (and [dnode][snode]) = this link's
    # device, overwriting an earlier link between the two; CalculateRoute walks nbr2if and
    # SetRoutingEntries installs nbr2if[node][next].idx, so of parallel links only the last carries
    # traffic: the others would silently idle.
    nbr2if = {}
    for _ in range(link_num):
        src, dst = _uint(take(), "src"), _uint(take(), "dst")
        rate, delay, error = ns3_data_rate(take()), ns3_time_ns(take()), _double(take(), "error_rate")
        if src >= node_num or dst >= node_num:
            raise Rejected(f"link {src} {dst}: node id beyond {node_num}")
        if not 0 <= error <= 1:
            raise Rejected(f"link {src} {dst}: error rate {error}")
        for node in (src, dst):
            if node in switches:
                for key in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"):
                    if rate not in config[key]:
                        raise Rejected(f"must set {key} for each link speed ({rate} b/s)")
        pair = (min(src, dst), max(src, dst))
        if pair in nbr2if:
            raise Rejected(f"link {src} {dst}: nodes {pair[0]} and {pair[1]} already joined by link "
                           f"{nbr2if[pair]['src']} {nbr2if[pair]['dst']}; third.cc's nbr2if keeps the last, the "
                           "other carries nothing")
        if src == dst:
            raise Rejected(f"link {src} {dst}: a node to itself")
        links.append({"src": src, "dst": dst, "bps": rate, "delay_ns": delay, "error": error})
        nbr2if[pair] = links[-1]
    if pos != len(words):
        raise Rejected(f"{len(words) - pos} words after the last link")
    hosts = [n for n in range(node_num) if n not in switches]
    for h in hosts:
        degree = sum((l["src"] == h) + (l["dst"] == h) for l in links)
        if degree != 1:
            raise Rejected(f"host {h} has {degree} links; third.cc addresses one NIC a host")
    return {"nodes": node_num, "switches": switches, "links": links,
            "capacity": {pair: link["bps"] for pair, link in nbr2if.items()}}
