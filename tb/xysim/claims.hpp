// `xysim claims`: the seed claims of SPEC §1 (C1-C13) against what the scenarios measure. Runs
// every scenario a claim needs, each a separate `xysim run` process, N at a time, reads the
// figures from each run's results.json and prints one table: the seed's figure, the measured
// figures, a verdict by a rule written per claim (reproduced / refuted / not modelled) and the
// commands that reproduce the row. The claims are data, in tb/xysim/claims.cpp.
#pragma once
#include <string>
#include <vector>

namespace xy {

struct ClaimsOptions {
  std::string out_dir;              // "" = write nothing (the runs go to a temporary directory)
  int jobs = 0;                     // 0 = every core
  std::vector<std::string> only;    // claim ids, e.g. C1 C12; empty = every claim
};

// Exit status: 0 when every run succeeded (a refuted claim is a result, not a failure), 1 when a
// run failed (its rows say "failed" with its error line), 2 for options that cannot be used.
int claims_command(const char* self, const ClaimsOptions& options);

}  // namespace xy
