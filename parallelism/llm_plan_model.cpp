#include "parallelism/llm_plan_model.hpp"

#include <cmath>
#include <limits>

#include "base/error.hpp"

namespace schedsim {

namespace {

Sharding sharding_of(const std::string& s) {
  if (s == "zero1") return Sharding::kZero1;
  if (s == "zero2") return Sharding::kZero2;
  if (s == "zero3") return Sharding::kZero3;
  if (s == "fsdp") return Sharding::kFsdp;
  return Sharding::kNone;
}

Recompute recompute_of(const std::string& s) {
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  return Recompute::kNone;
}

}  // namespace

LlmPlanModel::LlmPlanModel(const std::vector<std::pair<std::string, PlanRequest>>& requests, TopologyConfig topology, PlannerOptions options)
    : topology_(std::move(topology)), options_(std::move(options)) {
  for (const auto& [name, request] : requests) {
    if (request.kind == PlanRequest::Kind::kDataParallel) continue;
    ModelSpec model;
    try {
      model = find_model(name);
    } catch (const InputError& e) {
      throw InputError(request.where, std::string("a plan needs a model of the parallelism catalogue: ") + e.what());
    }
    entries_.emplace(name, Entry{std::move(model), request});
  }
}

const LlmPlanModel::Entry* LlmPlanModel::entry_of(const JobSpec& job) const {
  if (job.model.empty() || entries_.empty()) return nullptr;
  if (job.model == last_model_) return last_entry_;
  auto it = entries_.find(job.model);
  last_model_ = job.model;
  last_entry_ = it == entries_.end() ? nullptr : &it->second;
  return last_entry_;
}

int LlmPlanModel::default_global_batch(const ModelSpec& model) {
  return std::max(1, static_cast<int>(std::lround(4194304.0 / model.seq_length)));
}

double LlmPlanModel::params(const JobSpec& job) const {
  const Entry* e = entry_of(job);
  return e ? e->model.total_params() : 0.0;
}

PlannedIteration LlmPlanModel::plan(const JobSpec& job, const AcceleratorSpec& device, int num_devices, int devices_per_node,
                                    bool ignore_memory) const {
  const Entry* e = entry_of(job);
  if (!e) throw InvariantError("a parallelism plan asked for job '" + job.id + "', whose model '" + job.model + "' has none");
  const auto key = std::make_tuple(job.model, &device, num_devices, devices_per_node, ignore_memory);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, compute(*e, device, num_devices, devices_per_node, ignore_memory)).first;
  return it->second;
}

PlannedIteration LlmPlanModel::compute(const Entry& e, const AcceleratorSpec& device, int num_devices, int devices_per_node,
                                       bool ignore_memory) const {
  const ClusterNetwork network = ClusterNetwork::from_topology(topology_, device, devices_per_node);
  const PlanRequest& r = e.request;
  const int global_batch = r.global_batch.value_or(default_global_batch(e.model));
  // For the reference placement only: the same device with unlimited memory.
  AcceleratorSpec unlimited = device;
  if (ignore_memory) unlimited.memory_bytes = std::numeric_limits<double>::infinity();
  const AcceleratorSpec& dev = ignore_memory ? unlimited : device;
  PlannedIteration out;
  try {
    ParallelismPlan plan;
    MemoryBreakdown memory;
    IterationBreakdown time;
    if (r.kind == PlanRequest::Kind::kAuto) {
      const PlanChoice c = plan_training(e.model, dev, network, num_devices, global_batch, options_);
      plan = c.plan;
      memory = c.memory;
      time = c.time;
    } else {
      plan.tensor = r.tensor.value_or(1);
      plan.pipeline = r.pipeline.value_or(1);
      plan.virtual_stages = r.virtual_stages.value_or(1);
      plan.context = r.context.value_or(1);
      plan.expert = r.expert.value_or(1);
      plan.sequence_parallel = r.sequence_parallel.value_or(true);
      plan.fused_attention = r.fused_attention.value_or(true);
      plan.sharding = sharding_of(r.sharding);
      plan.recompute = recompute_of(r.recompute);
      plan.micro_batch = r.micro_batch.value_or(1);
      plan.global_batch = global_batch;
      const int split = plan.tensor * plan.context * plan.pipeline;
      if (r.data) {
        plan.data = *r.data;
      } else if (num_devices % split == 0) {
        plan.data = num_devices / split;
      } else {
        throw InputError("plan " + plan.describe() + " for " + e.model.name + " on " + std::to_string(num_devices) + " x " + device.name,
                         "tensor x context x pipeline = " + std::to_string(split) + " does not divide the " + std::to_string(num_devices) +
                             " devices offered");
      }
      if (plan.num_devices() != num_devices) {
        throw InputError("plan " + plan.describe() + " for " + e.model.name + " on " + std::to_string(num_devices) + " x " + device.name,
                         "the plan needs " + std::to_string(plan.num_devices()) + " devices (tensor x context x pipeline x data), " +
                             std::to_string(num_devices) + " are offered");
      }
      plan.validate(e.model);
      if (!ignore_memory) check_fits(e.model, plan, device, options_.memory);
      memory = memory_per_device(e.model, plan, options_.memory);
      time = iteration_time(e.model, plan, device, network, options_.time);
    }
    out.plan = plan.describe();
    out.iteration_s = time.iteration_s;
    out.compute_s = time.compute_s + time.elementwise_s;
    out.memory_bytes = memory.total_bytes();
    out.dp_network_bytes_per_device = time.dp_network_bytes;
  } catch (const InputError& err) {
    out.problem = err.what();
  }
  return out;
}

}  // namespace schedsim
