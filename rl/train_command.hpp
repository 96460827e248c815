// What the CLI needs from rl/ (no LibTorch in this header): `schedsim train`, and the
// `rl` policy that runs a trained checkpoint inside any scenario.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "run/progress.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "rl/dist_launch.hpp"

namespace schedsim::rl {

struct TrainOptions {
  std::string out_dir = "results/train";
  bool resume = false;    // continue from out_dir/checkpoint.pt
  bool progress = true;   // progress on stderr: a bar on a terminal, else a plain line every interval
  DistConfig dist;        // this process's rank; one process by default
  // Where progress goes and how (default: stderr, progress_style_from_environment()).
  std::optional<ProgressStyle> progress_style = std::nullopt;
  std::FILE* progress_out = stderr;
};

struct TrainOutcome {
  std::int64_t steps = 0;
  std::int64_t updates = 0;
  std::optional<double> eval_mean_jct_s;  // last evaluation
  // The best evaluation and the step it came at: its weights are OUT/best.pt.
  std::optional<double> best_eval_mean_jct_s;
  std::int64_t best_eval_step = -1;
  // False when the evaluation episodes are the training workload again (a trace workload
  // replays the same jobs whatever the seed), so the evaluation is not held out.
  bool eval_held_out = true;
  // The best heuristic of the scenario's information level on the evaluation episodes
  // (train.baseline: same_information); empty when none was scored.
  std::string best_heuristic;
  std::optional<double> best_heuristic_mean_jct_s;
  // Set when train.early_stop ended training before total_steps: what happened, in words.
  std::string early_stop;
  double wall_s = 0.0;
};

// Trains the agent described by scenario.train_yaml on the scenario's environment and
// writes OUT/checkpoint.pt (the last weights), OUT/best.pt (the weights of the best
// evaluation), OUT/policy.ts (TorchScript of the last), OUT/learning_curve.{csv,jsonl,svg}.
// With several ranks (options.dist) every rank trains and only rank 0 writes; with
// --resume every rank loads rank 0's checkpoint (OUT must be on a shared file system).
TrainOutcome train_agent(const ScenarioConfig& scenario, const TrainOptions& options);

// Adds the `rl` policy (option `path`: a checkpoint written by `schedsim train`); the
// registry then also accepts the short form "rl:PATH".
void register_rl_policy(PolicyRegistry& registry);

}  // namespace schedsim::rl
