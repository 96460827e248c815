#include "app/sweep.hpp"

#include "run/progress.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "app/error_report.hpp"
#include "app/report.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"
#include "traces/csv.hpp"

extern char** environ;

namespace schedsim {
namespace fs = std::filesystem;

namespace {

// A YAML value as one line of text (scalars as written, maps and lists in flow style).
std::string flow_text(const ConfigNode& node) {
  if (node.is_scalar()) return node.yaml().Scalar();
  YAML::Emitter e;
  e << YAML::Flow << node.yaml();
  return e.c_str();
}

// FNV-1a, 64 bit: a run id that depends only on the parameter values, never on order.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

// Regularized incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes 6.4).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  auto cf = [](double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; ++m) {
      const double m2 = 2.0 * m;
      double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
      d = 1 + aa * d;
      if (std::fabs(d) < tiny) d = tiny;
      c = 1 + aa / c;
      if (std::fabs(c) < tiny) c = tiny;
      d = 1 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
      d = 1 + aa * d;
      if (std::fabs(d) < tiny) d = tiny;
      c = 1 + aa / c;
      if (std::fabs(c) < tiny) c = tiny;
      d = 1 / d;
      const double del = d * c;
      h *= del;
      if (std::fabs(del - 1) < 1e-15) break;
    }
    return h;
  };
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return front * cf(a, b, x) / a;
  return 1 - front * cf(b, a, 1 - x) / b;
}

double student_t_cdf(double t, int df) {
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

// The metrics tabulated per run: the entries of results.json's summary, in its order;
// those of a nested map (the measurement window) as "window.gpu_utilization".
std::vector<std::string> metric_names(const nlohmann::ordered_json& summary) {
  std::vector<std::string> names;
  for (const auto& [k, v] : summary.items()) {
    if (v.is_object()) {
      for (const auto& [k2, v2] : v.items()) names.push_back(k + "." + k2);
    } else {
      names.push_back(k);
    }
  }
  return names;
}

// A metric's value in a run's summary (null when the run's file lacks it).
nlohmann::ordered_json metric_value(const nlohmann::ordered_json& summary, const std::string& name) {
  const auto dot = name.find('.');
  const nlohmann::ordered_json* v = &summary;
  for (const std::string& part : dot == std::string::npos ? std::vector<std::string>{name} : std::vector<std::string>{name.substr(0, dot), name.substr(dot + 1)}) {
    if (!v->is_object() || !v->contains(part)) return nullptr;
    v = &v->at(part);
  }
  return *v;
}

nlohmann::ordered_json read_results(const std::string& out_dir, const SweepRun& run) {
  const fs::path path = fs::path(out_dir) / "runs" / run.id / "results.json";
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "missing: run the sweep (it resumes) to produce it");
  try {
    return nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string(), "not valid JSON: " + without_json_prefix(e.what()));
  }
}

void header_params(std::ostream& out, const SweepGrid& grid) {
  for (const auto& p : grid.parameters) {
    write_csv_field(out, p.path);
    out << ',';
  }
  out << "policy";
}

void row_params(std::ostream& out, const SweepRun& run) {
  for (const auto& v : run.values) {
    write_csv_field(out, v);
    out << ',';
  }
  write_csv_field(out, run.policy);
}

std::string base_scenario_path(const SweepGrid& grid, const std::string& out_dir) {
  if (!grid.scenario_path.empty()) return grid.scenario_path;
  return (fs::path(out_dir) / "base_scenario.yaml").string();
}

}  // namespace

double student_t_quantile(double p, int df) {
  if (!(p > 0.5 && p < 1) || df < 1) throw std::invalid_argument("student_t_quantile: needs 0.5 < p < 1 and df >= 1");
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double ci95_half_width(const std::vector<double>& x) {
  const std::size_t n = x.size();
  if (n < 2) return std::nan("");
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / (n - 1));
  return student_t_quantile(0.975, static_cast<int>(n - 1)) * sd / std::sqrt(static_cast<double>(n));
}

