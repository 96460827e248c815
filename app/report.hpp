// `schedsim report DIR`: figures and a Markdown summary, drawn by experiments/report.py
// (matplotlib + pandas), which this finds and runs with python3.
#pragma once

#include <string>

namespace schedsim {

// Where report.py is: $SCHEDSIM_REPORT_SCRIPT, else beside the executable, else
// ../experiments/ above it, else the source tree the binary was built from. Throws
// InputError naming the places tried.
std::string find_report_script(const std::string& executable);
// The same search for another script of experiments/ (e.g. ray_sweep.py), with its own
// environment variable.
std::string find_experiments_script(const std::string& file_name, const char* env_var, const std::string& executable);

// Which series the figures show: comma-separated policy labels ("" = all), and those
// drawn bold over the others.
struct ReportSelection {
  std::string policies;
  std::string highlight;
};

// Runs `python3 report.py DIR [--out OUT] [--policies ...] [--highlight ...]` and returns
// its exit status. Throws InputError when python3 cannot be started.
int run_report(const std::string& results_dir, const std::string& out_dir, const std::string& executable, const ReportSelection& selection = {});

}  // namespace schedsim
