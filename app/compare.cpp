#include "app/compare.hpp"

#include "base/svg_plot.hpp"
#include "base/error.hpp"
#include "base/text_checks.hpp"
#include "traces/csv.hpp"
#include "world/energy/energy.hpp"
#include "world/inference/service_meter.hpp"
#include "world/market/market_meter.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

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
      // Inside the measurement window (warm-up and drain excluded): see the header line.
      {"window util", [](const RunResult& r) { return fmt(r.summary.window.gpu_utilization, "%.3f"); }},
      {"window queue", [](const RunResult& r) { return fmt(r.summary.window.mean_queue_length, "%.1f"); }},
      {"makespan (h)", [](const RunResult& r) { return fmt(r.summary.makespan_s / 3600, "%.2f"); }},
  };
  return cols;
}

// The number at `path` in a results.json document; nullopt where a key is missing or the
// value is null (an older file, a model that is off).
std::optional<double> number_at(const nlohmann::ordered_json& j, std::initializer_list<const char*> path) {
  const nlohmann::ordered_json* v = &j;
  for (const char* key : path) {
    if (!v->is_object() || !v->contains(key)) return std::nullopt;
    v = &v->at(key);
  }
  return v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}

bool has_object(const nlohmann::ordered_json& j, const char* key) { return j.is_object() && j.contains(key) && j.at(key).is_object(); }

// A results.json key as its writer's field table names it (sim/output_fields.hpp), so that
// a renamed field fails here at once instead of reading as a value that is never there.
// (WorldMetric holds plain function pointers: the lambdas look the key up on each call.)
template <typename Record>
const char* table_key(const std::vector<ValueField<Record>>& fields, const char* name) {
  const ValueField<Record>* f = find_field(fields, name);
  if (!f) throw std::logic_error(std::string("results.json has no field '") + name + "' in its table");
  return f->name.c_str();  // the tables are static: the text outlives every caller
}

// Each run's results.json document: the world metrics are read from it (as sweep reads the files).
std::vector<nlohmann::ordered_json> results_of(const std::vector<RunResult>& runs) {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& r : runs) out.push_back(results_json(r, 0));
  return out;
}

}  // namespace

const std::vector<WorldMetric>& world_metrics() {
  using J = nlohmann::ordered_json;
  static const std::vector<WorldMetric> metrics = {
      // Facility energy (every device, held or idle, x PUE: docs/energy.md), with `energy:`.
      {"energy_kwh", "energy (kWh)", "%.2f", [](const J& j) { return has_object(j, "energy"); },
       [](const J& j) { return number_at(j, {"energy", table_key(energy_fields(), "energy_kwh")}); }},
      // The same per completed job: what the facility spent per unit of finished work.
      {"energy_kwh_per_job", "kWh/job", "%.3f", [](const J& j) { return has_object(j, "energy"); },
       [](const J& j) -> std::optional<double> {
         const auto kwh = number_at(j, {"energy", table_key(energy_fields(), "energy_kwh")});
         const auto done = number_at(j, {"summary", table_key(summary_fields(), "jobs_completed")});
         return kwh && done && *done > 0 ? std::optional<double>(*kwh / *done) : std::nullopt;
       }},
      // Electricity cost in the price series' currency (USD/MWh -> USD), with a price signal.
      {"electricity_usd", "electricity (USD)", "%.2f",
       [](const J& j) { return number_at(j, {"energy", table_key(energy_fields(), "cost_usd")}).has_value(); },
       [](const J& j) { return number_at(j, {"energy", table_key(energy_fields(), "cost_usd")}); }},
      // Emissions, with a carbon signal.
      {"co2_kg", "CO2 (kg)", "%.2f", [](const J& j) { return number_at(j, {"energy", table_key(energy_fields(), "co2_kg")}).has_value(); },
       [](const J& j) { return number_at(j, {"energy", table_key(energy_fields(), "co2_kg")}); }},
      // Useful / allocated device-time (docs/metrics.md): shown with the failures model,
      // whose checkpoints, restarts and lost work it measures.
      {"goodput", "goodput", "%.3f", [](const J& j) { return j.contains("config") && has_object(j.at("config"), "failures"); },
       [](const J& j) { return number_at(j, {"summary", table_key(summary_fields(), "goodput")}); }},
      // SLO violation minutes summed over every inference service.
      {"slo_violation_minutes", "SLO viol (min)", "%.1f", [](const J& j) { return j.contains("inference") && j.at("inference").is_array() && !j.at("inference").empty(); },
       [](const J& j) -> std::optional<double> {
         if (!j.contains("inference") || !j.at("inference").is_array() || j.at("inference").empty()) return std::nullopt;
         double minutes = 0;
         for (const auto& service : j.at("inference")) {
           const auto m = number_at(service, {table_key(service_fields(), "slo_violation_minutes")});
           if (!m) return std::nullopt;
           minutes += *m;
         }
         return minutes;
       }},
      // What jobs paid the providers for devices (on-demand, reserved, spot), with `market:`.
      {"compute_usd", "compute (USD)", "%.2f", [](const J& j) { return has_object(j, "market"); },
       [](const J& j) { return number_at(j, {"market", table_key(market_fields(), "compute_usd")}); }},
  };
  return metrics;
}

