#include "scenario/sections/train_section.hpp"

#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

#include <algorithm>

namespace schedsim::rl {

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kPpo: return "ppo";
    case Algorithm::kA2c: return "a2c";
    case Algorithm::kReinforce: return "reinforce";
  }
  return "?";
}

namespace {

int positive_int(const ConfigNode& n, std::int64_t max) {
  const std::int64_t v = n.as_positive_int();
  if (v > max) n.fail("must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

double unit_interval(const ConfigNode& n) {
  const double v = n.as_nonnegative_double();
  if (v > 1.0) n.fail("must be in [0, 1], got " + n.as_string());
  return v;
}

}  // namespace

double TrainConfig::entropy_coef_at(std::int64_t steps) const {
  if (std::isnan(entropy_final)) return entropy_coef;  // the default: exactly today's constant
  const double progress = std::min(1.0, static_cast<double>(steps) / static_cast<double>(total_steps));
  return entropy_coef + (entropy_final - entropy_coef) * progress;
}

TrainConfig TrainConfig::parse(const ConfigNode& node) {
  TrainConfig c;
  if (node.is_null()) return c;
  node.expect_map({"algorithm", "total_steps", "num_envs", "rollout_steps", "epochs", "minibatch", "lr", "lr_schedule", "gamma",
                   "gae_lambda", "clip", "entropy_coef", "value_coef", "max_grad_norm", "hidden", "seed", "eval_every",
                   "eval_seed_start", "eval_episodes", "train_seed_start", "threads", "env_threads", "device", "checkpoint_every", "dist_timeout_s",
                   "baseline", "early_stop", "entropy_final", "reward_norm", "input_baseline"});
  if (auto n = node.maybe_child("algorithm")) {
    const std::string a = n->as_choice({"ppo", "a2c", "reinforce"});
    c.algorithm = a == "ppo" ? Algorithm::kPpo : a == "a2c" ? Algorithm::kA2c : Algorithm::kReinforce;
  }
  if (auto n = node.maybe_child("total_steps")) c.total_steps = n->as_positive_int();
  if (auto n = node.maybe_child("num_envs")) c.num_envs = positive_int(*n, 4096);
  if (auto n = node.maybe_child("rollout_steps")) {
    const std::int64_t v = n->as_int();
    if (v < 0) n->fail("must be 0 (whole episodes) or a positive number of steps, got " + std::to_string(v));
    c.rollout_steps = static_cast<int>(v);
  }
  if (auto n = node.maybe_child("epochs")) c.epochs = positive_int(*n, 1000);
  if (auto n = node.maybe_child("minibatch")) c.minibatch = positive_int(*n, 1 << 24);
  if (auto n = node.maybe_child("lr")) c.lr = n->as_positive_double();
  if (auto n = node.maybe_child("lr_schedule")) c.lr_schedule = n->as_choice({"constant", "linear"});
  if (auto n = node.maybe_child("gamma")) c.gamma = unit_interval(*n);
  if (auto n = node.maybe_child("gae_lambda")) c.gae_lambda = unit_interval(*n);
  if (auto n = node.maybe_child("clip")) c.clip = n->as_positive_double();
  if (auto n = node.maybe_child("entropy_coef")) c.entropy_coef = n->as_nonnegative_double();
  if (auto n = node.maybe_child("value_coef")) c.value_coef = n->as_nonnegative_double();
  if (auto n = node.maybe_child("max_grad_norm")) c.max_grad_norm = n->as_positive_double();
  if (auto n = node.maybe_child("hidden")) {
    if (!n->is_sequence() || n->size() == 0) n->fail("must be a non-empty list of layer widths, e.g. [64, 64]");
    c.hidden.clear();
    for (std::size_t i = 0; i < n->size(); ++i) c.hidden.push_back(positive_int(n->at(i), 4096));
  }
  if (auto n = node.maybe_child("seed")) c.seed = n->as_seed();
  if (auto n = node.maybe_child("eval_every")) {
    const std::int64_t v = n->as_int();
    if (v < 0) n->fail("must be 0 (only at the end) or a positive number of steps, got " + std::to_string(v));
    c.eval_every = v;
  }
  if (auto n = node.maybe_child("eval_seed_start")) c.eval_seed_start = n->as_seed();
  if (auto n = node.maybe_child("eval_episodes")) c.eval_episodes = positive_int(*n, 4096);
  if (auto n = node.maybe_child("train_seed_start")) c.train_seed_start = n->as_seed();
  if (auto n = node.maybe_child("threads")) c.threads = positive_int(*n, 1024);
  if (auto n = node.maybe_child("env_threads")) c.env_threads = positive_int(*n, 1024);
  if (auto n = node.maybe_child("device")) c.device = n->as_choice({"cpu", "cuda"});
  if (auto n = node.maybe_child("checkpoint_every")) c.checkpoint_every = n->as_positive_int();
  if (auto n = node.maybe_child("dist_timeout_s")) c.dist_timeout_s = n->as_positive_double();
  if (auto n = node.maybe_child("entropy_final")) c.entropy_final = n->as_nonnegative_double();
  if (auto n = node.maybe_child("reward_norm")) c.reward_norm_running_std = n->as_choice({"running_std", "none"}) == "running_std";
  if (auto n = node.maybe_child("baseline")) c.baseline_heuristics = n->as_choice({"same_information", "none"}) == "same_information";
  if (auto n = node.maybe_child("early_stop")) {
    n->expect_map({"patience", "min_delta"});
    if (!n->has("patience")) n->fail("needs 'patience': the number of evaluations without improvement before training stops (e.g. patience: 3)");
    c.early_stop_patience = positive_int(n->child("patience"), 1'000'000);
    if (auto d = n->maybe_child("min_delta")) c.early_stop_min_delta = unit_interval(*d);
  }
  if (auto n = node.maybe_child("input_baseline")) {
    const std::int64_t v = n->as_int();
    if (v < 0 || v == 1 || v > 4096) n->fail("must be 0 (off) or a number of copies per training workload >= 2, got " + std::to_string(v));
    c.input_baseline = static_cast<int>(v);
    if (c.input_baseline > 0 && c.num_envs % c.input_baseline != 0) {
      n->fail("needs num_envs (" + std::to_string(c.num_envs) + ") to be a multiple of it (" + std::to_string(v) + "): each workload runs in that many environments");
    }
    if (c.input_baseline > 0 && c.rollout_steps > 0) n->fail("compares whole episodes; it cannot be combined with rollout_steps (" + std::to_string(c.rollout_steps) + ")");
  }
  // Held out means never trained on: the training seeds start above the evaluation ones.
  if (c.eval_seed_start + static_cast<std::uint64_t>(c.eval_episodes) > c.train_seed_start) {
    (node.has("train_seed_start") ? node.child("train_seed_start") : node)
        .fail("the evaluation seeds " + std::to_string(c.eval_seed_start) + ".." + std::to_string(c.eval_seed_start + c.eval_episodes - 1) +
              " must lie below train_seed_start (" + std::to_string(c.train_seed_start) + ") so that evaluation stays held out");
  }
  return c;
}

}  // namespace schedsim::rl

namespace schedsim::sections {

// `train:` as a scenario section: checked by every command (docs/config.md#train), kept
// typed (ScenarioConfig::train); not part of the resolved YAML.
ScenarioSection train_section() {
  ScenarioSection s;
  s.key = "train";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    p.scenario.train = rl::TrainConfig::parse(node);
    p.scenario.train_yaml = node.yaml();  // a handle: keeps line numbers for rl/'s messages
  };
  return s;
}

}  // namespace schedsim::sections