SweepGrid SweepGrid::load_file(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  if (!root.is_map()) root.fail("a sweep grid must be a YAML map with keys scenario, parameters, policies, seeds");
  root.expect_map({"scenario", "parameters", "policies", "seeds"});
  SweepGrid g;
  g.source = path;
  const ConfigNode scenario = root.child("scenario");
  if (scenario.is_map()) {
    YAML::Emitter e;
    e << scenario.yaml();
    g.inline_scenario = std::string(e.c_str()) + "\n";
  } else if (scenario.is_scalar()) {
    g.scenario_path = scenario.as_path();
  } else {
    scenario.fail("expected a scenario file path or an inline scenario map");
  }
  if (auto params = root.maybe_child("parameters")) {
    if (!params->is_null()) {
      if (!params->is_map()) params->fail("expected a map from --set key paths to lists of values");
      for (const auto& key : params->keys()) {
        const ConfigNode values = params->child(key);
        if (!values.is_sequence() || values.size() == 0) values.fail("expected a non-empty list of values");
        SweepParameter p{key, {}, values.where()};
        for (std::size_t i = 0; i < values.size(); ++i) p.values.push_back(flow_text(values.at(i)));
        g.parameters.push_back(p);
      }
    }
  }
  if (auto policies = root.maybe_child("policies")) {
    if (!policies->is_sequence() || policies->size() == 0) policies->fail("expected a non-empty list of policies (names or maps such as {name: fifo, placement: packed})");
    for (std::size_t i = 0; i < policies->size(); ++i) {
      const ConfigNode p = policies->at(i);
      if (!p.is_scalar() && !(p.is_map() && p.has("name"))) p.fail("expected a policy name or a map with a name key");
      g.policies.push_back(flow_text(p));
      g.policy_where.push_back(p.where());
    }
  }
  if (g.policies.empty()) {  // the base scenario's own policy, so that the tables name it
    const ConfigNode base = scenario.is_map() ? scenario : ConfigNode::load_file(g.scenario_path);
    if (base.is_map() && base.has("policy")) {
      g.policies.push_back(flow_text(base.child("policy")));
      g.policy_where.push_back(base.child("policy").where());
    }
  }
  const ConfigNode seeds = root.child("seeds");
  if (!seeds.is_scalar() && !(seeds.is_sequence() && seeds.size() > 0)) seeds.fail("expected a count (seeds 1..N) or a non-empty list of seeds");
  const std::uint64_t seed_count = seeds.is_scalar() ? static_cast<std::uint64_t>(seeds.as_positive_int()) : seeds.size();
  // The number of runs, counted before any run or seed list is built: a typo (seeds:
  // 1000000000) must not allocate for a billion runs first.
  std::uint64_t total = 1;
  std::string factors;
  bool overflow = false;
  const auto times = [&](std::uint64_t n, const std::string& what) {
    factors += (factors.empty() ? "" : " x ") + std::to_string(n) + " " + what;
    if (n != 0 && total > std::numeric_limits<std::uint64_t>::max() / n) overflow = true;
    else total *= n;
  };
  for (const auto& p : g.parameters) times(p.values.size(), "values of " + p.path);
  times(std::max<std::size_t>(g.policies.size(), 1), g.policies.size() > 1 ? "policies" : "policy");
  times(seed_count, seed_count > 1 ? "seeds" : "seed");
  if (overflow || total > kMaxSweepRuns) {
    root.fail("the grid has " + (overflow ? std::string("more than 2^64") : std::to_string(total)) + " runs (" + factors + "), more than the " +
              std::to_string(kMaxSweepRuns) + " one sweep runs (docs/config.md#limits); split it into several grids");
  }
  if (seeds.is_scalar()) {
    for (std::uint64_t s = 1; s <= seed_count; ++s) g.seeds.push_back(s);
  } else {
    for (std::size_t i = 0; i < seeds.size(); ++i) g.seeds.push_back(seeds.at(i).as_seed());
  }
  return g;
}

std::vector<SweepRun> SweepGrid::runs() const {
  std::vector<std::vector<std::string>> combos{{}};
  for (const auto& p : parameters) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : combos) {
      for (const auto& v : p.values) {
        next.push_back(c);
        next.back().push_back(v);
      }
    }
    combos = std::move(next);
  }
  const std::vector<std::string> policy_specs = policies.empty() ? std::vector<std::string>{""} : policies;
  std::vector<SweepRun> out;
  for (const auto& c : combos) {
    std::string key;
    for (std::size_t i = 0; i < parameters.size(); ++i) key += parameters[i].path + "=" + c[i] + "\n";
    char hash[20];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
    for (const auto& spec : policy_specs) {
      const std::string label = spec.empty() ? "scenario-policy" : policy_label(ConfigNode::load_string(spec, source + ": policies"));
      for (std::uint64_t seed : seeds) {
        SweepRun r;
        r.values = c;
        r.policy = label;
        r.policy_yaml = spec;
        r.seed = seed;
        r.id = safe_name(label) + "-seed" + std::to_string(seed) + "-" + std::string(hash, 12);
        out.push_back(r);
      }
    }
  }
  return out;
}

