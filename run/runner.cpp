#include "run/runner.hpp"

#include "run/jobs_csv_writer.hpp"
#include "run/created_folders.hpp"
#include "run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "run/ledger.hpp"
#include "serving/request_service.hpp"
#include "base/sha256.hpp"
#include "scenario/simulation_setup.hpp"
#include "base/error.hpp"
#include "sim/interrupt.hpp"
#include "run/job_columns.hpp"
#include "sim/invariant_checker.hpp"
#include "traces/csv.hpp"
#include "traces/temp_files.hpp"

namespace schedsim {
namespace fs = std::filesystem;

namespace {

const char* kVersion = SCHEDSIM_VERSION;

// RunOptions::job_columns: the jobs.csv records as typed columns.
class JobColumnsCollector : public Observer {
 public:
  JobColumnsCollector(JobColumns& out, EnergyMeter* energy, std::uint64_t expected_jobs) : out_(out), energy_(energy) {
    out_.reserve(expected_jobs);
  }
  void on_job_end(const JobState& j) override { out_.append(j, energy_ ? &energy_->use_of_ended(j) : nullptr); }
  void snapshot(SnapshotArchive& /*ar*/) override {}

 private:
  JobColumns& out_;
  EnergyMeter* energy_;
};

// `--timeline`: the system's state as an exact step function (one row per instant at
// which it changed, after all events of that instant) and every placement of every job.
class TimelineWriter : public Observer {
 public:
  TimelineWriter(std::ostream& timeline, std::ostream& allocations, int num_devices)
      : timeline_(timeline), allocations_(allocations), num_devices_(num_devices) {
    timeline_ << "time_s,queue_length,running_jobs,busy_devices\n";
    allocations_ << "job_id,start_s,end_s,devices\n";
  }
  void after_event(const Simulator& sim) override {
    if (sim.now() != pending_.time) flush();
    // Busy: held by running jobs (devices bound to waiting jobs are not free, yet idle).
    pending_ = Row{sim.now(), sim.num_pending(), sim.num_running(), num_devices_ - sim.cluster_state().free_devices() - sim.bound_devices_total()};
    // A placement ends when its job ends, is preempted or moves (new device set).
    ++epoch_;
    for (JobSlot slot = sim.first_running(); slot != kNoJob; slot = sim.job(slot).next_in_list) {
      const JobState& j = sim.job(slot);
      auto it = open_.find(slot);
      if (it != open_.end() && (it->second.job_id != j.spec.id || it->second.devices != j.devices)) {
        close(it->second, sim.now());
        open_.erase(it);
        it = open_.end();
      }
      if (it == open_.end()) it = open_.emplace(slot, Segment{j.spec.id, sim.now(), j.devices, 0}).first;
      it->second.epoch = epoch_;
    }
    for (auto it = open_.begin(); it != open_.end();) {
      if (it->second.epoch != epoch_) {
        close(it->second, sim.now());
        it = open_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Writes the last instant's row and closes what is still open (nothing, after a full run).
  void finish(Tick now) {
    flush();
    for (auto& [slot, seg] : open_) close(seg, now);
    open_.clear();
  }
  void snapshot(SnapshotArchive& ar) override {
    ar(pending_.time, pending_.queue, pending_.running, pending_.busy, last_.time, last_.queue, last_.running, last_.busy, written_any_, epoch_);
    std::uint64_t n = open_.size();
    ar(n);
    if (ar.loading()) open_.clear();
    auto it = open_.begin();
    for (std::uint64_t i = 0; i < n; ++i) {
      JobSlot slot = ar.loading() ? 0 : it->first;
      Segment seg = ar.loading() ? Segment{} : it->second;
      ar(slot, seg.job_id, seg.start, seg.devices, seg.epoch);
      if (ar.loading()) open_.emplace(slot, std::move(seg));
      else ++it;
    }
  }

 private:
  struct Row {
    Tick time;
    std::size_t queue = 0, running = 0;
    int busy = 0;
    bool same_state(const Row& o) const { return queue == o.queue && running == o.running && busy == o.busy; }
  };
  struct Segment {
    std::string job_id;
    Tick start;
    std::vector<DeviceId> devices;
    std::uint64_t epoch;
  };
  void flush() {
    if (pending_.time < Tick() || (written_any_ && pending_.same_state(last_))) return;
    timeline_ << format_seconds(pending_.time) << ',' << pending_.queue << ',' << pending_.running << ',' << pending_.busy << '\n';
    last_ = pending_;
    written_any_ = true;
  }
  void close(const Segment& seg, Tick end) {
    write_csv_field(allocations_, seg.job_id);
    allocations_ << ',' << format_seconds(seg.start) << ',' << format_seconds(end) << ',';
    for (std::size_t i = 0; i < seg.devices.size(); ++i) allocations_ << (i ? " " : "") << seg.devices[i];
    allocations_ << '\n';
  }
  std::ostream& timeline_;
  std::ostream& allocations_;
  int num_devices_;
  Row pending_{Tick::from_us(-1)}, last_;
  bool written_any_ = false;
  std::map<JobSlot, Segment> open_;
  std::uint64_t epoch_ = 0;
};

// "run:  24%  1200/5000 jobs  elapsed 0m12s  ETA 0m38s  simulated 3.2 d" (under 80 columns,
// so a terminal line does not wrap; experiments/progress.hpp); the clock is read once
// every 4096 events.
class ProgressLine : public Observer {
 public:
  ProgressLine(const std::string& label, std::uint64_t total_jobs, ProgressStyle style) : total_(total_jobs), reporter_(label, "jobs", style) {}
  void after_event(const Simulator& sim) override {
    if ((++events_ & 4095) != 0) return;
    char extra[48];
    std::snprintf(extra, sizeof extra, "simulated %.1f d", sim.now().seconds() / 86400.0);
    const SimulatorStats& st = sim.stats();
    reporter_.update(static_cast<double>(st.jobs_completed + st.jobs_dropped_oversized), static_cast<double>(total_), extra);
  }

 private:
  std::uint64_t total_;
  ProgressReporter reporter_;
  std::uint64_t events_ = 0;
};

nlohmann::ordered_json opt(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); }

// Removes the temporary files unless the run got to the end.
struct TempFiles {
  std::vector<std::string> paths;
  bool keep = false;
  ~TempFiles() {
    if (keep) return;
    for (const auto& p : paths) {
      std::error_code ec;
      fs::remove(p, ec);
    }
  }
};

std::string temp_name(const std::string& path) { return path + ".partial-" + std::to_string(::getpid()); }


}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "cannot write the file (is the folder writable?)");
    out << content;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError(path, "write failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path, "cannot rename the finished file into place: " + ec.message());
  }
}

const std::vector<std::string>& run_result_files() {
  static const std::vector<std::string> kFiles{"results.json", "jobs.csv", "timeline.csv", "allocations.csv", "ledger.csv"};
  return kFiles;
}

namespace {
// The writer's id in "NAME.partial-PID" (write_file_atomically, a run's streamed files).
std::optional<long> partial_file_pid(const std::string& name) {
  const auto at = name.rfind(".partial-");
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::optional<long> pid = pid_after_prefix(name.substr(at), ".partial-");
  if (!pid || name.find('-', at + 9) != std::string::npos) return std::nullopt;
  return pid;
}
}  // namespace

void remove_unfinished_rows(const std::string& dir) {
  remove_files_of_dead_processes(dir, partial_file_pid);
  std::error_code ec;
  for (const char* f : {"jobs.csv", "timeline.csv", "allocations.csv"}) fs::remove(fs::path(dir) / (std::string(f) + ".interrupted"), ec);
}

void clear_output_folder(const std::string& dir, const std::vector<std::string>& result_files, bool keep_resumable_rows) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const std::string& f : result_files) {
    const fs::path p = fs::path(dir) / f;
    if (fs::is_regular_file(fs::symlink_status(p, ec))) fs::remove(p, ec);
  }
  if (!keep_resumable_rows) remove_unfinished_rows(dir);
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) {
    throw InputError(option, "is empty; give an output folder or file (an unset shell variable, as in --out \"$OUT\", gives an empty path)");
  }
}