std::vector<std::size_t> active_world_metrics(const std::vector<nlohmann::ordered_json>& results) {
  std::vector<std::size_t> active;
  const auto& metrics = world_metrics();
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    if (std::any_of(results.begin(), results.end(), [&](const nlohmann::ordered_json& j) { return metrics[m].active(j); })) active.push_back(m);
  }
  return active;
}

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
                                        const std::vector<std::string>& policies, const RunOptions& options, const std::string& baseline) {
  // "all" (or nothing) = every registered policy that needs no argument and that the
  // scenario can run (price/carbon shifting needs its `signals:`, thermal-aware a thermal
  // model, duration-based policies an information level other than none).
  std::vector<std::string> specs;
  for (const auto& p : policies.empty() ? std::vector<std::string>{"all"} : policies) {
    if (p == "all") {
      for (const auto& info : registry.all()) {
        const bool thermal = (scenario.energy && scenario.energy->thermal) || (scenario.datacenters && scenario.datacenters->sites.front().thermal);
        if (info.needs_thermal && !thermal) continue;
        if (info.argument_option.empty() && !information_serves(scenario, registry, info.name)) continue;  // e.g. sjf under information: none
        if (info.argument_option.empty() && (!info.needs_signals || scenario.signals || (scenario.datacenters && scenario.datacenters->sites.front().signals))) specs.push_back(info.name);
      }
    } else {
      specs.push_back(p);
    }
  }
  std::vector<std::string> labels;
  for (const auto& spec : specs) {
    const ConfigNode node = ConfigNode::load_string(spec, "--policy " + spec);
    std::string label = policy_label(node);
    // "rl:dir/agent.pt" is labelled rl:agent.pt; its folder name has no path separator.
    if (node.is_scalar() && label.find(':') != std::string::npos) {
      const auto colon = label.find(':');
      label = label.substr(0, colon + 1) + std::filesystem::path(label.substr(colon + 1)).filename().string();
    }
    labels.push_back(label);
  }
  // The baseline is checked before anything is removed or run, so that a typo costs no
  // simulation and leaves the previous results in place.
  const std::size_t base = baseline_index(labels, baseline);
  // The previous comparison's tables go first: a failed or interrupted compare leaves no
  // table of another run (each policy's folder is cleared by its run).
  if (!options.out_dir.empty()) clear_output_folder(options.out_dir, {"comparison.csv", "comparison.md", "jct_cdf.svg"}, false);
  std::vector<RunResult> runs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ConfigNode node = ConfigNode::load_string(specs[i], "--policy " + specs[i]);
    const std::string& label = labels[i];
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
    write_file_atomically((std::filesystem::path(options.out_dir) / "comparison.md").string(),
                          comparison_header(runs, scenario.num_devices()) + "\n" + comparison_table(runs, true) + "\n" +
                              paired_table(runs, base, true));
    // Hours, as in the tables; a policy identical to an earlier one says so in the legend
    // (its line lies under the other's).
    const auto same = identical_rows(runs);
    std::vector<std::vector<double>> hours(runs.size());
    std::vector<CdfSeries> series;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      for (double v : runs[i].sorted_jct_s) hours[i].push_back(v / 3600);
      series.push_back({runs[i].policy_name + (same[i] ? " (= " + runs[*same[i]].policy_name + ")" : ""), &hours[i]});
    }
    write_file_atomically((std::filesystem::path(options.out_dir) / "jct_cdf.svg").string(),
                          cdf_svg(series, "job completion time (h, log scale)", "fraction of jobs", scenario.name.empty() ? "JCT CDF" : "JCT CDF: " + scenario.name));
  }
  return runs;
}