namespace {

std::vector<std::string> run_overrides(const SweepGrid& grid, const SweepRun& run) {
  std::vector<std::string> o;
  for (std::size_t i = 0; i < grid.parameters.size(); ++i) o.push_back(grid.parameters[i].path + "=" + run.values[i]);
  if (!run.policy_yaml.empty()) o.push_back("policy=" + run.policy_yaml);
  return o;
}

// Applies each parameter value and each policy once to the base scenario and parses it,
// so a bad key path or value stops the sweep before any run starts.
void validate(const SweepGrid& grid, const std::string& base, const PolicyRegistry& registry) {
  // `where` is "grid.yaml:LINE: key.path"; InputError adds its own ": " after the source.
  auto check = [&](const std::string& assignment, const std::string& where, const std::string& what) {
    try {
      load_scenario(base, {assignment}, std::nullopt, registry);
    } catch (const InputError& e) {
      throw InputError(where, what + " does not apply to the base scenario: " + e.what());
    } catch (const PolicyError& e) {
      throw InputError(where, what + " does not apply to the base scenario: " + e.what());
    }
  };
  load_scenario(base, {}, std::nullopt, registry);
  for (const auto& p : grid.parameters) {
    for (const auto& v : p.values) check(p.path + "=" + v, p.where, "value " + v);
  }
  for (std::size_t i = 0; i < grid.policies.size(); ++i) check("policy=" + grid.policies[i], grid.policy_where[i], "policy " + grid.policies[i]);
}

// The `schedsim run` command line of one run, without its --out folder: the local backend
// runs it here, the Ray backend ships it to a Ray task (whose working folder differs,
// hence the absolute scenario path).
std::vector<std::string> run_command(const SweepGrid& grid, const SweepRun& run, const std::string& base, const SweepOptions& options) {
  std::vector<std::string> args{options.executable, "run", fs::absolute(base).string()};
  for (const auto& o : run_overrides(grid, run)) {
    args.push_back("--set");
    args.push_back(o);
  }
  args.insert(args.end(), {"--seed", std::to_string(run.seed), "--quiet"});
  return args;
}

fs::path run_dir(const SweepOptions& options, const SweepRun& run) { return fs::path(options.out_dir) / "runs" / run.id; }
fs::path log_path(const SweepOptions& options, const std::string& run_id) { return fs::path(options.out_dir) / "logs" / (run_id + ".stderr"); }

pid_t spawn_run(const SweepGrid& grid, const SweepRun& run, const std::string& base, const SweepOptions& options) {
  std::vector<std::string> args = run_command(grid, run, base, options);
  args.insert(args.end(), {"--out", run_dir(options, run).string()});
  const std::string log = log_path(options, run.id).string();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, options.executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw InputError(options.executable, std::string("cannot start a run process: ") + std::strerror(rc));
  return pid;
}

// Called once per finished run, in the order runs finish: (run, ok, why it failed or "").
using RunFinished = std::function<void(const SweepRun&, bool, const std::string&)>;

void execute_local(const SweepGrid& grid, const std::vector<const SweepRun*>& pending, const std::string& base, const SweepOptions& options,
                   int workers, const RunFinished& finished) {
  std::map<pid_t, const SweepRun*> running;
  std::size_t next = 0;
  while (next < pending.size() || !running.empty()) {
    while (next < pending.size() && static_cast<int>(running.size()) < workers) {
      running[spawn_run(grid, *pending[next], base, options)] = pending[next];
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw InputError("sweep", std::string("waiting for runs failed: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const SweepRun* run = it->second;
    running.erase(it);
    finished(*run, WIFEXITED(status) && WEXITSTATUS(status) == 0, "");
  }
}

std::string exit_status_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

// The Ray backend: writes the pending runs (id, command, output folder, log file) to
// DIR/logs/ray_pending.json and runs `python3 ray_sweep.py` on it. The driver prints one
// JSON line per finished run on stdout ({"id", "ok", "reason"}), after it has written the
// run's folder and log exactly as a local run would, or one {"error"} line when it cannot
// run at all (no Ray, no cluster at the address).
void execute_ray(const SweepGrid& grid, const std::vector<const SweepRun*>& pending, const std::string& base, const SweepOptions& options,
                 int workers, const RunFinished& finished) {
  const std::string script =
      options.ray_script.empty() ? find_experiments_script("ray_sweep.py", "SCHEDSIM_RAY_SCRIPT", options.executable) : options.ray_script;
  nlohmann::ordered_json request;
  request["address"] = options.ray_address;
  request["workers"] = workers;
  request["runs"] = nlohmann::ordered_json::array();
  std::map<std::string, const SweepRun*> by_id;
  for (const SweepRun* run : pending) {
    by_id[run->id] = run;
    request["runs"].push_back({{"id", run->id},
                               {"argv", run_command(grid, *run, base, options)},
                               {"out", fs::absolute(run_dir(options, *run)).string()},
                               {"log", fs::absolute(log_path(options, run->id)).string()}});
  }
  const std::string request_path = (fs::path(options.out_dir) / "logs" / "ray_pending.json").string();
  write_file_atomically(request_path, request.dump(1) + "\n");

  int out_pipe[2];
  if (pipe(out_pipe) != 0) throw InputError("sweep", std::string("cannot create a pipe: ") + std::strerror(errno));
  std::vector<std::string> args{"python3", script, request_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    throw InputError("sweep --backend ray", std::string("cannot start python3 (") + std::strerror(rc) + "): install Python 3, then: pip install 'schedsim[ray]'");
  }
  std::string error, line;
  std::size_t reported = 0;
  // Reads every line the driver prints (it ends when the driver exits, however it exits).
  FILE* from_driver = fdopen(out_pipe[0], "r");
  char buf[4096];
  while (from_driver && std::fgets(buf, sizeof buf, from_driver)) {
    line += buf;
    if (line.empty() || line.back() != '\n') continue;
    nlohmann::json msg;
    try {
      msg = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      msg = nlohmann::json{{"error", "unexpected output from " + script + ": " + line.substr(0, line.size() - 1)}};  // without its '\n'
    }
    line.clear();
    if (msg.contains("error")) {
      error = msg["error"].get<std::string>();
      continue;
    }
    const auto it = by_id.find(msg.value("id", ""));
    if (it == by_id.end()) continue;
    ++reported;
    finished(*it->second, msg.value("ok", false), msg.value("reason", ""));
    by_id.erase(it);
  }
  if (from_driver) fclose(from_driver);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InputError("sweep", std::string("waiting for the Ray driver failed: ") + std::strerror(errno));
  }
  if (!error.empty()) throw InputError("sweep --backend ray", error);
  if (!by_id.empty()) {
    throw InputError("sweep --backend ray", "the Ray driver (" + script + ") ended (" + exit_status_text(status) + ") with " +
                                                std::to_string(by_id.size()) + " of " + std::to_string(pending.size()) +
                                                " run(s) unreported; its messages are above (finished runs are kept: run the sweep again to resume)");
  }
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    throw InputError("sweep --backend ray", "the Ray driver (" + script + ") ended with " + exit_status_text(status) + "; its messages are above");
  }
}

// "I/N" -> (I, N) with 0 <= I < N; "" -> (0, 1).
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  if (text.empty()) return {0, 1};
  const auto fail = [&]() -> std::pair<std::size_t, std::size_t> {
    throw InputError("sweep --shard", "'" + text + "' is not I/N with 0 <= I < N (e.g. 0/4 ... 3/4 split the runs into four shards)");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return fail();
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  const auto digits = [](const std::string& s) { return s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos; };
  if (!digits(a) || !digits(b)) return fail();
  const std::size_t i = std::strtoul(a.c_str(), nullptr, 10), n = std::strtoul(b.c_str(), nullptr, 10);  // at most 9 digits: no overflow
  if (n == 0 || i >= n) return fail();
  return {i, n};
}

}  // namespace

SweepOutcome run_sweep(const SweepGrid& grid, const PolicyRegistry& registry, const SweepOptions& options) {
  if (options.executable.empty()) throw InputError("sweep", "no schedsim executable to run");
  if (options.backend != "local" && options.backend != "ray") throw InputError("sweep", "unknown backend '" + options.backend + "' (allowed: local, ray)");
  if (!options.ray_address.empty() && options.backend != "ray") throw InputError("sweep", "--address is for --backend ray");
  check_output_path(options.out_dir, "--out");
  const auto [shard_index, shard_count] = parse_shard(options.shard);
  // The tables are rewritten once every run is done; the old ones go now, so that a sweep
  // that fails leaves no tables of an earlier state (the runs' folders are kept: resumable).
  clear_output_folder(options.out_dir, {"sweep.csv", "summary.csv"}, false);
  // An output folder that cannot be made is named with the reason (permission denied,
  // no space left), not as a raw std::filesystem error.
  const auto make_folder = [](const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir.string(), "cannot create the output folder: " + ec.message());
  };
  if (!grid.inline_scenario.empty()) {
    make_folder(options.out_dir);
    write_file_atomically(base_scenario_path(grid, options.out_dir), grid.inline_scenario);
  }
  const std::string base = base_scenario_path(grid, options.out_dir);
  validate(grid, base, registry);
  make_folder(fs::path(options.out_dir) / "runs");
  make_folder(fs::path(options.out_dir) / "logs");