nlohmann::ordered_json yaml_to_json(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return nullptr;
  if (node.IsSequence()) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& item : node) arr.push_back(yaml_to_json(item));
    return arr;
  }
  if (node.IsMap()) {
    auto obj = nlohmann::ordered_json::object();
    for (const auto& kv : node) obj[kv.first.Scalar()] = yaml_to_json(kv.second);
    return obj;
  }
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // explicitly quoted in the document: a string
  std::int64_t i = 0;
  double d = 0;
  bool b = false;
  // Integers as configs read them (no octal 0100, no 0x10: those stay the text written).
  const std::string not_int = parse_decimal_int(s, i);
  if (not_int.empty()) return i;
  if (not_int.rfind("expected an integer", 0) != 0) return s;
  if (YAML::convert<double>::decode(node, d) && std::isfinite(d)) return d;
  if (YAML::convert<bool>::decode(node, b)) return b;
  return s;
}

namespace {
// One record's fields as JSON, from its field table (sim/output_fields.hpp).
template <typename Record>
nlohmann::ordered_json fields_json(const std::vector<ValueField<Record>>& fields, const Record& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const ValueField<Record>& f : fields) {
    if (!f.in(r)) continue;
    const std::optional<double> v = f.value(r);
    if (f.kind == ValueField<Record>::Kind::kCount) j[f.name] = static_cast<std::uint64_t>(*v);
    else j[f.name] = opt(v);
  }
  return j;
}
}  // namespace

