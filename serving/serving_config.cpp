#include "serving/serving_config.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <string>

#include "parallelism/model_spec.hpp"
#include "base/error.hpp"

namespace schedsim::serving {

namespace {

// A positive integer no larger than `max_value`, located at the key.
int bounded_int(const ConfigNode& v, std::int64_t max_value) {
  const std::int64_t x = v.as_positive_int();
  if (x > max_value) v.fail("must be at most " + std::to_string(max_value) + ", got " + std::to_string(x));
  return static_cast<int>(x);
}

// A share in (0, 1].
double share(const ConfigNode& v) {
  const double x = v.as_positive_double();
  if (x > 1.0) v.fail("must be a share in (0, 1], got " + std::to_string(x));
  return x;
}

constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();

// Traces named by token distributions, read once per resolved path, so that prompt and
// output resampling the same file share one table (and draw one row for both).
using TraceCache = std::map<std::string, std::shared_ptr<const std::vector<Request>>>;

void check_format(const ConfigNode& node) {
  if (auto f = node.maybe_child("format")) f->as_choice({"azure_llm"});
}

TokenDistribution token_distribution(const ConfigNode& node, TraceCache& traces) {
  const char* shapes = "{fixed: N}, {uniform: {min, max}}, {lognormal: {mean, sd}} or {trace: PATH, format: azure_llm}";
  if (!node.is_map()) node.fail(std::string("expected a token distribution: one of ") + shapes);
  node.expect_map({"fixed", "uniform", "lognormal", "trace", "format"});
  int kinds = 0;
  for (const char* k : {"fixed", "uniform", "lognormal", "trace"}) kinds += node.has(k) ? 1 : 0;
  if (kinds != 1) node.fail(std::string(kinds == 0 ? "gives no distribution" : "gives more than one distribution") + "; expected one of " + shapes);
  if (node.has("format") && !node.has("trace")) node.child("format").fail("only goes with trace:");
  if (auto v = node.maybe_child("fixed")) return TokenDistribution::fixed(bounded_int(*v, kMaxTokens));
  if (auto v = node.maybe_child("uniform")) {
    v->expect_map({"min", "max"});
    const int lo = bounded_int(v->child("min"), kMaxTokens);
    const int hi = bounded_int(v->child("max"), kMaxTokens);
    if (hi < lo) v->child("max").fail("is " + std::to_string(hi) + ", below min (" + std::to_string(lo) + ")");
    return TokenDistribution::uniform(lo, hi);
  }
  if (auto v = node.maybe_child("lognormal")) {
    v->expect_map({"mean", "sd"});
    const ConfigNode mean = v->child("mean");
    const double m = mean.as_positive_double();
    if (m < 1 || m > 1e9) mean.fail("must be in [1, 1e9] tokens, got " + std::to_string(m));
    const ConfigNode sd = v->child("sd");
    const double s = sd.as_nonnegative_double();
    if (s > 1e9) sd.fail("must be at most 1e9 tokens, got " + std::to_string(s));
    return TokenDistribution::lognormal(m, s);
  }
  check_format(node);
  const std::string path = node.child("trace").as_path();
  auto& table = traces[path];
  if (!table) table = std::make_shared<const std::vector<Request>>(read_azure_llm_trace(path));
  return TokenDistribution::resample(table, path);
}

SyntheticStreamSpec synthetic_spec(const ConfigNode& node, std::uint64_t default_seed) {
  if (!node.is_map()) node.fail("expected a map {rate_rps, duration_s, cv, prompt_tokens, output_tokens, seed}");
  node.expect_map({"rate_rps", "duration_s", "cv", "prompt_tokens", "output_tokens", "seed"});
  SyntheticStreamSpec s;
  s.rate_rps = node.child("rate_rps").as_positive_double();
  if (auto v = node.maybe_child("duration_s")) s.duration_s = v->as_positive_double();
  if (auto v = node.maybe_child("cv")) {
    s.cv = v->as_positive_double();
    if (s.cv > 100) v->fail("must be in (0, 100], got " + std::to_string(s.cv));
  }
  if (s.rate_rps * s.duration_s > kMaxSyntheticRequests)
    node.fail("rate_rps x duration_s is " + std::to_string(s.rate_rps * s.duration_s) + " requests, over the limit of 100000000");
  TraceCache traces;
  s.prompt = token_distribution(node.child("prompt_tokens"), traces);
  s.output = token_distribution(node.child("output_tokens"), traces);
  s.seed = default_seed;
  if (auto v = node.maybe_child("seed")) s.seed = v->as_seed();
  return s;
}

}  // namespace

std::vector<Request> requests_from_yaml(const ConfigNode& node) { return requests_from_yaml(node, 1); }

std::vector<Request> requests_from_yaml(const ConfigNode& node, std::uint64_t default_seed) {
  const char* shapes = "{trace: PATH, format: azure_llm, duration_s, diurnal: {amplitude, peak_hour}} or {synthetic: {rate_rps, ...}}";
  if (!node.is_map()) node.fail(std::string("expected a request stream: ") + shapes);
  node.expect_map({"trace", "format", "duration_s", "diurnal", "synthetic"});
  if (node.has("trace") == node.has("synthetic"))
    node.fail(std::string(node.has("trace") ? "gives both trace: and synthetic:" : "gives neither trace: nor synthetic:") + "; expected " + shapes);
  if (auto s = node.maybe_child("synthetic")) {
    for (const char* k : {"format", "duration_s", "diurnal"})
      if (node.has(k)) node.child(k).fail("only goes with trace: (a synthetic stream takes its duration_s inside synthetic:)");
    return synthetic_requests(synthetic_spec(*s, default_seed));
  }
  if (!node.has("format")) node.fail("missing format: the trace's format; allowed: azure_llm");
  check_format(node);
  std::optional<double> duration_s;
  if (auto v = node.maybe_child("duration_s")) {
    duration_s = v->as_positive_double();
    if (*duration_s > 1e9) v->fail("must be at most 1e9 seconds, got " + std::to_string(*duration_s));
  }
  std::optional<DiurnalShape> diurnal;
  if (auto d = node.maybe_child("diurnal")) {
    if (!d->is_map()) d->fail("expected a map {amplitude, peak_hour}");
    d->expect_map({"amplitude", "peak_hour"});
    DiurnalShape shape;
    const ConfigNode a = d->child("amplitude");
    shape.amplitude = a.as_nonnegative_double();
    if (!(shape.amplitude < 1)) a.fail("must be in [0, 1) (the rate stays positive), got " + std::to_string(shape.amplitude));
    if (auto p = d->maybe_child("peak_hour")) {
      shape.peak_hour = p->as_nonnegative_double();
      if (!(shape.peak_hour < 24)) p->fail("must be an hour in [0, 24), got " + std::to_string(shape.peak_hour));
    }
    diurnal = shape;
  }
  const ConfigNode trace = node.child("trace");
  std::vector<Request> requests = read_azure_llm_trace(trace.as_path());
  if (!duration_s && !diurnal) return requests;
  const double span_s = requests.back().arrival_s - requests.front().arrival_s;
  if (!(span_s > 0))
    node.child(duration_s ? "duration_s" : "diurnal")
        .fail("cannot rescale a trace whose " + std::to_string(requests.size()) + " request(s) all arrive at one time");
  const double target_s = duration_s ? *duration_s : span_s;
  return rescale_time(std::move(requests), target_s, diurnal ? &*diurnal : nullptr);
}

DeploymentSpec deployment_from_yaml(const ConfigNode& node, const AcceleratorCatalogue& catalogue) {
  if (!node.is_map()) node.fail("expected a map {model, device, tensor_parallel, max_batch_requests, ...}");
  node.expect_map({"model", "device", "tensor_parallel", "max_batch_requests", "max_batched_tokens", "kv_block_tokens",
                   "gpu_memory_utilization", "compute_efficiency", "memory_efficiency", "bytes_per_param"});
  DeploymentSpec d;
  const ConfigNode model = node.child("model");
  if (model.is_map()) {
    d.model = model_from_yaml(model);
  } else {
    try {
      d.model = find_model(model.as_string());
    } catch (const InputError& e) {
      // Located at the key, with the catalogue's list.
      const std::string what = e.what();
      model.fail(what.substr(what.find(": ") + 2));
    }
  }
  d.device = catalogue.get(node.child("device"));
  if (auto v = node.maybe_child("tensor_parallel")) d.tensor_parallel = bounded_int(*v, 1024);
  if (auto v = node.maybe_child("max_batch_requests")) d.max_batch_requests = bounded_int(*v, 1 << 20);
  if (auto v = node.maybe_child("max_batched_tokens")) d.max_batched_tokens = bounded_int(*v, 1 << 30);
  if (auto v = node.maybe_child("kv_block_tokens")) d.kv_block_tokens = bounded_int(*v, 1 << 20);
  if (auto v = node.maybe_child("gpu_memory_utilization")) d.gpu_memory_utilization = share(*v);
  if (auto v = node.maybe_child("compute_efficiency")) d.compute_efficiency = share(*v);
  if (auto v = node.maybe_child("memory_efficiency")) d.memory_efficiency = share(*v);
  if (auto v = node.maybe_child("bytes_per_param")) {
    d.bytes_per_param = v->as_positive_double();
    if (d.bytes_per_param > 8) v->fail("must be at most 8 bytes (fp64), got " + std::to_string(d.bytes_per_param));
  }
  return d;
}

DisaggregationSpec disaggregation_from_yaml(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map {prefill_replicas, kv_link_gbps}");
  node.expect_map({"prefill_replicas", "kv_link_gbps"});
  DisaggregationSpec d;
  d.enabled = true;
  d.prefill_replicas = bounded_int(node.child("prefill_replicas"), 1 << 20);
  if (auto v = node.maybe_child("kv_link_gbps")) {
    const double gbps = v->as_positive_double();
    if (gbps > 1e7) v->fail("must be at most 1e7 Gb/s, got " + std::to_string(gbps));
    d.kv_link_bytes_per_s = gbps * 1e9 / 8.0;  // gigabits per second, like nic_bandwidth_gbps
  }
  return d;
}

ServingSlo slo_from_yaml(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map {ttft_s, tpot_s}");
  node.expect_map({"ttft_s", "tpot_s"});
  ServingSlo s;
  s.ttft_s = node.child("ttft_s").as_positive_double();
  s.tpot_s = node.child("tpot_s").as_positive_double();
  return s;
}

}  // namespace schedsim::serving