  const std::vector<SweepRun> runs = grid.runs();
  SweepOutcome outcome;
  outcome.runs_total = runs.size();
  std::vector<const SweepRun*> pending_runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i % shard_count != shard_index) ++outcome.runs_other_shards;
    else if (fs::exists(run_dir(options, runs[i]) / "results.json")) ++outcome.runs_skipped;
    else pending_runs.push_back(&runs[i]);
  }
  const bool ray = options.backend == "ray";
  // Ray on a cluster: 0 leaves the number of concurrent runs to the cluster's CPUs.
  const int workers = options.workers > 0 || (ray && !options.ray_address.empty())
                          ? options.workers
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (options.progress) {
    const std::string where = !ray ? std::to_string(workers) + " worker process(es)"
                              : options.ray_address.empty()
                                  ? "a local Ray instance with " + std::to_string(workers) + " worker(s)"
                                  : "the Ray cluster at " + options.ray_address + (workers > 0 ? " (at most " + std::to_string(workers) + " at a time)" : "");
    const std::string shard = options.shard.empty() ? "" : " (shard " + options.shard + ": " + std::to_string(runs.size() - outcome.runs_other_shards) + " of them)";
    std::fprintf(stderr, "sweep: %zu runs%s, %zu already done, %zu to run on %s\n", outcome.runs_total, shard.c_str(), outcome.runs_skipped,
                 pending_runs.size(), where.c_str());
  }
  std::vector<std::string> failed;
  std::size_t done = 0;
  const double sweep_start_s = steady_clock_s();
  const RunFinished finished = [&](const SweepRun& run, bool ok, const std::string& reason) {
    ++done;
    if (ok) ++outcome.runs_executed;
    else failed.push_back(run.id);
    if (options.progress) {
      // One line per finished run (a log in any case), with the sweep's percentage and ETA.
      std::string share = progress_text(static_cast<double>(done), static_cast<double>(pending_runs.size()), "runs", steady_clock_s() - sweep_start_s);
      share.erase(0, share.find_first_not_of(' '));
      std::fprintf(stderr, "  [%zu/%zu] %s %s%s  (%s)\n", done, pending_runs.size(), run.id.c_str(), ok ? "done" : "FAILED",
                   reason.empty() ? "" : (" (" + reason + ")").c_str(), share.c_str());
    }
  };
  if (!pending_runs.empty()) {
    if (ray) execute_ray(grid, pending_runs, base, options, workers, finished);
    else execute_local(grid, pending_runs, base, options, workers, finished);
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += (list.empty() ? " " : ", ") + log_path(options, f).string();
    // One line: messages are escaped for the terminal, where a line break would show as \n.
    throw InputError(grid.source, std::to_string(failed.size()) + " run(s) failed; their messages are in:" + list +
                                      "; finished runs are kept: run the sweep again to resume");
  }
  // A shard writes the tables only when the other shards are done too (any shard may be
  // last; the tables' bytes do not depend on which one writes them).
  for (const auto& r : runs) {
    if (!fs::exists(run_dir(options, r) / "results.json")) return outcome;
  }
  write_file_atomically((fs::path(options.out_dir) / "sweep.csv").string(), sweep_csv(grid, options.out_dir));
  write_file_atomically((fs::path(options.out_dir) / "summary.csv").string(), sweep_summary_csv(grid, options.out_dir));
  outcome.tables_written = true;
  return outcome;
}

