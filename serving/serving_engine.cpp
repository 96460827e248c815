// Skeleton: the API builds; the batching engine follows on this branch.
#include "serving/serving_engine.hpp"

#include <cmath>
#include <string>

#include "serving/roofline.hpp"
#include "sim/error.hpp"

namespace schedsim::serving {

struct ServingEngine::Impl {
  DeploymentSpec deployment;
  DisaggregationSpec disaggregation;
  BatchRoofline roofline;
  int wanted = 0;
  double now_s = 0;
  std::int64_t capacity_blocks = 0;
  ServingStats stats;
  Impl(DeploymentSpec d, DisaggregationSpec g) : deployment(std::move(d)), disaggregation(g), roofline(deployment) {}
};

ServingEngine::ServingEngine(DeploymentSpec deployment, int replicas, DisaggregationSpec disaggregation)
    : impl_(std::make_unique<Impl>(std::move(deployment), disaggregation)) {
  impl_->wanted = replicas;
  const DeploymentSpec& d = impl_->deployment;
  const double usable = d.gpu_memory_utilization * d.device.memory_bytes * d.tensor_parallel;
  const double kv_bytes_per_block = impl_->roofline.kv_bytes_per_token() * d.kv_block_tokens;
  impl_->capacity_blocks = static_cast<std::int64_t>(std::floor((usable - impl_->roofline.weight_bytes()) / kv_bytes_per_block));
}
ServingEngine::~ServingEngine() = default;
ServingEngine::ServingEngine(const ServingEngine& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
ServingEngine& ServingEngine::operator=(const ServingEngine& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
ServingEngine::ServingEngine(ServingEngine&&) noexcept = default;
ServingEngine& ServingEngine::operator=(ServingEngine&&) noexcept = default;

void ServingEngine::submit(const Request&) {}
void ServingEngine::advance_to(double t_s, std::vector<RequestRecord>&) { impl_->now_s = t_s; }
void ServingEngine::set_replicas(double, int replicas, double) { impl_->wanted = replicas; }
double ServingEngine::now_s() const { return impl_->now_s; }
int ServingEngine::replicas() const { return impl_->wanted; }
std::int64_t ServingEngine::waiting() const { return 0; }
std::int64_t ServingEngine::running() const { return 0; }
const ServingStats& ServingEngine::stats() const { return impl_->stats; }
std::int64_t ServingEngine::kv_capacity_tokens() const { return impl_->capacity_blocks * impl_->deployment.kv_block_tokens; }
std::int64_t ServingEngine::kv_capacity_blocks() const { return impl_->capacity_blocks; }
std::int64_t ServingEngine::peak_kv_blocks_used() const { return 0; }
double ServingEngine::iteration_time_s(const std::vector<std::pair<std::int64_t, std::int64_t>>& prefill_chunks,
                                       std::int64_t decodes, std::int64_t decode_context_tokens) const {
  return impl_->roofline.iteration_time_s(prefill_chunks, decodes, decode_context_tokens);
}
double ServingEngine::kv_transfer_time_s(std::int64_t prompt_tokens) const {
  if (!impl_->disaggregation.enabled) return 0;
  return impl_->roofline.kv_bytes_per_token() * static_cast<double>(prompt_tokens) / impl_->disaggregation.kv_link_bytes_per_s;
}

std::vector<RequestRecord> serve_all(const DeploymentSpec& deployment, int replicas, const std::vector<Request>& requests,
                                     DisaggregationSpec disaggregation) {
  ServingEngine engine(deployment, replicas, disaggregation);
  for (const Request& r : requests) engine.submit(r);
  std::vector<RequestRecord> out;
  engine.advance_to(1e300, out);
  return out;
}

}  // namespace schedsim::serving
