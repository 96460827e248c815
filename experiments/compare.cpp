#include "experiments/compare.hpp"

#include "experiments/svg_plot.hpp"
#include "sim/text_checks.hpp"
#include "traces/csv.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace schedsim {
namespace {

std::string fmt(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

std::string fmt(double v, const char* format) { return fmt(std::optional<double>(v), format); }

struct Column {
  const char* title;
  std::string (*value)(const RunResult&);
};

const std::vector<Column>& columns() {
  static const std::vector<Column> cols = {
      // Labels hold user text (option values): escaped, so a label cannot rewrite the terminal.
      {"policy", [](const RunResult& r) { return terminal_safe(r.policy_name); }},
      {"jobs", [](const RunResult& r) { return std::to_string(r.summary.jobs_completed); }},
      {"mean JCT (h)", [](const RunResult& r) { return fmt(r.summary.mean_jct_s ? *r.summary.mean_jct_s / 3600 : std::optional<double>(), "%.3f"); }},
      {"median JCT (h)", [](const RunResult& r) { return fmt(r.summary.median_jct_s ? *r.summary.median_jct_s / 3600 : std::optional<double>(), "%.3f"); }},
      {"p95 JCT (h)", [](const RunResult& r) { return fmt(r.summary.p95_jct_s ? *r.summary.p95_jct_s / 3600 : std::optional<double>(), "%.3f"); }},
      {"p99 JCT (h)", [](const RunResult& r) { return fmt(r.summary.p99_jct_s ? *r.summary.p99_jct_s / 3600 : std::optional<double>(), "%.3f"); }},
      {"mean wait (h)", [](const RunResult& r) { return fmt(r.summary.mean_queue_delay_s ? *r.summary.mean_queue_delay_s / 3600 : std::optional<double>(), "%.3f"); }},
      {"bounded slowdown", [](const RunResult& r) { return fmt(r.summary.mean_bounded_slowdown, "%.2f"); }},
      {"GPU util", [](const RunResult& r) { return fmt(r.summary.gpu_utilization, "%.3f"); }},
      {"makespan (h)", [](const RunResult& r) { return fmt(r.summary.makespan_s / 3600, "%.2f"); }},
  };
  return cols;
}

}  // namespace

std::string policy_label(const ConfigNode& node) {
  // A policy is a name ("sjf") or a YAML map ("{name: fifo, placement: packed}"),
  // labelled by its name and the options it sets: "fifo(placement=packed)".
  std::string label = node.is_map() ? node.child("name").as_string() : node.as_string();
  if (node.is_map()) {
    std::string options_text;
    for (const auto& key : node.keys()) {
      if (key == "name") continue;
      const ConfigNode value = node.child(key);
      std::string text;
      if (value.is_scalar()) {
        text = value.as_string();
      } else {  // a nested map or list (e.g. a shifting policy's base), in flow style
        YAML::Emitter e;
        e << YAML::Flow << value.yaml();
        text = e.c_str();
      }
      options_text += (options_text.empty() ? "" : ",") + key + "=" + text;
    }
    if (!options_text.empty()) label += "(" + options_text + ")";
  }
  return label;
}

std::vector<RunResult> compare_policies(const ScenarioConfig& scenario, const PolicyRegistry& registry,
                                        const std::vector<std::string>& policies, const RunOptions& options) {
  // The previous comparison's tables go first: a failed or interrupted compare leaves no
  // table of another run (each policy's folder is cleared by its run).
  if (!options.out_dir.empty()) clear_output_folder(options.out_dir, {"comparison.csv", "comparison.md", "jct_cdf.svg"}, false);
  // "all" (or nothing) = every registered policy that needs no argument and that the
  // scenario can run (price/carbon shifting needs its `signals:`, thermal-aware a thermal model).
  std::vector<std::string> specs;
  for (const auto& p : policies.empty() ? std::vector<std::string>{"all"} : policies) {
    if (p == "all") {
      for (const auto& info : registry.all()) {
        const bool thermal = (scenario.energy && scenario.energy->thermal) || (scenario.datacenters && scenario.datacenters->sites.front().thermal);
        if (info.needs_thermal && !thermal) continue;
        if (info.argument_option.empty() && (!info.needs_signals || scenario.signals || (scenario.datacenters && scenario.datacenters->sites.front().signals))) specs.push_back(info.name);
      }
    } else {
      specs.push_back(p);
    }
  }
  std::vector<RunResult> runs;
  for (const auto& spec : specs) {
    const ConfigNode node = ConfigNode::load_string(spec, "--policy " + spec);
    std::string label = policy_label(node);
    // "rl:dir/agent.pt" is labelled rl:agent.pt; its folder name has no path separator.
    if (node.is_scalar() && label.find(':') != std::string::npos) {
      const auto colon = label.find(':');
      label = label.substr(0, colon + 1) + std::filesystem::path(label.substr(colon + 1)).filename().string();
    }
    std::string folder = label;
    for (auto& c : folder)
      if (c == '/' || c == '\\' || c == ':') c = '_';
    RunOptions per_run = options;
    const std::string progress_label = "compare " + std::to_string(runs.size() + 1) + "/" + std::to_string(specs.size()) + " " + label;
    per_run.progress_label = progress_label.c_str();
    if (!options.out_dir.empty()) per_run.out_dir = (std::filesystem::path(options.out_dir) / folder).string();
    runs.push_back(run_scenario(scenario, registry, per_run, &node.yaml()));
    runs.back().policy_name = label;
  }
  if (!options.out_dir.empty()) {
    write_file_atomically((std::filesystem::path(options.out_dir) / "comparison.csv").string(), comparison_csv(runs));
    write_file_atomically((std::filesystem::path(options.out_dir) / "comparison.md").string(), comparison_table(runs, true));
    std::vector<CdfSeries> series;
    for (const auto& r : runs) series.push_back({r.policy_name, &r.sorted_jct_s});
    write_file_atomically((std::filesystem::path(options.out_dir) / "jct_cdf.svg").string(),
                          cdf_svg(series, "Job completion time (s, log scale)", "Fraction of jobs", scenario.name.empty() ? "JCT CDF" : "JCT CDF: " + scenario.name));
  }
  return runs;
}

std::string comparison_table(const std::vector<RunResult>& runs, bool markdown) {
  const auto& cols = columns();
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width(cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) width[c] = std::string(cols[c].title).size();
  for (const auto& r : runs) {
    cells.emplace_back();
    for (std::size_t c = 0; c < cols.size(); ++c) {
      cells.back().push_back(cols[c].value(r));
      width[c] = std::max(width[c], cells.back().back().size());
    }
  }
  std::ostringstream out;
  auto row = [&](const std::vector<std::string>& values) {
    if (markdown) out << "| ";
    for (std::size_t c = 0; c < values.size(); ++c) {
      const std::string pad(width[c] - values[c].size(), ' ');
      out << (c == 0 ? values[c] + pad : pad + values[c]);  // names left, numbers right
      if (c + 1 < values.size()) out << (markdown ? " | " : "  ");
    }
    out << (markdown ? " |\n" : "\n");
  };
  std::vector<std::string> titles;
  for (const auto& c : cols) titles.push_back(c.title);
  row(titles);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < cols.size(); ++c) rule.push_back(std::string(width[c], '-'));
  if (markdown) {
    rule[0].back() = '-';
    for (std::size_t c = 1; c < rule.size(); ++c) rule[c].back() = ':';
  }
  row(rule);
  for (const auto& r : cells) row(r);
  return out.str();
}

