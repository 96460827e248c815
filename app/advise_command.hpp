// `schedsim advise JOB.yaml`: the compute advisor on the command line (docs/market.md).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace schedsim {

struct AdviseCliOptions {
  std::string job;                 // job YAML file
  std::string objective = "cost";  // cost | finish | emissions
  std::size_t top = 10;            // table rows (0 = all)
  std::string out = "results/advise";
  bool plot = false;               // also OUT/pareto.svg
  bool quiet = false;              // no table
};

// `schedsim advise`: plans the job, prints the table to `table_out`, writes OUT/plans.csv
// (and OUT/pareto.svg). Throws InputError for a bad job file and, writing nothing, when no
// plan is feasible.
void run_advise_cli(const AdviseCliOptions& options, std::ostream& table_out);

}  // namespace schedsim
