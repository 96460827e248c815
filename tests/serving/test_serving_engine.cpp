// Issue 26 (inference half): the request-level serving engine against closed forms,
// invariants and a published number. Model: docs/serving.md.
#include <catch2/catch.hpp>

#include "serving/serving_engine.hpp"

namespace schedsim::serving {
namespace {

const AcceleratorSpec& device(const char* name) {
  static const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  return catalogue.get(name);
}

DeploymentSpec llama2_7b_h100() {
  DeploymentSpec d;
  d.model = find_model("LLaMA-2-7B");
  d.device = device("H100-SXM");
  return d;
}

TEST_CASE("KV capacity: (utilisation x memory x tp - weights) / KV bytes per token, in whole blocks", "[serving]") {
  const ServingEngine engine(llama2_7b_h100(), 1);
  const DeploymentSpec d = llama2_7b_h100();
  const double weights = d.model.total_params() * 2;
  const double per_token = 2.0 * 32 * 4096 * 2;
  const auto blocks = static_cast<std::int64_t>((0.9 * 80e9 - weights) / (per_token * 16));
  CHECK(engine.kv_capacity_blocks() == blocks);
  CHECK(engine.kv_capacity_tokens() == blocks * 16);
}

}  // namespace
}  // namespace schedsim::serving