std::string comparison_csv(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "policy,jobs_completed,mean_jct_s,median_jct_s,p95_jct_s,p99_jct_s,mean_queue_delay_s,mean_bounded_slowdown,gpu_utilization,makespan_s\n";
  for (const auto& r : runs) {
    const Summary& s = r.summary;
    write_csv_field(out, r.policy_name);  // labels such as compose(order=las,placement=packed) hold commas
    out << ',' << s.jobs_completed << ',' << fmt(s.mean_jct_s, "%.17g") << ',' << fmt(s.median_jct_s, "%.17g") << ','
        << fmt(s.p95_jct_s, "%.17g") << ',' << fmt(s.p99_jct_s, "%.17g") << ',' << fmt(s.mean_queue_delay_s, "%.17g") << ','
        << fmt(s.mean_bounded_slowdown, "%.17g") << ',' << fmt(s.gpu_utilization, "%.17g") << ',' << fmt(s.makespan_s, "%.17g") << '\n';
  }
  return out.str();
}

std::string summary_table(const RunResult& run) {
  const Summary& s = run.summary;
  std::ostringstream out;
  auto line = [&](const char* k, const std::string& v) { out << "  " << k << std::string(26 - std::string(k).size(), ' ') << v << '\n'; };
  line("policy", terminal_safe(run.policy_name));
  line("jobs completed", std::to_string(s.jobs_completed) + " of " + std::to_string(s.jobs_arrived) + " arrived");
  if (s.jobs_dropped_oversized) line("jobs dropped (oversized)", std::to_string(s.jobs_dropped_oversized));
  if (s.jobs_failed || s.jobs_killed) line("jobs failed / killed", std::to_string(s.jobs_failed) + " / " + std::to_string(s.jobs_killed) + " (as recorded)");
  if (s.restarts_loss_spike || s.restarts_device_failure) {
    line("restarts spike / failure", std::to_string(s.restarts_loss_spike) + " / " + std::to_string(s.restarts_device_failure));
  }
  line("mean JCT", fmt(s.mean_jct_s, "%.1f s"));
  line("median / p95 / p99 JCT", fmt(s.median_jct_s, "%.1f") + " / " + fmt(s.p95_jct_s, "%.1f") + " / " + fmt(s.p99_jct_s, "%.1f s"));
  line("mean queue delay", fmt(s.mean_queue_delay_s, "%.1f s"));
  line("mean bounded slowdown", fmt(s.mean_bounded_slowdown, "%.3f"));
  line("GPU utilization", fmt(s.gpu_utilization, "%.4f"));
  line("makespan", fmt(s.makespan_s, "%.1f s"));
  if (s.checkpoint_gpu_hours > 0 || s.lost_gpu_hours > 0 || s.restart_gpu_hours > 0) {
    line("GPU-h ckpt/restart/lost", fmt(s.checkpoint_gpu_hours, "%.1f") + " / " + fmt(s.restart_gpu_hours, "%.1f") + " / " + fmt(s.lost_gpu_hours, "%.1f"));
  }
  line("goodput", fmt(s.goodput, "%.4f"));
  return out.str();
}

}  // namespace schedsim
