#include "app/serve_command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "run/created_folders.hpp"
#include "run/runner.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "base/error.hpp"

namespace schedsim {

namespace fs = std::filesystem;
using namespace serving;

namespace {

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

nlohmann::ordered_json latency_json(const LatencySummary& l) {
  return {{"mean_s", l.mean_s}, {"p50_s", l.p50_s}, {"p90_s", l.p90_s}, {"p99_s", l.p99_s}, {"max_s", l.max_s}};
}

nlohmann::ordered_json deployment_json(const DeploymentSpec& d) {
  return {{"model", d.model.name},
          {"model_params", d.model.total_params()},
          {"device", d.device.name},
          {"tensor_parallel", d.tensor_parallel},
          {"max_batch_requests", d.max_batch_requests},
          {"max_batched_tokens", d.max_batched_tokens},
          {"kv_block_tokens", d.kv_block_tokens},
          {"gpu_memory_utilization", d.gpu_memory_utilization},
          {"compute_efficiency", d.compute_efficiency},
          {"memory_efficiency", d.memory_efficiency},
          {"bytes_per_param", d.bytes_per_param}};
}


}  // namespace

ServeConfig parse_serve_config(const ConfigNode& root) {
  if (!root.is_map()) root.fail("expected a serve config: a map {requests, deployment, replicas, slo, disaggregation, seed, accelerators, name}");
  root.expect_map({"name", "seed", "accelerators", "requests", "deployment", "replicas", "slo", "disaggregation"});
  ServeConfig c;
  c.source = root.source();
  if (auto v = root.maybe_child("name")) c.name = v->as_string();
  if (auto v = root.maybe_child("seed")) c.seed = v->as_seed();
  AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  if (auto v = root.maybe_child("accelerators")) catalogue.merge(*v);
  const ConfigNode deployment = root.child("deployment");
  c.deployment = deployment_from_yaml(deployment, catalogue);
  const ConfigNode replicas = root.child("replicas");
  const std::int64_t n = replicas.as_positive_int();
  if (n > 100000) replicas.fail("must be at most 100000, got " + std::to_string(n));
  c.replicas = static_cast<int>(n);
  c.slo = slo_from_yaml(root.child("slo"));
  if (auto d = root.maybe_child("disaggregation")) {
    c.disaggregation = disaggregation_from_yaml(*d);
    if (c.disaggregation.prefill_replicas >= c.replicas)
      d->child("prefill_replicas")
          .fail("is " + std::to_string(c.disaggregation.prefill_replicas) + ", but must be below replicas (" + std::to_string(c.replicas) +
                "): the other replicas decode");
  }
  try {
    ServingEngine check(c.deployment, c.replicas, c.disaggregation);  // weights that do not fit, bad limits
  } catch (const InputError& e) {
    deployment.fail(e.what());
  }
  const ConfigNode requests = root.child("requests");
  c.requests = requests_from_yaml(requests, c.seed);
  nlohmann::ordered_json req = yaml_to_json(requests.yaml());
  req["count"] = c.requests.size();
  req["first_arrival_s"] = c.requests.empty() ? 0.0 : c.requests.front().arrival_s;
  req["last_arrival_s"] = c.requests.empty() ? 0.0 : c.requests.back().arrival_s;
  nlohmann::ordered_json disaggregation = nullptr;
  if (c.disaggregation.enabled)
    disaggregation = {{"prefill_replicas", c.disaggregation.prefill_replicas}, {"kv_link_gbps", c.disaggregation.kv_link_bytes_per_s * 8 / 1e9}};
  c.resolved = {{"name", c.name},
                {"seed", c.seed},
                {"requests", req},
                {"deployment", deployment_json(c.deployment)},
                {"replicas", c.replicas},
                {"slo", {{"ttft_s", c.slo.ttft_s}, {"tpot_s", c.slo.tpot_s}}},
                {"disaggregation", disaggregation}};
  return c;
}

ServeConfig load_serve_config(const std::string& path) { return parse_serve_config(ConfigNode::load_file(path)); }

ServeResult run_serve(const ServeConfig& config) {
  ServingEngine engine(config.deployment, config.replicas, config.disaggregation);
  for (const Request& r : config.requests) engine.submit(r);
  ServeResult out;
  // Infinity: until nothing is left; the counters (active replica-seconds, idle energy)
  // then end at the last event, not at some far horizon.
  engine.advance_to(std::numeric_limits<double>::infinity(), out.records);
  if (out.records.size() != config.requests.size())
    throw InvariantError("serve: " + std::to_string(config.requests.size()) + " requests submitted, " + std::to_string(out.records.size()) + " finished");
  std::sort(out.records.begin(), out.records.end(), [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  double last_finish_s = 0;
  for (const auto& r : out.records) last_finish_s = std::max(last_finish_s, r.finish_s);
  out.summary = summarize(out.records, config.slo, last_finish_s);
  out.stats = engine.stats();
  return out;
}

std::string requests_csv(const std::vector<RequestRecord>& records) {
  std::string s = "id,arrival_s,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,prompt_tokens,output_tokens,replica,preemptions\n";
  s.reserve(s.size() + records.size() * 160);
  for (const auto& r : records) {
    s += std::to_string(r.id) + ',' + g17(r.arrival_s) + ',' + g17(r.first_token_s) + ',' + g17(r.finish_s) + ',' + g17(r.ttft_s()) + ',' +
         g17(r.tpot_s()) + ',' + g17(r.e2e_s()) + ',' + std::to_string(r.prompt_tokens) + ',' + std::to_string(r.output_tokens) + ',' +
         std::to_string(r.replica) + ',' + std::to_string(r.preemptions) + '\n';
  }
  return s;
}

nlohmann::ordered_json serve_results_json(const ServeConfig& config, const ServeResult& result) {
  const ServingSummary& s = result.summary;
  const ServingStats& t = result.stats;
  return {{"command", "serve"},
          {"name", config.name},
          {"seed", config.seed},
          {"summary",
           {{"requests", s.requests},
            {"duration_s", s.duration_s},
            {"ttft", latency_json(s.ttft)},
            {"tpot", latency_json(s.tpot)},
            {"e2e", latency_json(s.e2e)},
            {"slo_attainment", s.slo_attainment},
            {"goodput_rps", s.goodput_rps},
            {"output_tokens_per_s", s.output_tokens_per_s},
            {"preemptions", s.preemptions}}},
          {"stats",
           {{"iterations", t.iterations},
            {"preemptions", t.preemptions},
            {"busy_replica_s", t.busy_replica_s},
            {"active_replica_s", t.active_replica_s},
            {"energy_j", t.energy_j}}},
          {"config", config.resolved}};
}

std::string serve_table(const ServeConfig& config, const ServeResult& result) {
  const ServingSummary& s = result.summary;
  const DeploymentSpec& d = config.deployment;
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf, "serve: %lld requests, %s, %d replica(s) of %d x %s%s; last request done at %.1f s\n", static_cast<long long>(s.requests),
                d.model.name.c_str(), config.replicas, d.tensor_parallel, d.device.name.c_str(),
                config.disaggregation.enabled ? (" (" + std::to_string(config.disaggregation.prefill_replicas) + " prefill replicas)").c_str() : "",
                s.duration_s);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %-10s %10s %10s %10s %10s %10s\n", "", "mean", "p50", "p90", "p99", "max");
  out += buf;
  for (const auto& [label, l] : {std::pair<const char*, LatencySummary>{"TTFT (s)", s.ttft}, {"TPOT (s)", s.tpot}, {"E2E (s)", s.e2e}}) {
    std::snprintf(buf, sizeof buf, "  %-10s %10.4f %10.4f %10.4f %10.4f %10.4f\n", label, l.mean_s, l.p50_s, l.p90_s, l.p99_s, l.max_s);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  SLO (TTFT <= %g s, TPOT <= %g s): %.2f %% met; goodput %.3f req/s; %.1f output tokens/s; %lld preemptions\n",
                config.slo.ttft_s, config.slo.tpot_s, 100.0 * s.slo_attainment, s.goodput_rps, s.output_tokens_per_s,
                static_cast<long long>(s.preemptions));
  out += buf;
  return out;
}

void run_serve_cli(const ServeCliOptions& options, std::ostream& out) {
  check_output_path(options.out, "--out");
  const std::vector<std::string> files{"requests.csv", "results.json"};
  const ServeConfig config = load_serve_config(options.config);
  // A previous run's results go first: a failure below must not leave them looking current.
  clear_output_folder(options.out, files, false);
  const ServeResult result = run_serve(config);
  const std::string csv = requests_csv(result.records);
  const std::string json = serve_results_json(config, result).dump(2) + "\n";
  CreatedFolders created(options.out);
  std::error_code ec;
  fs::create_directories(options.out, ec);
  if (ec) throw InputError(options.out, "cannot create the output folder: " + ec.message());
  const std::string csv_path = (fs::path(options.out) / files[0]).string();
  const std::string json_path = (fs::path(options.out) / files[1]).string();
  write_file_atomically(csv_path, csv);
  try {
    write_file_atomically(json_path, json);
  } catch (...) {
    fs::remove(csv_path, ec);  // both or neither
    throw;
  }
  created.keep = true;
  if (!options.quiet) {
    out << serve_table(config, result);
    out << "  results in " << options.out << "/results.json and requests.csv\n";
  }
}

}  // namespace schedsim
