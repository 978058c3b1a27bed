#!/usr/bin/env python3
"""Value changes of a VCD file, signal by signal, read by the VCD rules of IEEE 1364 (18.2):
scopes nest through $scope/$upscope, $var gives a signal's type, width, identifier and name, and
after $enddefinitions each #time is followed by changes "0<id>", "1<id>" or "b<bits> <id>".

  vcd_signals.py same A.vcd B.vcd [--extra-under SCOPE]
    every signal of A changes in B exactly as in A; with --extra-under, B also has signals
    whose hierarchical name has SCOPE as a component, and only those beyond A's.
"""
import sys


def signals(path):
    scope, names, changes, now = [], {}, {}, 0
    with open(path) as f:
        tokens = f.read().split()
    i, header = 0, True
    while i < len(tokens):
        t = tokens[i]
        if header:
            if t == "$scope":
                scope.append(tokens[i + 2])
                i += 4
            elif t == "$upscope":
                scope.pop()
                i += 2
            elif t == "$var":
                ident, name = tokens[i + 3], tokens[i + 4]
                names.setdefault(ident, []).append(".".join(scope + [name]))
                i = tokens.index("$end", i) + 1
            elif t == "$enddefinitions":
                header = False
                i += 2
            else:
                i += 1
            continue
        if t.startswith("#"):
            now = int(t[1:])
        elif t[0] in "bBrR":
            value, ident = t[1:], tokens[i + 1]
            i += 1
            for n in names.get(ident, []):
                changes.setdefault(n, []).append((now, int(value, 2) if t[0] in "bB" else value))
        elif t[0] in "01xXzZ" and t[1:] in names:
            for n in names[t[1:]]:
                changes.setdefault(n, []).append((now, t[0]))
        i += 1
    for ident, ns in names.items():
        for n in ns:
            changes.setdefault(n, [])
    return changes


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "same":
        sys.exit(__doc__)
    a, b = signals(sys.argv[2]), signals(sys.argv[3])
    extra = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--extra-under" else None
    if not a:
        sys.exit(f"{sys.argv[2]}: no signals")
    for name, ch in a.items():
        if name not in b:
            sys.exit(f"{name}: in {sys.argv[2]}, not in {sys.argv[3]}")
        if b[name] != ch:
            first = next((x, y) for x, y in zip(ch + [None] * len(b[name]), b[name] + [None] * len(ch)) if x != y)
            sys.exit(f"{name}: changes differ, first {first[0]} against {first[1]}")
    beyond = sorted(set(b) - set(a))
    if extra is None and beyond:
        sys.exit(f"{sys.argv[3]} has signals {sys.argv[2]} lacks: {beyond[:5]}")
    if extra is not None:
        stray = [n for n in beyond if extra not in n.split(".")]
        if stray:
            sys.exit(f"{sys.argv[3]}: signals beyond {sys.argv[2]}'s outside '{extra}': {stray[:5]}")
        if not beyond:
            sys.exit(f"{sys.argv[3]}: no signals under '{extra}'")
    print(f"ok: {len(a)} signals change alike" + (f"; {len(beyond)} more under '{extra}'" if extra else ""))


if __name__ == "__main__":
    main()
