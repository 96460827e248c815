// Request-level LLM serving (issue 26): replicas of one model deployment running
// continuous batching with prefill and decode phases, a KV-cache memory limit, and
// per-iteration time from a roofline of the batch; optionally prefill/decode
// disaggregation with KV transfer. Event-driven: time jumps from one batch iteration
// to the next. Model and formulas: docs/serving.md.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "parallelism/model_spec.hpp"
#include "serving/request.hpp"
#include "world/physics/accelerator_catalogue.hpp"

namespace schedsim::serving {

// How one replica serves: the model, the device type, the tensor-parallel degree (devices
// per replica) and the batching limits.
struct DeploymentSpec {
  ModelSpec model;
  AcceleratorSpec device;
  int tensor_parallel = 1;             // devices per replica (one NVLink domain)
  int max_batch_requests = 256;        // most sequences in one iteration
  int max_batched_tokens = 8192;       // token budget of one iteration (prefill chunks + decodes)
  int kv_block_tokens = 16;            // KV cache allocation unit, tokens
  double gpu_memory_utilization = 0.9; // share of device memory for weights + KV cache
  double compute_efficiency = 0.6;     // achieved / peak FLOP/s in prefill
  double memory_efficiency = 0.8;      // achieved / peak memory bandwidth in decode
  double bytes_per_param = 2.0;        // bf16 weights and KV cache
};

// Prefill/decode disaggregation (Splitwise/DistServe style): of the replicas, the first
// `prefill_replicas` only prefill, the rest only decode; a request's KV cache moves from its
// prefill replica to a decode replica over `kv_link_bytes_per_s`.
struct DisaggregationSpec {
  bool enabled = false;
  int prefill_replicas = 0;
  double kv_link_bytes_per_s = 50e9;
};

// Counters of a run so far.
struct ServingStats {
  std::int64_t iterations = 0;        // batch iterations over all replicas
  std::int64_t preemptions = 0;       // KV-cache evictions
  double busy_replica_s = 0.0;        // replica-seconds spent in iterations
  double active_replica_s = 0.0;      // replica-seconds of replicas up (busy or idle)
  double energy_j = 0.0;              // devices of up replicas: busy at TDP-based power, idle at idle_w
};

class ServingEngine {
 public:
  // Throws InputError when the model's weights do not fit tensor_parallel devices (naming
  // the model, device and the numbers) or a limit is not positive.
  ServingEngine(DeploymentSpec deployment, int replicas, DisaggregationSpec disaggregation = {});
  ~ServingEngine();
  ServingEngine(const ServingEngine& other);             // deep copy (a snapshot of the run)
  ServingEngine& operator=(const ServingEngine& other);
  ServingEngine(ServingEngine&&) noexcept;
  ServingEngine& operator=(ServingEngine&&) noexcept;

  // Requests must be submitted in non-decreasing arrival order, at or after now_s();
  // each is routed on arrival (least outstanding tokens, lowest index on ties).
  void submit(const Request& request);
  // Runs every replica up to t_s (>= now_s()), appending requests that finish at or before
  // t_s to `finished` in finish order (ties: lower id first). t_s may be infinity: runs
  // until nothing is left, and now_s() is then the time of the last event.
  void advance_to(double t_s, std::vector<RequestRecord>& finished);
  // From t_s (>= now_s()) on, `replicas` are wanted. Added replicas take requests from
  // t_s + warmup_s (model load); removed ones (highest index first) stop taking requests
  // at once and their running requests move back to the queue (KV recomputed elsewhere).
  void set_replicas(double t_s, int replicas, double warmup_s);

  double now_s() const;
  int replicas() const;               // wanted replicas (including warming up)
  std::int64_t waiting() const;       // arrived, not yet prefilled
  std::int64_t running() const;       // in a batch (prefilling or decoding)
  const ServingStats& stats() const;
  // Tokens of KV cache one replica holds (after weights), the limit batching obeys.
  std::int64_t kv_capacity_tokens() const;
  // ...implementation members are the serving helper's to choose.

  // The same limit in allocation blocks (kv_block_tokens each), and the most blocks any
  // one replica has held at once so far (never above kv_capacity_blocks()).
  std::int64_t kv_capacity_blocks() const;
  std::int64_t peak_kv_blocks_used() const;
  // Replicas up and past their warmup at now_s() (those that take requests), and the
  // routing load: prefill and output tokens still to compute, over all replicas.
  int ready_replicas() const;
  std::int64_t outstanding_tokens() const;
  // Seconds of one iteration of a batch on one replica (the roofline of docs/serving.md):
  // prefill chunks given as (tokens already cached, chunk tokens) pairs, plus `decodes`
  // sequences decoding one token each over a total context of `decode_context_tokens`.
  double iteration_time_s(const std::vector<std::pair<std::int64_t, std::int64_t>>& prefill_chunks,
                          std::int64_t decodes, std::int64_t decode_context_tokens) const;
  // Seconds to move the KV cache of a `prompt_tokens` prompt between replicas under
  // disaggregation (0 when disaggregation is off).
  double kv_transfer_time_s(std::int64_t prompt_tokens) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience: every request through `replicas` replicas until all finish; records in
// finish order.
std::vector<RequestRecord> serve_all(const DeploymentSpec& deployment, int replicas, const std::vector<Request>& requests,
                                     DisaggregationSpec disaggregation = {});

}  // namespace schedsim::serving
