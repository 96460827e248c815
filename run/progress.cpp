#include "run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "base/error.hpp"

namespace schedsim {

double steady_clock_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

ProgressStyle parse_progress_interval(const char* value, bool terminal) {
  ProgressStyle style;
  style.terminal = terminal;
  if (value == nullptr || *value == '\0') return style;
  char* end = nullptr;
  const double v = std::strtod(value, &end);
  if (end == value || *end != '\0' || !std::isfinite(v) || v < 0)
    throw InputError("SCHEDSIM_PROGRESS_INTERVAL_S", std::string("must be a number of seconds >= 0 (0 turns progress off), got '") + value + "'");
  style.interval_s = v;
  return style;
}

ProgressStyle progress_style_from_environment() {
  return parse_progress_interval(std::getenv("SCHEDSIM_PROGRESS_INTERVAL_S"), ::isatty(STDERR_FILENO) != 0);
}

std::string format_duration_s(double s) {
  if (!std::isfinite(s) || s < 0) s = 0;
  const long long t = static_cast<long long>(s + 0.5);
  char buf[48];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  return buf;
}

std::string progress_text(double done, double total, const std::string& unit, double elapsed_s) {
  char buf[160];
  const std::string elapsed = format_duration_s(elapsed_s);
  if (!(total > 0)) {
    std::snprintf(buf, sizeof buf, "%.0f %s  elapsed %s", std::max(0.0, done), unit.c_str(), elapsed.c_str());
    return buf;
  }
  done = std::clamp(done, 0.0, total);
  const std::string eta = done >= total ? format_duration_s(0) : done > 0 ? format_duration_s(elapsed_s * (total - done) / done) : "?";
  std::snprintf(buf, sizeof buf, "%3.0f%%  %.0f/%.0f %s  elapsed %s  ETA %s", std::floor(100.0 * done / total), done, total, unit.c_str(), elapsed.c_str(),
                eta.c_str());
  return buf;
}

std::string train_bar_text(std::int64_t step, std::int64_t total, double elapsed_s, std::int64_t start_step, double eval_jct_s) {
  const std::int64_t shown = std::clamp<std::int64_t>(step, 0, std::max<std::int64_t>(total, 0));
  const double f = total > 0 ? static_cast<double>(shown) / static_cast<double>(total) : 1.0;
  const int width = 30, filled = static_cast<int>(f * width);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  const double rate = elapsed_s > 0 ? static_cast<double>(step - start_step) / elapsed_s : 0.0;
  const std::string eta = shown >= total ? format_duration_s(0) : rate > 0 ? format_duration_s(static_cast<double>(total - shown) / rate) : "?";
  char jct[32] = "-";
  if (std::isfinite(eval_jct_s)) std::snprintf(jct, sizeof jct, "%.4g", eval_jct_s / 3600);
  char buf[200];
  std::snprintf(buf, sizeof buf, "[%s] %3.0f%%  step %lld/%lld  %.0f steps/s  eval JCT %s h  ETA %s", bar.c_str(), std::floor(100 * f),
                static_cast<long long>(shown), static_cast<long long>(total), rate, jct, eta.c_str());
  return buf;
}

ProgressReporter::ProgressReporter(std::string label, std::string unit, ProgressStyle style, std::FILE* out, ProgressClock clock)
    : label_(std::move(label)), unit_(std::move(unit)), style_(style), out_(out), clock_(std::move(clock)), start_s_(clock_()), last_s_(start_s_) {}

ProgressReporter::~ProgressReporter() {
  if (printed_ && style_.terminal) {
    std::fprintf(out_, "\r%*s\r", static_cast<int>(shown_width_), "");
    std::fflush(out_);
  }
}

void ProgressReporter::update(double done, double total, const std::string& extra) {
  if (!enabled()) return;
  const double now = clock_();
  // A terminal line from the first second on, twice a second; a log line every interval.
  const double first = style_.terminal ? 1.0 : style_.interval_s, every = style_.terminal ? 0.5 : style_.interval_s;
  if (now - start_s_ < first || (printed_ && now - last_s_ < every)) return;
  last_s_ = now;
  shown_done_ = std::max(shown_done_, done);
  std::string line = label_ + ": " + progress_text(shown_done_, total, unit_, now - start_s_);
  if (!extra.empty()) line += "  " + extra;
  // Padded to the previous line's width only: a fixed width would wrap a narrow terminal.
  if (style_.terminal) std::fprintf(out_, "\r%-*s", static_cast<int>(std::max(shown_width_, line.size())), line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  shown_width_ = line.size();
  printed_ = true;
}

}  // namespace schedsim
