#include "sim/training_plan.hpp"

#include "base/config_node.hpp"

namespace schedsim {

PlanRequest PlanRequest::parse(const ConfigNode& node) {
  PlanRequest r;
  r.where = node.where();
  if (node.is_scalar()) {
    r.kind = node.as_choice({"auto", "data_parallel"}) == "auto" ? Kind::kAuto : Kind::kDataParallel;
    return r;
  }
  if (!node.is_map()) node.fail("expected `auto`, `data_parallel` or a map of plan fields (docs/parallelism.md, \"The plan\")");
  node.expect_map({"tensor", "pipeline", "virtual_stages", "data", "expert", "context", "sequence_parallel", "fused_attention", "sharding",
                   "recompute", "micro_batch", "global_batch"});
  r.kind = Kind::kFixed;
  auto degree = [&](const char* key, std::optional<int>& out) {
    if (auto v = node.maybe_child(key)) {
      const std::int64_t x = v->as_positive_int();
      if (x > 1 << 24) v->fail("must be at most " + std::to_string(1 << 24) + ", got " + std::to_string(x));
      out = static_cast<int>(x);
    }
  };
  degree("tensor", r.tensor);
  degree("pipeline", r.pipeline);
  degree("virtual_stages", r.virtual_stages);
  degree("data", r.data);
  degree("expert", r.expert);
  degree("context", r.context);
  degree("micro_batch", r.micro_batch);
  degree("global_batch", r.global_batch);
  if (auto v = node.maybe_child("sequence_parallel")) r.sequence_parallel = v->as_bool();
  if (auto v = node.maybe_child("fused_attention")) r.fused_attention = v->as_bool();
  if (auto v = node.maybe_child("sharding")) r.sharding = v->as_choice({"zero0", "zero1", "zero2", "zero3", "fsdp"});
  if (auto v = node.maybe_child("recompute")) r.recompute = v->as_choice({"none", "selective", "full"});
  return r;
}

YAML::Node PlanRequest::to_yaml() const {
  if (kind == Kind::kAuto) return YAML::Node("auto");
  if (kind == Kind::kDataParallel) return YAML::Node("data_parallel");
  YAML::Node n(YAML::NodeType::Map);
  auto put = [&](const char* key, const std::optional<int>& v) {
    if (v) n[key] = *v;
  };
  put("tensor", tensor);
  put("pipeline", pipeline);
  put("virtual_stages", virtual_stages);
  put("data", data);
  put("expert", expert);
  put("context", context);
  if (sequence_parallel) n["sequence_parallel"] = *sequence_parallel;
  if (fused_attention) n["fused_attention"] = *fused_attention;
  if (!sharding.empty()) n["sharding"] = sharding;
  if (!recompute.empty()) n["recompute"] = recompute;
  put("micro_batch", micro_batch);
  put("global_batch", global_batch);
  return n;
}

bool PlanRequest::operator==(const PlanRequest& o) const {
  return kind == o.kind && tensor == o.tensor && pipeline == o.pipeline && virtual_stages == o.virtual_stages && data == o.data &&
         expert == o.expert && context == o.context && micro_batch == o.micro_batch && global_batch == o.global_batch &&
         sequence_parallel == o.sequence_parallel && fused_attention == o.fused_attention && sharding == o.sharding && recompute == o.recompute;
}

}  // namespace schedsim