std::size_t baseline_index(const std::vector<std::string>& labels, const std::string& baseline) {
  if (baseline.empty() || labels.empty()) return 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == baseline) return i;
  }
  std::string list;
  for (const auto& l : labels) list += (list.empty() ? "" : ", ") + l;
  throw InputError("--baseline", "'" + baseline + "' is not one of the compared policies (" + list + ")");
}

std::string paired_table(const std::vector<RunResult>& runs, std::size_t baseline, bool markdown) {
  if (runs.size() < 2 || baseline >= runs.size() || !runs[baseline].summary.mean_jct_s) return "";
  // One seed: the same workload for every policy, so the difference is paired, but there
  // is no spread to give an interval; sweep's summary.csv has it over seeds.
  const double base_h = *runs[baseline].summary.mean_jct_s / 3600;
  const std::string base_name = terminal_safe(runs[baseline].policy_name);
  // The world metrics as ratios to the baseline's ("CO2 / fifo"): the question of a
  // carbon or cost study; "-" where the baseline's value is 0 or missing.
  const auto results = results_of(runs);
  const auto world = active_world_metrics(results);
  std::vector<std::string> header{"policy", "mean JCT - " + base_name + " (h)", "mean JCT / " + base_name};
  for (std::size_t m : world) {
    const std::string title = world_metrics()[m].title;
    header.push_back(title.substr(0, title.find(" (")) + " / " + base_name);
  }
  std::vector<std::vector<std::string>> rows{header};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto m = runs[i].summary.mean_jct_s;
    std::string diff = m ? fmt(*m / 3600 - base_h, "%+.3f") : "-";
    if (diff == "-0.000" || diff == "+0.000") diff = "0.000";  // below the table's resolution: the ratio says more
    rows.push_back({terminal_safe(runs[i].policy_name), diff, m && base_h > 0 ? fmt(*m / 3600 / base_h, "%.3f") : "-"});
    for (std::size_t w : world) {
      const auto x = world_metrics()[w].value(results[i]), b = world_metrics()[w].value(results[baseline]);
      rows.back().push_back(x && b && *b != 0 ? fmt(*x / *b, "%.3f") : "-");
    }
  }
  const std::size_t n = header.size();
  std::vector<std::size_t> width(n);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream out;
  out << "paired with " << base_name << " (same seed and workload; one seed, so no interval: a sweep over seeds gives the paired 95% CI in summary.csv)"
      << (markdown ? "\n\n" : "\n");
  auto line = [&](const std::vector<std::string>& v) {
    if (markdown) out << "| ";
    for (std::size_t c = 0; c < n; ++c) {
      const std::string pad(width[c] - v[c].size(), ' ');
      out << (c == 0 ? v[c] + pad : pad + v[c]) << (c + 1 < n ? (markdown ? " | " : "  ") : "");
    }
    out << (markdown ? " |\n" : "\n");
  };
  line(rows[0]);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < n; ++c) rule.push_back(std::string(width[c], '-'));
  if (markdown)
    for (std::size_t c = 1; c < n; ++c) rule[c].back() = ':';
  line(rule);
  for (std::size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  return out.str();
}