nlohmann::ordered_json summary_json(const Summary& s) {
  nlohmann::ordered_json j = fields_json(summary_fields(), s);
  j["window"] = fields_json(window_fields(), s.window);  // the measurement window (docs/metrics.md#measurement-window)
  return j;
}

// results.json's world sections: every number comes from its meter's field table
// (energy_fields(), market_fields(), thermal_site_fields(), service_fields(), ...); the
// writer only nests the objects and per-site arrays.
nlohmann::ordered_json energy_json(const EnergyTotals& e) {
  nlohmann::ordered_json j = fields_json(energy_fields(), e);
  j["jobs"] = fields_json(energy_use_fields(), e.jobs);
  j["idle_devices"] = fields_json(energy_use_fields(), e.idle);
  if (!e.by_site.empty()) {  // several datacenters: facility use per site, in config order
    auto sites = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < e.by_site.size(); ++i) {
      nlohmann::ordered_json site;
      site["name"] = e.site_names[i];
      site.update(fields_json(energy_use_fields(), e.by_site[i]));
      sites.push_back(site);
    }
    j["by_datacenter"] = sites;
  }
  return j;
}

namespace {
// results.json -> market.ledger: what the ledger's rows add up to (run/ledger.hpp).
const std::vector<ValueField<LedgerTotals>>& ledger_fields() {
  using F = ValueField<LedgerTotals>;
  using T = LedgerTotals;
  static const std::vector<F> fields = {
      {"rows", "", F::Kind::kCount, [](const T& t) { return std::optional<double>(static_cast<double>(t.rows)); }, nullptr},
      {"device_hours", "h", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.device_h); }, nullptr},
      {"energy_kwh", "kWh", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.energy_kwh); }, nullptr},
      {"electricity_usd", "USD", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.electricity_usd); }, nullptr},
      {"compute_usd", "USD", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.compute_usd); }, nullptr},
      {"co2_kg", "kg", F::Kind::kReal, [](const T& t) { return std::optional<double>(t.co2_kg); }, nullptr},
  };
  return fields;
}
}  // namespace

