#include "app/advise_output.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/svg_plot.hpp"
#include "base/signals.hpp"
#include "base/text_checks.hpp"

namespace schedsim {

namespace {

std::string g(double v) {  // round-trips a double in few characters, the same on every platform
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string utc(const AdvisorWorld& world, double sim_s) { return format_utc(world.origin_utc_us + std::llround(sim_s * 1e6)); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string plans_csv(const AdvisorWorld& world, const AdviseOutcome& outcome) {
  std::ostringstream o;
  o << "rank,plan,pareto,segments,start_utc,finish_utc,start_h,finish_h,devices,cost_usd,compute_cost_usd,electricity_cost_usd,energy_kwh,co2_kg,"
       "expected_reclaims,spot_loss_risk";
  for (int k = 1; k <= 2; ++k) {
    const std::string p = "seg" + std::to_string(k) + "_";
    o << ',' << p << "region," << p << "device_type," << p << "kind," << p << "provider," << p << "steps," << p << "start_h," << p << "end_h," << p
      << "lead_in_s," << p << "checkpoint_interval_s," << p << "expected_failures," << p << "expected_reclaims";
  }
  o << '\n';
  for (std::size_t i = 0; i < outcome.plans.size(); ++i) {
    const Plan& p = outcome.plans[i];
    o << i + 1 << ',' << csv_field(plan_label(world, p)) << ',' << (p.pareto ? 1 : 0) << ',' << p.segments.size() << ',' << utc(world, p.start_s) << ','
      << utc(world, p.finish_s) << ',' << g(p.start_s / 3600) << ',' << g(p.finish_s / 3600) << ',' << p.segments.front().devices << ',' << g(p.cost_usd)
      << ',' << g(p.compute_cost_usd) << ',' << g(p.electricity_cost_usd) << ',' << g(p.energy_kwh) << ',' << g(p.co2_kg) << ','
      << g(p.expected_reclaims) << ',' << g(p.spot_loss_risk);
    for (std::size_t k = 0; k < 2; ++k) {
      if (k >= p.segments.size()) {
        o << ",,,,,,,,,,,";
        continue;
      }
      const PlanSegment& s = p.segments[k];
      const OfferTerms& of = world.offers[static_cast<std::size_t>(s.offer)];
      o << ',' << csv_field(world.geography->site(of.site).name) << ',' << csv_field(of.device_type) << ',' << to_string(of.kind) << ','
        << csv_field(of.provider) << ',' << g(s.steps) << ',' << g(s.start_s / 3600) << ',' << g(s.end_s / 3600) << ',' << g(s.lead_in_s) << ','
        << g(s.checkpoint_interval_s) << ',' << g(s.expected_failures) << ',' << g(s.expected_reclaims);
    }
    o << '\n';
  }
  return o.str();
}

std::string no_feasible_plan_message(const AdviseOutcome& outcome) {
  std::string m = "no feasible plan among " + std::to_string(outcome.evaluated) + " candidates";
  for (std::size_t i = 0; i < outcome.rejected.size(); ++i) {
    m += (i ? "; " : ": ") + std::to_string(outcome.rejected[i].second) + " " + outcome.rejected[i].first;
  }
  // When every candidate failed on memory or batch, no deadline or budget helps: say what does.
  if (outcome.rejected.size() == 1 && outcome.rejected[0].first.find("(memory or batch)") != std::string::npos)
    return m + " (allow more devices in device_counts, within the global batch, or device types with more memory; "
               "LLM profiles of docs/parallelism.md are planned with model parallelism and sharding)";
  return m + " (loosen the deadline, budget_usd or carbon_cap_kg, or allow more regions, device types or counts)";
}

std::string plans_table(const AdvisorWorld& world, const AdviseOutcome& outcome, Objective objective, std::size_t top) {
  std::ostringstream o;
  o << outcome.evaluated << " candidate plans, " << outcome.plans.size() << " feasible";
  for (const auto& [why, n] : outcome.rejected) o << "; " << n << " " << why;
  o << "\n";
  if (outcome.plans.empty()) return o.str();
  std::size_t front = 0;
  for (const Plan& p : outcome.plans) front += p.pareto ? 1 : 0;
  o << "ranked by " << to_string(objective) << "; * = on the Pareto front of (finish, cost, emissions) (" << front << " plans)\n\n";
  const std::size_t n = top == 0 ? outcome.plans.size() : std::min(top, outcome.plans.size());
  std::vector<std::string> labels;
  std::size_t width = 4;
  for (std::size_t i = 0; i < n; ++i) {
    // Region, device and provider names come from the user's YAML: escaped for the
    // terminal here only (plans.csv keeps them as they are).
    labels.push_back(terminal_safe(plan_label(world, outcome.plans[i])));
    width = std::max(width, labels.back().size());
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%4s %-*s %-20s %-20s %9s %14s %11s %9s\n", "rank", static_cast<int>(width), "plan", "start (UTC)", "finish (UTC)", "run (h)",
                "cost (USD)", "CO2 (t)", "spot risk");
  o << buf;
  for (std::size_t i = 0; i < n; ++i) {
    const Plan& p = outcome.plans[i];
    std::snprintf(buf, sizeof buf, "%3zu%s %-*s %-20s %-20s %9.1f %14.0f %11.2f %9.3f\n", i + 1, p.pareto ? "*" : " ", static_cast<int>(width), labels[i].c_str(),
                  utc(world, p.start_s).c_str(), utc(world, p.finish_s).c_str(), (p.finish_s - p.start_s) / 3600, p.cost_usd, p.co2_kg / 1000,
                  p.spot_loss_risk);
    o << buf;
  }
  // The parallelism plans behind the shown rows (jobs that fit only with model
  // parallelism or sharding), one line per device type and count.
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < n; ++i) {
    for (const PlanSegment& s : outcome.plans[i].segments) {
      const std::string& type = world.offers[static_cast<std::size_t>(s.offer)].device_type;
      const std::string plan = world.parallelism_plan(type, s.devices);
      const std::string line = terminal_safe(type) + " x" + std::to_string(s.devices) + ": " + plan;
      if (!plan.empty() && std::find(shown.begin(), shown.end(), line) == shown.end()) shown.push_back(line);
    }
  }
  if (!shown.empty()) {
    o << "\nparallelism plans (docs/parallelism.md):\n";
    for (const std::string& line : shown) o << "  " << line << "\n";
  }
  return o.str();
}

std::string pareto_svg(const AdviseOutcome& outcome) {
  std::vector<ScatterPoint> points;
  for (const Plan& p : outcome.plans) points.push_back(ScatterPoint{p.finish_s / 3600, p.cost_usd, p.co2_kg / 1000, p.pareto});
  return scatter_svg(points, "expected finish (hours after time 0)", "cost (USD)", "CO2 (t)", "advisor: feasible plans and the Pareto front");
}

}  // namespace schedsim