std::vector<std::optional<std::size_t>> identical_rows(const std::vector<RunResult>& runs) {
  // Equal summaries (every metric of results.json's summary, energy included) and the
  // same JCT of every completed job: the policy made the same decisions as an earlier row
  // on this workload (e.g. edf, priority or fair-share on jobs without deadlines,
  // priorities or users order them like fifo).
  std::vector<nlohmann::ordered_json> keys;
  for (const auto& r : runs) {
    keys.push_back(summary_json(r.summary));
    if (r.energy) keys.back()["energy"] = energy_json(*r.energy);
  }
  // And the other world metrics shown as columns (SLO minutes, compute cost): a row
  // marked "= NAME" must equal NAME's in every column.
  const auto results = results_of(runs);
  const auto world = active_world_metrics(results);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t m : world) {
      const auto v = world_metrics()[m].value(results[i]);
      keys[i]["world"][world_metrics()[m].name] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    }
  }
  std::vector<std::optional<std::size_t>> same(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t j = 0; j < i && !same[i]; ++j) {
      if (!same[j] && keys[i] == keys[j] && runs[i].sorted_jct_s == runs[j].sorted_jct_s) same[i] = j;
    }
  }
  return same;
}

std::string comparison_table(const std::vector<RunResult>& runs, bool markdown) {
  const auto& cols = columns();
  // Then the world metrics whose model is on (energy, cost, emissions, goodput, SLO).
  const auto results = results_of(runs);
  const auto world = active_world_metrics(results);
  std::vector<std::string> titles;
  for (const auto& c : cols) titles.push_back(c.title);
  for (std::size_t m : world) titles.push_back(world_metrics()[m].title);
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width(titles.size());
  for (std::size_t c = 0; c < titles.size(); ++c) width[c] = titles[c].size();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    cells.emplace_back();
    for (const auto& c : cols) cells.back().push_back(c.value(runs[i]));
    for (std::size_t m : world) cells.back().push_back(fmt(world_metrics()[m].value(results[i]), world_metrics()[m].format));
    for (std::size_t c = 0; c < titles.size(); ++c) width[c] = std::max(width[c], cells.back()[c].size());
  }
  // Rows equal to an earlier one end with "= NAME" (text) or an "identical to" column (Markdown).
  const auto same = identical_rows(runs);
  std::size_t marked = 0;
  for (const auto& s : same) marked += s ? 1 : 0;
  std::ostringstream out;
  auto row = [&](const std::vector<std::string>& values, const std::string& note) {
    if (markdown) out << "| ";
    for (std::size_t c = 0; c < values.size(); ++c) {
      const std::string pad(width[c] - values[c].size(), ' ');
      out << (c == 0 ? values[c] + pad : pad + values[c]);  // names left, numbers right
      if (c + 1 < values.size()) out << (markdown ? " | " : "  ");
    }
    if (markdown && marked) out << " | " << note;
    else if (!note.empty()) out << "  " << note;
    out << (markdown ? " |\n" : "\n");
  };
  row(titles, markdown && marked ? "identical to" : "");
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < titles.size(); ++c) rule.push_back(std::string(width[c], '-'));
  if (markdown) {
    rule[0].back() = '-';
    for (std::size_t c = 1; c < rule.size(); ++c) rule[c].back() = ':';
  }
  row(rule, markdown && marked ? "---" : "");
  for (std::size_t i = 0; i < cells.size(); ++i) row(cells[i], same[i] ? "= " + terminal_safe(runs[*same[i]].policy_name) : "");
  if (marked) {
    out << (markdown ? "\n" : "") << "= NAME: " << marked << " of " << runs.size()
        << " rows have results identical to NAME's (every summary metric and the sorted JCTs of all completed jobs): on this workload the policy acts as NAME\n";
  }
  return out.str();
}