nlohmann::ordered_json market_json(const MarketTotals& m, const SimulatorStats& stats) {
  nlohmann::ordered_json j = fields_json(market_fields(), MarketReport{&m, &stats});
  nlohmann::ordered_json kinds;
  for (PriceKind k : {PriceKind::kOnDemand, PriceKind::kReserved, PriceKind::kSpot})
    kinds[to_string(k)] = fields_json(market_use_fields(), m.by_kind[static_cast<int>(k)]);
  j["by_kind"] = kinds;
  auto named = [](const std::vector<std::string>& names, const std::vector<MarketUse>& uses) {
    auto list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < uses.size(); ++i) {
      nlohmann::ordered_json e;
      e["name"] = names[i];
      e.update(fields_json(market_use_fields(), uses[i]));
      list.push_back(e);
    }
    return list;
  };
  j["by_provider"] = named(m.provider_names, m.by_provider);
  j["by_tenant"] = named(m.tenants, m.by_tenant);
  j["ledger"] = fields_json(ledger_fields(), ledger_totals(m.settlement));
  return j;
}

nlohmann::ordered_json thermal_json(const EnergyTotals& e, const std::vector<ThermalSiteTotals>& sites) {
  nlohmann::ordered_json j = fields_json(energy_thermal_fields(), e);
  auto list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < sites.size(); ++i) {
    ThermalSiteReport report;
    report.thermal = &sites[i];
    report.facility_energy_kwh = e.by_site.empty() ? e.facility.energy_kwh : e.by_site[i].energy_kwh;
    report.it_energy_kwh = e.site_it_kwh[i];
    report.cooling_energy_kwh = e.site_cooling_kwh[i];
    nlohmann::ordered_json site;
    site["name"] = sites[i].name;
    site.update(fields_json(thermal_site_fields(), report));
    list.push_back(site);
  }
  j["by_datacenter"] = list;
  return j;
}

namespace {
// results.json -> inference[i] (docs/energy.md#inference-services).
nlohmann::ordered_json service_json(const ServiceMetrics& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j.update(fields_json(service_fields(), m));
  if (m.requests) {
    const RequestLevelTotals& t = *m.requests;
    nlohmann::ordered_json r = fields_json(request_count_fields(), t);
    r["ttft"] = fields_json(request_latency_fields(), t.ttft);
    r["tpot"] = fields_json(request_latency_fields(), t.tpot);
    r["e2e"] = fields_json(request_latency_fields(), t.e2e);
    r.update(fields_json(request_rate_fields(), t));
    j["requests"] = r;
  }
  return j;
}
}  // namespace

nlohmann::ordered_json results_json(const RunResult& r, std::uint64_t seed) {
  nlohmann::ordered_json j;
  j["schedsim_version"] = kVersion;
  j["seed"] = seed;
  j["policy"] = r.policy_name;
  j["information"] = r.information;
  j["summary"] = summary_json(r.summary);
  j["energy"] = r.energy ? energy_json(*r.energy) : nlohmann::ordered_json(nullptr);
  if (r.market) j["market"] = market_json(*r.market, r.stats);
  if (r.energy && r.energy->thermal) j["energy"]["thermal"] = thermal_json(*r.energy, r.thermal);
  if (!r.inference.empty()) {  // with services, under every policy (sim/service_meter.hpp)
    auto services = nlohmann::ordered_json::array();
    for (const ServiceMetrics& m : r.inference) services.push_back(service_json(m));
    j["inference"] = services;
  }
  j["warnings"] = r.warnings;
  auto skipped = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : r.trace_rows_skipped) skipped[reason] = n;
  j["trace_rows_skipped"] = skipped;
  j["config"] = yaml_to_json(r.resolved_config);
  return j;
}

