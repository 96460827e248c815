// The YAML sections of a serving config (issue 26; keys, units and defaults in
// docs/config.md, "schedsim serve"): `requests:`, `deployment:`, `slo:` and
// `disaggregation:`. Strict like every config section: unknown keys are listed, errors
// name the file, line and key and say what is allowed.
#pragma once

#include <cstdint>
#include <vector>

#include "serving/request.hpp"
#include "serving/request_stream.hpp"
#include "serving/serving_engine.hpp"
#include "serving/serving_metrics.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "base/config_node.hpp"

namespace schedsim::serving {

// `requests:` is one of
//   {trace: PATH, format: azure_llm, duration_s?, diurnal?: {amplitude, peak_hour}}
//   {synthetic: {rate_rps, duration_s, cv?, prompt_tokens, output_tokens, seed?}}
// PATH is relative to the YAML file's folder. A token distribution is one of
// {fixed: N}, {uniform: {min, max}}, {lognormal: {mean, sd}}, {trace: PATH, format?}.
// `default_seed` seeds a synthetic stream that gives no seed of its own.
std::vector<Request> requests_from_yaml(const ConfigNode& node);
std::vector<Request> requests_from_yaml(const ConfigNode& node, std::uint64_t default_seed);

// `deployment:` {model (a catalogue name or an inline model map, parallelism/model_spec.hpp),
// device (an accelerator catalogue type), tensor_parallel, max_batch_requests,
// max_batched_tokens, kv_block_tokens, gpu_memory_utilization, compute_efficiency,
// memory_efficiency, bytes_per_param}; model and device are required, the rest default
// to DeploymentSpec's values.
DeploymentSpec deployment_from_yaml(const ConfigNode& node, const AcceleratorCatalogue& catalogue);

// `disaggregation:` {prefill_replicas (>= 1), kv_link_gbps (gigabits/s, default 400)};
// present means enabled.
DisaggregationSpec disaggregation_from_yaml(const ConfigNode& node);

// `slo:` {ttft_s, tpot_s}, both required and > 0.
ServingSlo slo_from_yaml(const ConfigNode& node);

}  // namespace schedsim::serving