namespace {

// The world metrics (experiments/compare.hpp) of the sweep's runs, read while the tables
// are built; a metric is a column when its model is on in some run, except those that
// summary already holds (goodput).
struct WorldColumns {
  std::vector<std::vector<std::optional<double>>> values;  // per run (grid order), per world metric
  std::vector<bool> active;                                // per world metric

  void add(const nlohmann::ordered_json& results) {
    const auto& metrics = world_metrics();
    active.resize(metrics.size());
    values.emplace_back();
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      if (metrics[m].active(results)) active[m] = true;
      values.back().push_back(metrics[m].value(results));
    }
  }
  // The active metrics to tabulate as columns of their own (not already a summary column).
  std::vector<std::size_t> columns(const std::vector<std::string>& summary_metrics) const {
    std::vector<std::size_t> out;
    for (std::size_t m = 0; m < active.size(); ++m) {
      if (active[m] && std::find(summary_metrics.begin(), summary_metrics.end(), world_metrics()[m].name) == summary_metrics.end()) out.push_back(m);
    }
    return out;
  }
  // Every active metric (goodput too): what summary.csv pairs with the baseline.
  std::vector<std::size_t> paired() const {
    std::vector<std::size_t> out;
    for (std::size_t m = 0; m < active.size(); ++m)
      if (active[m]) out.push_back(m);
    return out;
  }
};

}  // namespace