RunResult run_scenario(const ScenarioConfig& scenario, const PolicyRegistry& registry, const RunOptions& options,
                       const YAML::Node* policy_override) {
  PolicyInstance policy = registry.create(ConfigNode(policy_override ? *policy_override : scenario.policy, scenario.policy_source, "policy"),
                                          policy_context(scenario));
  return run_scenario(scenario, *policy.policy, policy.resolved, options);
}

RunResult run_scenario(const ScenarioConfig& scenario, Policy& policy, const YAML::Node& resolved_policy, const RunOptions& options,
                       const std::vector<Observer*>& observers) {
  RunResult result;
  result.policy_name = policy.name();
  result.information = scenario.information.describe();
  if (!options.out_dir.empty()) {
    // A resumed run, and a folder holding a snapshot (which continues the rows of its
    // unfinished run), keep the unfinished rows; every run drops the previous results
    // before anything can fail.
    std::error_code ec;
    const bool resuming = !options.snapshot.resume_from.empty();
    const bool snapshot_here = fs::exists(fs::path(options.out_dir) / "snapshot.bin", ec) ||
                               (!options.snapshot.path.empty() && fs::exists(options.snapshot.path, ec));
    clear_output_folder(options.out_dir, run_result_files(), resuming || snapshot_here);
  }
  SimulationSetup setup(scenario, scenario.seed, result.warnings);
  JobSource* source = &setup.source();
  result.trace_rows_skipped = source->rows_skipped();

  // Destroyed after `temps`: the folder is empty once the temporary files are gone.
  CreatedFolders created(options.out_dir.empty() ? std::string() : options.out_dir);
  TempFiles temps;
  std::ofstream jobs_out;
  std::string jobs_path, results_path;
  std::ofstream timeline_out, allocations_out;
  std::vector<std::string> timeline_paths;
  if (!options.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.out_dir, ec);
    if (ec) throw InputError(options.out_dir, "cannot create the output folder: " + ec.message());
    jobs_path = (fs::path(options.out_dir) / "jobs.csv").string();
    results_path = (fs::path(options.out_dir) / "results.json").string();
    temps.paths = {temp_name(jobs_path), temp_name(results_path)};
    jobs_out.open(temps.paths[0], std::ios::binary | std::ios::trunc);
    if (!jobs_out) throw InputError(jobs_path, "cannot write the file (is the folder writable?)");
    if (options.timeline) {
      timeline_paths = {(fs::path(options.out_dir) / "timeline.csv").string(), (fs::path(options.out_dir) / "allocations.csv").string()};
      temps.paths.push_back(temp_name(timeline_paths[0]));
      temps.paths.push_back(temp_name(timeline_paths[1]));
      timeline_out.open(temps.paths[2], std::ios::binary | std::ios::trunc);
      allocations_out.open(temps.paths[3], std::ios::binary | std::ios::trunc);
      if (!timeline_out || !allocations_out) throw InputError(timeline_paths[0], "cannot write the file (is the folder writable?)");
    }
  }

  // Inference services are the world's (one world whatever the policy): their SLO is
  // metered under every policy, and a policy that scales no services runs behind the
  // default autoscaler with the scenario's `inference.autoscaler` settings.
  const bool given_autoscaler = scenario.inference && scenario.inference->resolved["autoscaler"];
  const AutoscalerSettings autoscaler_settings =
      given_autoscaler ? parse_scenario_autoscaler(ConfigNode(scenario.inference->resolved["autoscaler"], "the resolved scenario", "inference.autoscaler"))
                       : AutoscalerSettings{};
  std::unique_ptr<Policy> autoscaler;
  if (scenario.inference && !scales_services(policy, resolved_policy)) autoscaler = default_autoscaler(policy, autoscaler_settings, scenario.inference->services);
  Policy& active = autoscaler ? *autoscaler : policy;
  if (given_autoscaler && !autoscaler) {
    result.warnings.push_back("inference.autoscaler: not used: policy '" + policy.name() + "' scales the services with its own options");
  }
  std::unique_ptr<Simulator> simulator = setup.make_simulator(active);
  Simulator& sim = *simulator;
  // The run's observers, added to the kernel below in any order (RunOptions::observer_order_seed):
  // none reads another's value by being called after it.
  std::vector<Observer*> attached;
  MetricsCollector metrics(setup.cluster().num_devices(), scenario.metrics_window, source->expected_jobs());
  attached.push_back(&metrics);
  const bool binds = policy.may_bind() || active.may_bind();
  if (binds) metrics.meter_bound_idle();
  // simulate()'s columns hold every job's times: the collector need not keep its samples.
  if (options.job_columns && !options.snapshot.enabled()) metrics.take_samples_from(*options.job_columns);
  std::unique_ptr<EnergyMeter> energy = setup.make_energy_meter(sim);
  if (energy) attached.push_back(energy.get());
  std::unique_ptr<ThermalMeter> thermal;
  if (setup.thermal()) {
    thermal = std::make_unique<ThermalMeter>(*setup.thermal());
    attached.push_back(thermal.get());
  }
  std::unique_ptr<ServiceMeter> service_meter;
  if (scenario.inference) {
    service_meter = std::make_unique<ServiceMeter>(scenario.inference->services, setup.cluster(), setup.geography());
    service_meter->read_replicas_from(dynamic_cast<const ServiceReplicaSource*>(&active));
    attached.push_back(service_meter.get());
  }
  std::unique_ptr<MarketMeter> market;
  if (const Market* m = setup.market()) {  // books each ending job's energy, pulled from the energy meter
    market = std::make_unique<MarketMeter>(sim, *m, energy.get());
    attached.push_back(market.get());
  }
  std::unique_ptr<JobsCsvWriter> jobs_writer;
  if (jobs_out.is_open() || options.jobs_csv) {
    jobs_writer = std::make_unique<JobsCsvWriter>(jobs_out.is_open() ? static_cast<std::ostream&>(jobs_out) : *options.jobs_csv,
                                                  jobs_csv_fields(energy.get(), binds, setup.physics() && setup.physics()->plan_model() ? setup.physics() : nullptr));
    attached.push_back(jobs_writer.get());
  }
  std::unique_ptr<JobColumnsCollector> job_columns;
  if (options.job_columns) {
    job_columns = std::make_unique<JobColumnsCollector>(*options.job_columns, energy.get(), source->expected_jobs());
    attached.push_back(job_columns.get());
  }
  std::unique_ptr<TimelineWriter> timeline;
  if (timeline_out.is_open()) {
    timeline = std::make_unique<TimelineWriter>(timeline_out, allocations_out, setup.cluster().num_devices());
    attached.push_back(timeline.get());
  }
  InvariantChecker checker;
  if (options.check_invariants) {
    if (energy) checker.watch_energy(*energy);
    attached.push_back(&checker);
  }
  for (Observer* o : observers) attached.push_back(o);
  std::unique_ptr<ProgressLine> progress;
  if (options.progress) {
    progress = std::make_unique<ProgressLine>(options.progress_label, source->expected_jobs(), progress_style_from_environment());
    attached.push_back(progress.get());
  }
  InterruptObserver interrupt;
  attached.push_back(&interrupt);
  if (options.observer_order_seed != 0) {
    std::mt19937_64 rng(options.observer_order_seed);
    std::shuffle(attached.begin(), attached.end(), rng);
  }
  for (Observer* o : attached) sim.add_observer(*o);
  std::unique_ptr<RunSnapshots> snapshots;
  if (options.snapshot.enabled()) {
    std::ostringstream identity;  // what a snapshot must match to be resumed here
    identity << YAML::Dump(scenario.to_yaml(resolved_policy)) << "\nseed: " << scenario.seed << "\nversion: " << kVersion
             << "\ntimeline: " << options.timeline << "\ncheck_invariants: " << options.check_invariants << '\n';
    snapshots = std::make_unique<RunSnapshots>(options.snapshot, identity.str(), options.out_dir);
    snapshots->add("kernel", [&](SnapshotArchive& ar) { sim.snapshot(ar); });
    snapshots->add("policy", [&](SnapshotArchive& ar) { active.snapshot(ar); });
    snapshots->add("metrics", [&](SnapshotArchive& ar) { metrics.snapshot(ar); });
    if (energy) snapshots->add("energy", [&](SnapshotArchive& ar) { energy->snapshot(ar); });
    if (thermal) snapshots->add("thermal", [&](SnapshotArchive& ar) { thermal->snapshot(ar); });
    if (market) snapshots->add("market", [&](SnapshotArchive& ar) { market->snapshot(ar); });
    if (service_meter) snapshots->add("services", [&](SnapshotArchive& ar) { service_meter->snapshot(ar); });
    if (timeline) snapshots->add("timeline", [&](SnapshotArchive& ar) { timeline->snapshot(ar); });
    if (options.check_invariants) snapshots->add("invariants", [&](SnapshotArchive& ar) { checker.snapshot(ar); });
    for (std::size_t i = 0; i < observers.size(); ++i) {
      snapshots->add("observer " + std::to_string(i), [o = observers[i]](SnapshotArchive& ar) { o->snapshot(ar); });
    }
    snapshots->add_stream(jobs_out, temps.paths[0], "jobs.csv");
    if (timeline) {
      snapshots->add_stream(timeline_out, temps.paths[2], "timeline.csv");
      snapshots->add_stream(allocations_out, temps.paths[3], "allocations.csv");
    }
    snapshots->start(sim);
    if (options.snapshot.every > Tick()) interrupt.defer_to([&] { snapshots->stop_at_next_boundary(); });
  }
  try {
    sim.run();
  } catch (const Interrupted& e) {
    progress.reset();
    std::string kept = "no output files were written";
    if (!options.out_dir.empty()) {
      // The finished jobs' rows are kept under a name no reader takes for a finished run.
      jobs_out.close();
      const std::string partial = jobs_path + ".interrupted";
      std::error_code ec;
      fs::rename(temps.paths[0], partial, ec);
      if (!ec) {
        temps.paths.erase(temps.paths.begin());
        const Summary so_far = metrics.summarize();
        kept = "the " + std::to_string(so_far.jobs_completed + so_far.jobs_failed + so_far.jobs_killed) + " jobs that ended so far are in " + partial +
               "; no results.json or jobs.csv was written (the run is incomplete)";
        if (snapshots && snapshots->written() > 0) kept += "; continue from the last snapshot with --resume " + snapshots->path();
      }
    }
    throw Interrupted(e.signal(), std::string(e.what()) + "; " + kept);
  } catch (const InvariantError& e) {
    // The last line of defence behind the snapshot's validation (sim/simulator_snapshot.cpp):
    // a genuine snapshot resumes to the uninterrupted run's bytes, so a resumed run that
    // breaks an invariant was most likely given an edited state.
    if (options.snapshot.resume_from.empty()) throw;
    const std::string what = e.what();
    throw InputError(options.snapshot.resume_from, "snapshot is not a state of this scenario: the run resumed from it broke an invariant (" +
                                                       what.substr(0, what.find('\n')) + "); if the file is a snapshot schedsim wrote, unedited, please report it");
  }
  progress.reset();
  if (timeline) timeline->finish(sim.now());

  result.summary = metrics.summarize();
  result.sorted_jct_s = metrics.release_sorted_jct_s();  // moved: no second copy of 8 bytes a job
  result.stats = sim.stats();
  if (energy) result.energy = energy->totals();
  if (market) result.market = market->totals();
  if (thermal) result.thermal = thermal->totals();
  if (service_meter) {
    result.inference = service_meter->metrics();
    // The lending half is the autoscaler's (when the outermost policy is one).
    if (const auto* lender = dynamic_cast<const InferenceMetricsSource*>(&active)) {
      const std::vector<ServiceMetrics> lent = lender->inference_metrics();
      for (std::size_t i = 0; i < lent.size() && i < result.inference.size(); ++i) {
        result.inference[i].borrowed_device_s = lent[i].borrowed_device_s;
        result.inference[i].lends = lent[i].lends;
        result.inference[i].reclaims = lent[i].reclaims;
      }
    }
  }
  result.resolved_config = scenario.to_yaml(resolved_policy);
  // Which autoscaler ran in front of the policy, when the runner chose it.
  if (autoscaler) {  // (a deep copy: the scenario's own nodes are shared with it)
    result.resolved_config = YAML::Clone(result.resolved_config);
    result.resolved_config["inference"]["autoscaler"] = autoscaler_yaml(autoscaler_settings);
  }
  {
    YAML::Emitter emitter;
    emitter << result.resolved_config;
    result.config_sha256 = sha256_hex(emitter.c_str());
  }

  if (!options.out_dir.empty()) {
    jobs_out.flush();
    if (!jobs_out) throw InputError(jobs_path, "write failed (disk full?)");
    jobs_out.close();
    {
      std::ofstream out(temps.paths[1], std::ios::binary | std::ios::trunc);
      out << results_json(result, scenario.seed).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
      if (!out.flush()) throw InputError(results_path, "write failed (disk full?)");
    }
    // jobs.csv (and the timeline) first: a results.json in place means the whole run finished.
    std::error_code ec;
    for (std::size_t i = 0; i < timeline_paths.size() && !ec; ++i) {
      std::ofstream& out = i == 0 ? timeline_out : allocations_out;
      if (!out.flush()) throw InputError(timeline_paths[i], "write failed (disk full?)");
      out.close();
      fs::rename(temps.paths[2 + i], timeline_paths[i], ec);
    }
    if (!ec && result.market) {
      const std::string ledger_path = (fs::path(options.out_dir) / "ledger.csv").string();
      temps.paths.push_back(temp_name(ledger_path));
      std::ofstream out(temps.paths.back(), std::ios::binary | std::ios::trunc);
      out << ledger_csv(result.market->settlement, result.config_sha256, options.ledger_key);
      if (!out.flush()) throw InputError(ledger_path, "write failed (disk full?)");
      out.close();
      fs::rename(temps.paths.back(), ledger_path, ec);
    }
    // Request-level services with requests_csv: one row per finished request (before
    // results.json, which marks the run finished).
    for (std::size_t k = 0; !ec && service_meter && k < scenario.inference->services->size(); ++k) {
      const auto* model = dynamic_cast<const EngineRequestModel*>((*scenario.inference->services)[k].request_level.get());
      const RequestServer* server = service_meter->request_server(k);
      if (!model || !model->spec().requests_csv || !server) continue;
      const std::string csv_path = (fs::path(options.out_dir) / ("requests_" + std::to_string(k) + ".csv")).string();
      temps.paths.push_back(temp_name(csv_path));
      std::ofstream out(temps.paths.back(), std::ios::binary | std::ios::trunc);
      server->write_requests_csv(out);
      if (!out.flush()) throw InputError(csv_path, "write failed (disk full?)");
      out.close();
      fs::rename(temps.paths.back(), csv_path, ec);
    }
    if (!ec) fs::rename(temps.paths[0], jobs_path, ec);
    if (!ec) fs::rename(temps.paths[1], results_path, ec);
    if (ec) throw InputError(options.out_dir, "cannot move the finished results into place: " + ec.message());
    temps.keep = true;
    created.keep = true;
    if (snapshots) snapshots->finish();
    remove_unfinished_rows(options.out_dir);  // superseded by this run's results
  }
  return result;
}

}  // namespace schedsim
