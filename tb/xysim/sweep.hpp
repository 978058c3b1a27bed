// `xysim sweep SWEEP.yaml`: one scenario over a grid and/or a list of parameter values and seeds,
// each point a separate `xysim run` process (SystemC runs one simulation per process), N at a
// time; each point writes its own results, and the sweep merges them into sweep.csv (one row a
// point: parameters, seed, every summary leaf) and sweep.json. A failed point is reported and the
// others go on; running the sweep again skips the points already done. --backend slurm submits the
// points as one Slurm job array instead, each task running one point the same way (--point K).
//
// File format (every key checked, errors name file:line):
//   scenario: lingyun-fec-llr
//   seeds: [1, 2]                 # default [1]
//   set: {traffic.us: 20}         # for every point
//   grid:                         # every combination (the last key varies fastest)
//     port.errors.ber: [0, 1e-5, 1e-4]
//     fec_llr.design: [rs544, rs272_llr]
//   points:                       # and/or these points, each its own values
//     - {port.errors.ber: 1e-3}
//   slurm: {partition: batch, time: "00:10:00", args: [--mem=1G]}   # only for --backend slurm
//   expect_failures: true         # points are meant to fail (finding a limit): exit 0, failures counted
#pragma once
#include <string>

namespace xy {

struct SweepOptions {
  std::string file, out_dir = "sweep";
  int jobs = 0;                    // 0: local, every core; slurm, no limit
  std::string backend = "local";   // local | print (the commands, one a line) | slurm (one job array)
  int point = -1;                  // >= 0: run only this point (a task of the Slurm job array)
  bool force_memory = false;       // go on past the memory estimates (the sweep's and its points')
};

// Exit status: 0 when every point passed (or the file says expect_failures: true), 1 when some
// failed (the others still ran), 2 for a sweep file or options that cannot be used.
int sweep_command(const char* self, const SweepOptions& options);

}  // namespace xy