std::string sweep_csv(const SweepGrid& grid, const std::string& out_dir) {
  // The rows are kept until every run is read: a world metric's column appears when any
  // run has its model on (a parameter may switch a model on for some runs only).
  std::vector<std::string> metrics;
  std::vector<std::string> rows;
  WorldColumns world;
  for (const auto& run : grid.runs()) {
    const auto results = read_results(out_dir, run);
    if (metrics.empty()) metrics = metric_names(results.at("summary"));
    std::ostringstream row;
    write_csv_field(row, run.id);
    row << ',';
    row_params(row, run);
    row << ',' << run.seed;
    for (const auto& m : metrics) {
      const auto v = metric_value(results.at("summary"), m);
      row << ',' << (v.is_number() ? number(v.get<double>()) : "");
    }
    rows.push_back(row.str());
    world.add(results);
  }
  std::ostringstream out;
  if (rows.empty()) return out.str();
  const auto extra = world.columns(metrics);
  out << "run_id,";
  header_params(out, grid);
  out << ",seed";
  for (const auto& m : metrics) out << ',' << m;
  for (std::size_t m : extra) out << ',' << world_metrics()[m].name;
  out << '\n';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << rows[r];
    for (std::size_t m : extra) out << ',' << (world.values[r][m] ? number(*world.values[r][m]) : "");
    out << '\n';
  }
  return out.str();
}

PairedStats paired_stats(const std::vector<std::optional<double>>& x, const std::vector<std::optional<double>>& baseline) {
  std::vector<double> diff, ratio;
  for (std::size_t i = 0; i < x.size() && i < baseline.size(); ++i) {
    if (!x[i] || !baseline[i]) continue;
    diff.push_back(*x[i] - *baseline[i]);
    if (*baseline[i] != 0) ratio.push_back(*x[i] / *baseline[i]);
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double e : v) sum += e;
    return v.empty() ? std::nan("") : sum / static_cast<double>(v.size());
  };
  return PairedStats{diff.size(), mean(diff), ci95_half_width(diff), mean(ratio), ci95_half_width(ratio)};
}