std::string comparison_header(const std::vector<RunResult>& runs, int num_devices) {
  if (runs.empty()) return "";
  // The workload and its arrivals do not depend on the policy: the first run's numbers
  // hold for all (only the window's end under `end: last_completion` differs).
  const Summary& s = runs.front().summary;
  std::ostringstream out;
  out << "offered load " << fmt(s.offered_load, "%.3f") << " (realised: GPU-seconds the jobs demand at rate 1 / (" << num_devices
      << " GPUs x arrival span))\n";
  const WindowSummary& w = s.window;
  const bool same_end = std::all_of(runs.begin(), runs.end(), [&](const RunResult& r) { return r.summary.window.end_s == w.end_s; });
  const YAML::Node end = runs.front().resolved_config["metrics"]["window"]["end"];
  const bool until_last_completion = end.IsScalar() && end.Scalar() == "last_completion";
  out << "window: ";
  if (!w.start_s) {
    out << "none (fewer than " << w.warmup_jobs + 1 << " jobs arrived); window columns are empty\n";
  } else {
    out << fmt(*w.start_s / 3600, "%.2f") << " h to " << (same_end ? fmt(*w.end_s / 3600, "%.2f") + " h" : std::string("each policy's end"))
        << " (opens at the arrival of job " << w.warmup_jobs + 1 << " after " << w.warmup_jobs << " warm-up jobs; "
        << (until_last_completion ? "closes at the last completion)\n" : "closes at the last arrival: the drain is excluded)\n");
  }
  // What the schedulers may know (policies/information.hpp): the same for every row.
  out << "information: " << runs.front().information << '\n';
  return out.str();
}

namespace {
// comparison.csv's fixed columns after the policy: summary fields, and window fields
// prefixed "window_", each looked up in its record's field table (sim/metrics.hpp).
const std::vector<std::string>& comparison_summary_columns() {
  static const std::vector<std::string> names = {"jobs_completed", "mean_jct_s", "median_jct_s", "p95_jct_s", "p99_jct_s", "mean_queue_delay_s",
                                                 "mean_bounded_slowdown", "gpu_utilization", "makespan_s", "offered_load", "mean_queue_length",
                                                 "mean_jobs_in_system", "window_gpu_utilization", "window_mean_queue_length", "window_mean_jobs_in_system"};
  return names;
}

template <typename Record>
std::string csv_value(const ValueField<Record>& f, const Record& r) {
  const std::optional<double> v = f.value(r);
  if (f.kind == ValueField<Record>::Kind::kCount) return std::to_string(static_cast<std::uint64_t>(*v));
  return fmt(v, "%.17g");
}

std::string summary_csv_value(const std::string& name, const Summary& s) {
  if (const auto* f = find_field(summary_fields(), name)) return csv_value(*f, s);
  if (name.rfind("window_", 0) == 0) {
    if (const auto* f = find_field(window_fields(), name.substr(7))) return csv_value(*f, s.window);
  }
  throw std::logic_error("comparison.csv: no summary field '" + name + "'");
}
}  // namespace

std::string comparison_csv(const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "policy";
  for (const std::string& name : comparison_summary_columns()) out << ',' << name;
  // The world metrics whose model is on, after the fixed columns (none: the header and
  // rows keep their bytes).
  const auto results = results_of(runs);
  const auto world = active_world_metrics(results);
  for (std::size_t m : world) out << ',' << world_metrics()[m].name;
  out << '\n';
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    write_csv_field(out, r.policy_name);  // labels such as compose(order=las,placement=packed) hold commas
    for (const std::string& name : comparison_summary_columns()) out << ',' << summary_csv_value(name, r.summary);
    for (std::size_t m : world) out << ',' << fmt(world_metrics()[m].value(results[i]), "%.17g");
    out << '\n';
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
  line("offered load", fmt(s.offered_load, "%.4f"));
  line("mean queue / in system", fmt(s.mean_queue_length, "%.2f") + " / " + fmt(s.mean_jobs_in_system, "%.2f"));
  line("window GPU utilization", fmt(s.window.gpu_utilization, "%.4f"));
  line("window queue / in system", fmt(s.window.mean_queue_length, "%.2f") + " / " + fmt(s.window.mean_jobs_in_system, "%.2f"));
  if (s.checkpoint_gpu_hours > 0 || s.lost_gpu_hours > 0 || s.restart_gpu_hours > 0) {
    line("GPU-h ckpt/restart/lost", fmt(s.checkpoint_gpu_hours, "%.1f") + " / " + fmt(s.restart_gpu_hours, "%.1f") + " / " + fmt(s.lost_gpu_hours, "%.1f"));
  }
  line("goodput", fmt(s.goodput, "%.4f"));
  return out.str();
}

}  // namespace schedsim
