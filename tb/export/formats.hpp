// The formats `xysim export` writes, one function each (registered in export.cpp), and what they
// share: the measured points of the loaded inputs.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tb/export/export.hpp"

namespace xy::exports {

// One run's results: a results.json, or one point of a sweep.json.
struct Point {
  std::string origin;  // "results/results.json" or "sweep/sweep.json point 3"
  std::string scenario;
  nlohmann::json summary;
};
// Every point of the inputs; ConfigError naming a point that did not pass.
std::vector<Point> points_of(const std::vector<Input>& inputs);

// What a run measured at one message size (its summary's message_bytes, transfer_ns, delivered_ns;
// olink-message reports them, docs/exports.md).
struct Message {
  std::string origin;
  double bytes, transfer_ns, delivered_ns;
};
// The points of the inputs, each reporting a message (Message) and all of one system (fabric,
// topology, GPUs): ConfigError naming the point and the field otherwise, or if fewer than `sizes`
// message sizes are there.
struct MessageSweep {
  std::string fabric, topology;
  int gpus = 0;
  std::vector<Message> messages;  // in the inputs' order
  std::string inputs;             // the paths, for provenance
  std::string scenarios;          // the runs' scenarios, for provenance
};
MessageSweep message_sweep(const std::vector<Input>& inputs, std::size_t sizes, const std::string& format);

// ASTRA-sim's analytical network (network.yml) and system layer (system.json).
std::vector<File> astra_sim(const std::vector<Input>& inputs);
// nccl-tests' columns (size, time, algbw, busbw) as CSV, for point-to-point transfers.
std::vector<File> nccl_tests(const std::vector<Input>& inputs);
// htsim: a two-tier leaf-spine as an htsim fat-tree .topo (tiers, radices, link speeds and
// latencies, integers), per fabric of composed Lingyun ports (tb/export/fabrics.hpp).
std::vector<File> htsim_topo(const std::vector<Input>& inputs);
// ns3: the fabric as ns-3 HPCC's topology.txt and config.txt (scratch/third.cc), with a README of
// where each value comes from.
std::vector<File> ns3_config(const std::vector<Input>& inputs);

}  // namespace xy::exports