std::string sweep_summary_csv(const SweepGrid& grid, const std::string& out_dir) {
  std::vector<std::string> metrics;
  const auto runs = grid.runs();
  // Runs of one group (parameters x policy) are consecutive: seed is the innermost loop,
  // and the first policy's group comes first among those of the same parameter values.
  // With two policies or more, each group's mean JCT (and each active world metric) is
  // paired seed by seed with the first policy's (same parameters, same seed, so the same
  // workload).
  const std::size_t num_policies = std::max<std::size_t>(1, grid.policies.size());
  const bool paired = num_policies >= 2;
  const std::size_t seeds = grid.seeds.size();
  auto cell = [](double v) { return std::isfinite(v) ? number(v) : std::string(); };
  auto mean_ci = [&](const std::vector<double>& x) {
    double mean = 0;
    for (double v : x) mean += v;
    return ',' + (x.empty() ? std::string() : number(mean / x.size())) + ',' + (x.size() < 2 ? std::string() : number(ci95_half_width(x)));
  };
  // Read every run first: the world columns depend on all of them (as in sweep.csv).
  std::vector<std::string> group_rows;            // parameters, seeds and the summary metrics' means
  std::vector<std::optional<double>> jct;         // per run
  WorldColumns world;
  for (std::size_t start = 0; start < runs.size(); start += seeds) {
    std::vector<std::vector<double>> values;
    for (std::size_t k = start; k < start + seeds; ++k) {
      const auto results = read_results(out_dir, runs[k]);
      if (metrics.empty()) metrics = metric_names(results.at("summary"));
      values.resize(metrics.size());
      for (std::size_t m = 0; m < metrics.size(); ++m) {
        const auto v = metric_value(results.at("summary"), metrics[m]);
        if (v.is_number()) values[m].push_back(v.get<double>());
      }
      const auto& j = results.at("summary").value("mean_jct_s", nlohmann::ordered_json());
      jct.push_back(j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt);
      world.add(results);
    }
    std::ostringstream row;
    row_params(row, runs[start]);
    row << ',' << seeds << ',';
    for (std::size_t k = 0; k < seeds; ++k) row << (k ? " " : "") << grid.seeds[k];
    for (const auto& x : values) row << mean_ci(x);
    group_rows.push_back(row.str());
  }
  std::ostringstream out;
  if (group_rows.empty()) return out.str();
  const auto extra = world.columns(metrics);
  const auto world_paired = world.paired();
  header_params(out, grid);
  // Which seeds the means are over, beside their count (a metric that is null in a
  // run is averaged over the other seeds).
  out << ",seeds,seed_list";
  for (const auto& m : metrics) out << ',' << m << "_mean," << m << "_ci95";
  for (std::size_t m : extra) out << ',' << world_metrics()[m].name << "_mean," << world_metrics()[m].name << "_ci95";
  if (paired) {
    out << ",baseline,mean_jct_s_diff_mean,mean_jct_s_diff_ci95,mean_jct_s_ratio_mean,mean_jct_s_ratio_ci95";
    for (std::size_t m : world_paired) {
      const std::string n = world_metrics()[m].name;
      out << ',' << n << "_diff_mean," << n << "_diff_ci95," << n << "_ratio_mean," << n << "_ratio_ci95";
    }
  }
  out << '\n';
  // One metric's values over the seeds of the group starting at run `start`.
  auto group_values = [&](std::size_t start, std::size_t m) {
    std::vector<std::optional<double>> v;
    for (std::size_t k = start; k < start + seeds; ++k) v.push_back(world.values[k][m]);
    return v;
  };
  std::size_t baseline_start = 0;
  for (std::size_t g = 0; g < group_rows.size(); ++g) {
    const std::size_t start = g * seeds;
    out << group_rows[g];
    for (std::size_t m : extra) {
      std::vector<double> x;
      for (const auto& v : group_values(start, m))
        if (v) x.push_back(*v);
      out << mean_ci(x);
    }
    if (paired) {
      if (g % num_policies == 0) baseline_start = start;
      const std::vector<std::optional<double>> x(jct.begin() + start, jct.begin() + start + seeds);
      const std::vector<std::optional<double>> b(jct.begin() + baseline_start, jct.begin() + baseline_start + seeds);
      const PairedStats p = paired_stats(x, b);
      out << ',';
      write_csv_field(out, runs[baseline_start].policy);
      out << ',' << cell(p.diff_mean) << ',' << cell(p.diff_ci95) << ',' << cell(p.ratio_mean) << ',' << cell(p.ratio_ci95);
      for (std::size_t m : world_paired) {
        const PairedStats w = paired_stats(group_values(start, m), group_values(baseline_start, m));
        out << ',' << cell(w.diff_mean) << ',' << cell(w.diff_ci95) << ',' << cell(w.ratio_mean) << ',' << cell(w.ratio_ci95);
      }
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace schedsim
