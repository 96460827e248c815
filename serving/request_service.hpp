// Request-level inference services in the kernel (issue 26): the RequestLevelModel the
// world's service meter drives (sim/inference_service.hpp), over the serving engine
// (serving/serving_engine.hpp), and what the config derives from a deployment: the model
// load time, one replica's capacity for the autoscalers and the binned request rate.
// Model and rules: docs/energy.md#inference-services.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serving/request.hpp"
#include "serving/serving_config.hpp"
#include "serving/serving_engine.hpp"
#include "world/inference/inference_service.hpp"
#include "base/signals.hpp"

namespace schedsim {

// Bandwidth at which each device of a replica loads its weight shard when model_load_s
// is not given: a remote model store read at 1 GB/s per device.
constexpr double kModelLoadBytesPerSPerDevice = 1e9;
// Default scale-up latency: weight bytes / (tensor_parallel x kModelLoadBytesPerSPerDevice).
double default_model_load_s(const serving::DeploymentSpec& deployment);

// One replica's saturation throughput in requests/s (the autoscalers' per-replica
// capacity when capacity_rps is not given): `kSaturationRequests` requests of the
// stream's mean prompt and output tokens (rounded, at least 1 output token) all arriving at
// t = 0 on one replica, divided by the time the last one finishes.
constexpr int kSaturationRequests = 1024;
double saturation_capacity_rps(const serving::DeploymentSpec& deployment, const std::vector<serving::Request>& requests);

// The stream's arrivals per second in steps of step_s from simulated t = 0 (each step holds
// its arrivals / step_s), 0 after the last step: the rate curve the autoscalers read.
// Times are UTC microseconds from `origin_utc_us` (RequestRate::series).
StepSeries arrival_rate_series(const std::vector<serving::Request>& requests, double step_s, std::int64_t origin_utc_us);

struct RequestServiceSpec {
  std::string name;
  serving::DeploymentSpec deployment;
  serving::ServingSlo slo;
  double model_load_s = 0.0;  // warm-up of each added replica
  std::shared_ptr<const std::vector<serving::Request>> requests;
  bool requests_csv = false;  // write OUT/requests_<index>.csv (one row per finished request)
};

// The service's engine for one run: a fresh ServingEngine per start().
class EngineRequestModel : public RequestLevelModel {
 public:
  explicit EngineRequestModel(RequestServiceSpec spec);
  std::unique_ptr<RequestServer> start(double start_s, int replicas) const override;
  const std::string& device_type() const override { return spec_.deployment.device.name; }
  const RequestServiceSpec& spec() const { return spec_; }

 private:
  RequestServiceSpec spec_;
};

}  // namespace schedsim
