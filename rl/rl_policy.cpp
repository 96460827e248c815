// The `rl` policy: a trained agent (a checkpoint of `schedsim train`) scheduling inside
// any run, acting greedily. It sees exactly what the agent saw in training: the RL
// environment's candidate rows and features, built by the same code (rl/env) against
// the live simulator, one action at a time (the kernel asks again after each start or
// preemption, as the environment does), until the agent picks "wait" or no row is legal.
// The decision point (rows, mask, what an action means) is rl/env/mdp.hpp's, the
// environment's own.
#include <memory>

#include "rl/env/candidates.hpp"
#include "rl/env/features.hpp"
#include "rl/env/mdp.hpp"
#include "rl/learner.hpp"
#include "rl/rl_plugin.hpp"
#include "rl/train_command.hpp"
#include "world/physics/cluster_physics.hpp"
#include "base/error.hpp"

namespace schedsim::rl {
namespace {

class RlPolicy final : public Policy {
 public:
  RlPolicy(std::shared_ptr<const GreedyAgent> agent, EnvConfig config, AcceleratorCatalogue accelerators)
      : agent_(std::move(agent)), config_(std::move(config)), accelerators_(std::move(accelerators)), queue_(config_.order, config_.information), mdp_(config_) {}

  std::string name() const override { return "rl"; }
  // A new run: the candidate builder is made again, for its cluster, at its first
  // decision point.
  void on_run_start(const SchedulerView& /*view*/) override { mdp_.reset(nullptr); }
  bool decide_again_after_actions() const override { return true; }
  // The agent is fixed and picks greedily; the candidate builder's rate cache and free
  // index are rebuilt: the pending queue is all the policy remembers.
  void snapshot(SnapshotArchive& ar) override { queue_.snapshot(ar); }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { queue_.on_job_queued(view, job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { queue_.on_job_finished(view, job); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (!mdp_.has_builder()) {
      const auto* physics = dynamic_cast<const ClusterPhysics*>(view.physics());
      mdp_.reset(std::make_unique<CandidateBuilder>(config_, view.cluster(), physics, view.node_group(), accelerators_));
    }
    const int k = config_.max_candidates;
    if (!mdp_.build(view, queue_, view.has_future_events())) {  // the environment lets the simulator run on here, asking nothing
      out.wake_at(mdp_.quantum_wake(view));
      return;
    }
    cand_.resize(static_cast<std::size_t>(k) * static_cast<std::size_t>(candidate_feature_count(config_)));
    glob_.resize(static_cast<std::size_t>(global_feature_count(config_)));
    mask_.resize(static_cast<std::size_t>(k) + 1);
    mdp_.write_observation(view, queue_, cand_.data(), glob_.data(), mask_.data(), &feature_logs_);
    int a = agent_->act(cand_.data(), glob_.data(), mask_.data(), k);
    if (a < 0 || a >= k) a = mdp_.wait_action();  // wait: until the next event, or the next signal change
    mdp_.decode(a, view, out);
    mdp_.commit(a, view.now(), queue_);
  }

 private:
  std::shared_ptr<const GreedyAgent> agent_;
  EnvConfig config_;
  AcceleratorCatalogue accelerators_;
  PendingQueue queue_;
  MdpStep mdp_;  // its candidate builder is made at a run's first decision point, from the view
  FeatureLogCache feature_logs_;  // saves work only: the rows are the same without it
  std::vector<float> cand_, glob_;
  std::vector<std::uint8_t> mask_;
};

}  // namespace

PolicyInstance make_rl_policy(const ConfigNode& config, const PolicyContext& context) {
  config.expect_map({"name", "path"});
  if (!config.has("path")) config.fail("the rl policy needs a checkpoint: {name: rl, path: FILE} or rl:FILE");
  const ConfigNode path_node = config.child("path");
  const std::string path = path_node.as_path();
  std::shared_ptr<const GreedyAgent> agent;
  try {
    agent = std::make_shared<const GreedyAgent>(path);
  } catch (const InputError& e) {
    path_node.fail(e.what());
  }
  EnvConfig env = context.env_yaml.IsDefined() && !context.env_yaml.IsNull() ? EnvConfig::parse(ConfigNode(context.env_yaml, "scenario", "env"))
                                                                              : EnvConfig{};
  env.information = context.information;
  env.check_information("policy 'rl'");
  const int f = candidate_feature_count(env), g = global_feature_count(env);
  if (agent->candidate_features() != f || agent->global_features() != g) {
    path_node.fail("the checkpoint's network reads " + std::to_string(agent->candidate_features()) + " candidate and " +
                   std::to_string(agent->global_features()) + " global features; this build's environment (with this scenario's env map) has " +
                   std::to_string(f) + " and " + std::to_string(g) + " (retrain the agent)");
  }
  PolicyInstance out;
  out.policy = std::make_unique<RlPolicy>(std::move(agent), std::move(env),
                                          context.accelerators ? *context.accelerators : AcceleratorCatalogue::builtin());
  YAML::Node resolved(YAML::NodeType::Map);
  resolved["name"] = "rl";
  resolved["path"] = path_node.as_string();
  out.resolved = resolved;
  return out;
}

// The name, description and options are rl_policy_doc()'s (rl_plugin_loader.cpp), which
// the executable lists without loading LibTorch.
void register_rl_policy(PolicyRegistry& registry) {
  PolicyInfo info = rl_policy_doc();
  info.make = make_rl_policy;
  registry.add(std::move(info));
}

}  // namespace schedsim::rl
