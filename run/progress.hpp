// Progress of long commands (`run`, `compare`, `sweep`, `train`) on stderr: one updating
// line on a terminal, and a plain line every few seconds otherwise (a batch job's log).
// Progress never touches an output file. Settings: docs/experiments.md#progress.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace schedsim {

// Seconds since a fixed instant; tests pass a fake one.
using ProgressClock = std::function<double()>;
double steady_clock_s();

struct ProgressStyle {
  bool terminal = false;   // one line rewritten in place (\r); else a new line every interval_s
  double interval_s = 10;  // seconds between plain lines; 0 = no progress at all
};

// isatty(stderr), and SCHEDSIM_PROGRESS_INTERVAL_S from the environment (seconds between
// plain lines, default 10; 0 turns progress off on a terminal too). A value that is not a
// number >= 0 is an InputError naming the variable.
ProgressStyle progress_style_from_environment();
ProgressStyle parse_progress_interval(const char* value, bool terminal);

// "1m05s", "2h03m"; negative or non-finite durations are shown as "0m00s".
std::string format_duration_s(double s);

// "42%  2100/5000 jobs  elapsed 1m05s  ETA 1m30s": done is clamped to [0, total], so the
// percentage never exceeds 100 and the ETA is never negative. total 0 = unknown (no
// percentage, no ETA).
std::string progress_text(double done, double total, const std::string& unit, double elapsed_s);

// The train bar: "[#####.....]  50%  step 8000/16000  400 steps/s  eval JCT 1.23 h  ETA 0m20s".
// The last update may end past total_steps (it collects whole rollouts, e.g. num_envs whole
// episodes), so the step shown is clamped to the total and the ETA to 0; the real count
// is in the final "trained N steps" line.
std::string train_bar_text(std::int64_t step, std::int64_t total, double elapsed_s, std::int64_t start_step, double eval_jct_s);

class ProgressReporter {
 public:
  ProgressReporter(std::string label, std::string unit, ProgressStyle style, std::FILE* out = stderr, ProgressClock clock = steady_clock_s);
  ~ProgressReporter();  // clears the terminal line
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;
  // Prints "label: progress_text  extra" when a line is due.
  void update(double done, double total, const std::string& extra = "");
  bool enabled() const { return style_.interval_s > 0; }

 private:
  std::string label_, unit_;
  ProgressStyle style_;
  std::FILE* out_;
  ProgressClock clock_;
  double start_s_, last_s_;
  double shown_done_ = 0;  // the percentage of a line never goes down
  std::size_t shown_width_ = 0;  // characters of the last terminal line
  bool printed_ = false;
};

}  // namespace schedsim
