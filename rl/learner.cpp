// PPO / A2C / REINFORCE on the masked candidate-scoring network (the only LibTorch
// translation unit of the learners; see learner.hpp).
#include "rl/learner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "rl/distributed.hpp"
#include "rl/eigen_policy_net.hpp"
#include "rl/input_baseline.hpp"
#include "rl/policy_net.hpp"
#include "base/error.hpp"

// Weak: absent when LibTorch uses another BLAS.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace schedsim::rl {
namespace {

constexpr std::int64_t kCheckpointVersion = 1;
// Adds the process CPU time (all threads) of its scope to a LearnerTimes field. CPU
// time, not wall time: on a busy machine the wall time of a phase is mostly waiting for
// a core.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& total_s) : total_s_(total_s), start_(std::clock()) {}
  ~PhaseTimer() { total_s_ += static_cast<double>(std::clock() - start_) / CLOCKS_PER_SEC; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& total_s_;
  std::clock_t start_;
};

torch::Tensor i64(std::initializer_list<std::int64_t> v) { return torch::tensor(std::vector<std::int64_t>(v), torch::kInt64); }

struct Meta {
  int candidate_features = 0, global_features = 0;
  std::vector<int> hidden;
};

void write_meta(torch::serialize::OutputArchive& a, const Meta& m) {
  a.write("version", i64({kCheckpointVersion}));
  a.write("shape", i64({m.candidate_features, m.global_features}));
  std::vector<std::int64_t> h(m.hidden.begin(), m.hidden.end());
  a.write("hidden", torch::tensor(h, torch::kInt64));
}

Meta read_meta(torch::serialize::InputArchive& a, const std::string& path) {
  torch::Tensor version, shape, hidden;
  try {
    a.read("version", version);
    a.read("shape", shape);
    a.read("hidden", hidden);
  } catch (const c10::Error&) {
    throw InputError(path, "not a schedsim agent checkpoint (written by `schedsim train`)");
  }
  if (version.item<std::int64_t>() != kCheckpointVersion)
    throw InputError(path, "checkpoint version " + std::to_string(version.item<std::int64_t>()) + ", this build reads version " +
                               std::to_string(kCheckpointVersion));
  Meta m;
  m.candidate_features = static_cast<int>(shape[0].item<std::int64_t>());
  m.global_features = static_cast<int>(shape[1].item<std::int64_t>());
  for (std::int64_t i = 0; i < hidden.numel(); ++i) m.hidden.push_back(static_cast<int>(hidden[i].item<std::int64_t>()));
  return m;
}

torch::serialize::InputArchive open_archive(const std::string& path) {
  if (!std::filesystem::exists(path)) throw InputError(path, "no such checkpoint file");
  torch::serialize::InputArchive a;
  try {
    a.load_from(path);
  } catch (const c10::Error& e) {
    throw InputError(path, "cannot read the checkpoint (not a LibTorch archive?)");
  }
  return a;
}

// The greedy action over `n` = K + 1 actions, the last one "wait". Greedy in two levels:
// first start-or-wait by their total probabilities (wait iff its logit >= the logsumexp
// of the legal candidates' logits), then the most likely candidate. A plain argmax would
// wait whenever the start probability is split over several rows, although the policy
// itself would mostly start a job there.
int greedy_action(const float* logits, const std::uint8_t* mask, int n) {
  const int wait = n - 1;
  int best = -1;
  for (int a = 0; a < wait; ++a) {
    if (mask[a] && (best < 0 || logits[a] > logits[best])) best = a;
  }
  if (best < 0) return mask[wait] ? wait : -1;
  if (!mask[wait]) return best;
  double sum = 0.0;  // sum of exp(logit - best logit) over the legal candidates
  for (int a = 0; a < wait; ++a) {
    if (mask[a]) sum += std::exp(static_cast<double>(logits[a]) - logits[best]);
  }
  const double start_logit = logits[best] + std::log(sum);
  return static_cast<double>(logits[wait]) >= start_logit ? wait : best;
}

// Counter-based seeding (splitmix64): the action stream of a global environment in an
// update depends only on (seed, purpose, update, environment), never on how the
// environments are split over ranks, so N ranks draw exactly one process's actions.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
enum class Stream : std::uint64_t { kObservationFit = 1, kRollout = 2 };
std::mt19937_64 env_rng(std::uint64_t seed, Stream stream, std::uint64_t update, std::uint64_t env) {
  return std::mt19937_64(mix64(mix64(mix64(mix64(seed) + static_cast<std::uint64_t>(stream)) + update) + env));
}

// One action drawn from `row` (A non-negative, unnormalised weights) with `rng`, by
// inversion; zero-weight actions are never drawn.
template <typename W>
int sample_row(const W* row, int A, std::mt19937_64& rng) {
  double total = 0.0;
  int last = -1;
  for (int a = 0; a < A; ++a) {
    total += static_cast<double>(row[a]);
    if (row[a] > 0) last = a;
  }
  // NaN or no weight at all: the policy diverged (torch::multinomial refuses these too).
  if (!(total > 0.0) || !std::isfinite(total)) throw Error("the policy's action probabilities are NaN or all zero (training diverged)");
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * total;
  double cum = 0.0;
  for (int a = 0; a < A; ++a) {
    cum += static_cast<double>(row[a]);
    if (row[a] > 0 && cum > u) return a;
  }
  return last;
}

// One action per row of `weights` [N, A], row i drawn with rngs[i] (sample_row).
torch::Tensor sample_rows(const torch::Tensor& weights, std::vector<std::mt19937_64>& rngs) {
  auto w = weights.to(torch::kFloat64).cpu().contiguous();
  const auto N = w.size(0), A = w.size(1);
  auto out = torch::empty({N}, torch::kInt64);
  const double* p = w.data_ptr<double>();
  std::int64_t* picks = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < N; ++i) picks[i] = sample_row(p + i * A, static_cast<int>(A), rngs[static_cast<std::size_t>(i)]);
  return out;
}

// Column means and unbiased standard deviations of `rows` [n, D] over all ranks (two
// passes: sums, then squared deviations from the global mean). n counts every rank's rows.
struct ColumnStats {
  torch::Tensor mean, std;
  double n = 0;
};
ColumnStats global_column_stats(const torch::Tensor& rows, Communicator& comm) {
  auto x = rows.to(torch::kFloat64);
  auto to_vec = [](const torch::Tensor& t) {
    auto c = t.contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  std::vector<double> sums = to_vec(x.sum(0));
  sums.push_back(static_cast<double>(rows.size(0)));
  comm.allreduce_sum(sums);
  ColumnStats out;
  out.n = sums.back();
  sums.pop_back();
  out.mean = torch::tensor(sums, torch::kFloat64) / std::max(out.n, 1.0);
  std::vector<double> sq = to_vec((x - out.mean).pow(2).sum(0));
  comm.allreduce_sum(sq);
  out.std = (torch::tensor(sq, torch::kFloat64) / std::max(out.n - 1.0, 1.0)).sqrt();
  return out;
}

}  // namespace

bool cuda_available() { return torch::cuda::is_available(); }

// ---------------------------------------------------------------------------------------
struct Learner::Impl {
  TrainConfig config;
  std::unique_ptr<Communicator> comm;
  int local_envs = 0;   // this rank's environments: global indices env_offset ...
  int env_offset = 0;   // ... env_offset + local_envs - 1
  std::unique_ptr<BatchEnv> env;
  EnvShape shape;
  torch::Device device{torch::kCPU};
  mutable PolicyNet net{nullptr};  // forward() of torch modules is non-const
  std::unique_ptr<torch::optim::Adam> optimizer;
  at::Generator gen;
  std::int64_t steps = 0, updates = 0, episodes = 0;
  bool obs_normalized = false;
  // Running statistics of discounted returns; rewards are divided by their std.
  double ret_count = 0.0, ret_mean = 0.0, ret_m2 = 0.0;
  LearnerTimes times;  // learn_s is the total of update() until update() returns
  // The rollouts evaluate the policy with Eigen (rl/eigen_policy_net.hpp) on a copy of
  // the network's parameters, into buffers reused across steps and updates; actions are
  // drawn from each environment's own stream (env_rng), as with several ranks.
  std::unique_ptr<EigenPolicyNet> rollout_net;
  std::vector<float> step_logits, step_logp, step_value;  // one step: [N, K+1], [N, K+1], [N]
  std::vector<double> step_prob;                          // one row's probabilities
  std::vector<float> roll_cand, roll_glob, roll_logp, roll_value;  // the batch, step-major: [T*N, ...]
  std::vector<std::uint8_t> roll_mask;
  std::vector<std::int64_t> roll_act;

  Impl(const TrainConfig& c, BatchEnvFactory make_env, const DistConfig& dist) : config(c), gen(at::detail::createCPUGenerator(c.seed)) {
    if (c.device == "cuda") {
      if (!torch::cuda::is_available())
        throw InputError("train.device", "cuda requested but this LibTorch build has no CUDA or no GPU is visible; use device: cpu");
      // One GPU per local rank (LOCAL_RANK) when the node has several.
      const auto gpus = std::max<std::int64_t>(1, static_cast<std::int64_t>(torch::cuda::device_count()));
      device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(dist.local_rank % gpus));
    }
    at::set_num_threads(c.threads);
    // OpenBLAS (LibTorch's BLAS on Debian) keeps its own thread pool, sized to the cores
    // and not limited by at::set_num_threads; its waiting threads spin, which made
    // training several times slower on a busy machine (docs/benchmarks.md, `bench ppo`).
    if (openblas_set_num_threads) openblas_set_num_threads(c.threads);
    torch::manual_seed(c.seed);
    if (c.num_envs % dist.world_size != 0)
      throw InputError("train.num_envs", "is " + std::to_string(c.num_envs) + ", not divisible by the " + std::to_string(dist.world_size) +
                                             " processes (WORLD_SIZE / --nproc): every rank steps the same number of environments");
    comm = std::make_unique<Communicator>(dist, device.is_cuda(), c.dist_timeout_s);
    local_envs = c.num_envs / dist.world_size;
    env_offset = dist.rank * local_envs;
    // Every rank builds the same initial network from the same seed (the parameters stay
    // identical afterwards: each applies the same all-reduced gradient).
    env = make_env(local_envs);
    shape = env->shape();
    if (c.input_baseline > 1) {
      if (local_envs % c.input_baseline != 0)
        throw InputError("train.input_baseline", "is " + std::to_string(c.input_baseline) + ", but each of the " + std::to_string(dist.world_size) + " processes steps " +
                                                     std::to_string(local_envs) + " environments: a workload's copies must share a process, so that must be a multiple of it");
      if (!env->has_time()) throw InputError("train.input_baseline", "needs environments with a simulated clock (the scheduling environment)");
    }
    net = PolicyNet(shape.candidate_features, shape.global_features, c.hidden);
    net->to(device);
    optimizer = std::make_unique<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(c.lr).eps(1e-5));
    const int N = env->num_envs(), A = shape.num_candidates + 1;
    rollout_net = std::make_unique<EigenPolicyNet>(shape.num_candidates, shape.candidate_features, shape.global_features, c.hidden, N);
    step_logits.resize(static_cast<std::size_t>(N) * static_cast<std::size_t>(A));
    step_logp.resize(step_logits.size());
    step_value.resize(static_cast<std::size_t>(N));
    step_prob.resize(static_cast<std::size_t>(A));
  }

  // Copies the network's parameters and normalisation buffers into the rollout network.
  void sync_rollout_net() {
    torch::NoGradGuard guard;
    auto copy = [&](const std::string& name, const torch::Tensor& t) {
      const auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
      rollout_net->set_parameter(name, c.data_ptr<float>(), c.numel());
    };
    for (const auto& kv : net->named_parameters()) copy(kv.key(), kv.value());
    for (const auto& kv : net->named_buffers()) copy(kv.key(), kv.value());
  }

  // Evaluates the rollout network on the environments' current observations.
  void rollout_forward(const BatchEnv& e) {
    rollout_net->forward(e.num_envs(), e.candidates(), e.global(), e.masks(), step_logits.data(), step_logp.data(), step_value.data());
  }

  template <typename T>
  static void append(std::vector<T>& to, const T* from, std::int64_t n) {
    to.insert(to.end(), from, from + n);
  }

  Meta meta() const { return Meta{shape.candidate_features, shape.global_features, config.hidden}; }

  struct Obs {
    torch::Tensor cand, glob, mask;
  };
  Obs observe(const BatchEnv& e) const {
    const auto N = e.num_envs();
    const auto K = shape.num_candidates, F = shape.candidate_features, G = shape.global_features;
    return Obs{torch::from_blob(const_cast<float*>(e.candidates()), {N, K, F}, torch::kFloat32).clone(),
               torch::from_blob(const_cast<float*>(e.global()), {N, G}, torch::kFloat32).clone(),
               torch::from_blob(const_cast<std::uint8_t*>(e.masks()), {N, K + 1}, torch::kUInt8).to(torch::kBool)};
  }

  // Observation normalisation from a short uniformly random rollout, fixed afterwards
  // (stored in the network's buffers, so checkpoints and exports carry it).
  void fit_observation_statistics() {
    const int N = env->num_envs(), K = shape.num_candidates;
    env->reset(config.train_seed_start + static_cast<std::uint64_t>(env_offset));
    std::vector<torch::Tensor> cands, globs;
    std::vector<std::int32_t> actions(static_cast<std::size_t>(N));
    std::vector<std::mt19937_64> rngs;
    for (int i = 0; i < N; ++i) rngs.push_back(env_rng(config.seed, Stream::kObservationFit, 0, static_cast<std::uint64_t>(env_offset + i)));
    // Only each environment's first episode counts: the episode an environment
    // auto-resets into depends on the number of environments in the batch, which differs
    // between one process and several ranks.
    auto active = torch::ones({N}, torch::kBool);
    for (int t = 0; t < 256 && active.any().item<bool>(); ++t) {
      Obs o = observe(*env);
      auto rows = o.cand.reshape({-1, shape.candidate_features});
      auto legal = (o.mask.slice(1, 0, K) & active.unsqueeze(1)).reshape({-1});
      cands.push_back(rows.index({legal}));
      globs.push_back(o.glob.index({active}));
      auto a = sample_rows(o.mask.to(torch::kFloat32), rngs);
      for (int i = 0; i < N; ++i) actions[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(a[i].item<std::int64_t>());
      env->step(actions.data());
      for (int i = 0; i < N; ++i)
        if (env->terminated()[i] || env->truncated()[i]) active[i] = false;
    }
    env->take_finished_episodes();
    // Statistics over every rank's rows, so all ranks normalise alike.
    const ColumnStats c = global_column_stats(torch::cat(cands, 0), *comm), g = global_column_stats(torch::cat(globs, 0), *comm);
    torch::NoGradGuard guard;
    if (c.n > 1) {
      net->cand_mean.copy_(c.mean.to(torch::kFloat32));
      net->cand_std.copy_(c.std.to(torch::kFloat32).clamp_min(1e-3));
    }
    net->glob_mean.copy_(g.mean.to(torch::kFloat32));
    net->glob_std.copy_(g.std.to(torch::kFloat32).clamp_min(1e-3));
    obs_normalized = true;
  }

  double reward_std() const { return ret_count > 1 ? std::sqrt(ret_m2 / ret_count) + 1e-8 : 1.0; }

  UpdateStats update() {
    const double inner_s = times.env_s + times.policy_s;
    PhaseTimer total(times.learn_s);
    UpdateStats st = update_untimed();
    times.learn_s -= times.env_s + times.policy_s - inner_s;
    return st;
  }

  UpdateStats update_untimed() {
    if (!obs_normalized) fit_observation_statistics();
    const int N = env->num_envs(), K = shape.num_candidates;
    const double progress = static_cast<double>(steps) / static_cast<double>(config.total_steps);
    const double lr = config.lr_schedule == "linear" ? config.lr * std::max(0.0, 1.0 - progress) : config.lr;
    const double entropy_coef = config.entropy_coef_at(steps);  // train.entropy_final: a linear schedule
    for (auto& group : optimizer->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);

    // --- collect one episode per environment (this rank's share of the global batch)
    const std::uint64_t first_seed =
        config.train_seed_start + static_cast<std::uint64_t>(updates) * static_cast<std::uint64_t>(config.num_envs) + static_cast<std::uint64_t>(env_offset);
    const int copies = config.input_baseline > 1 ? config.input_baseline : 1;
    {
      PhaseTimer timer(times.env_s);
      if (copies > 1) {
        // Global environment g replays workload g / copies of this update.
        std::vector<std::uint64_t> seeds(static_cast<std::size_t>(N));
        const std::uint64_t base = config.train_seed_start + static_cast<std::uint64_t>(updates) * static_cast<std::uint64_t>(config.num_envs / copies);
        for (int i = 0; i < N; ++i) seeds[static_cast<std::size_t>(i)] = base + static_cast<std::uint64_t>((env_offset + i) / copies);
        env->reset_each(seeds);
      } else {
        env->reset(first_seed);
      }
    }
    sync_rollout_net();
    const int num_actions = K + 1, F = shape.candidate_features, G = shape.global_features;
    for (auto* v : {&roll_cand, &roll_glob, &roll_logp, &roll_value}) v->clear();
    roll_mask.clear();
    roll_act.clear();
    int T = 0;
    std::vector<std::mt19937_64> rngs;
    for (int i = 0; i < N; ++i)
      rngs.push_back(env_rng(config.seed, Stream::kRollout, static_cast<std::uint64_t>(updates), static_cast<std::uint64_t>(env_offset + i)));
    std::vector<std::vector<float>> rewards;
    std::vector<std::vector<std::uint8_t>> dones, valids;
    std::vector<std::vector<double>> times_s;      // input baseline: each step's simulated time, [T][N]
    std::vector<double> end_s(static_cast<std::size_t>(N), 0.0);  // and the time each episode ended
    std::vector<std::uint8_t> counted(static_cast<std::size_t>(N), 0);  // its first episode was counted
    std::vector<std::uint8_t> active(static_cast<std::size_t>(N), 1);
    std::vector<std::int32_t> actions(static_cast<std::size_t>(N));
    UpdateStats st;
    double sum_return = 0.0, sum_jct = 0.0;
    int finished_eps = 0;
    for (int t = 0;; ++t) {
      int n_active = 0;
      for (auto a : active) n_active += a;
      if (n_active == 0 || (config.rollout_steps > 0 && t >= config.rollout_steps)) break;
      {
        PhaseTimer timer(times.policy_s);
        append(roll_cand, env->candidates(), static_cast<std::int64_t>(N) * K * F);
        append(roll_glob, env->global(), static_cast<std::int64_t>(N) * G);
        append(roll_mask, env->masks(), static_cast<std::int64_t>(N) * num_actions);
        rollout_forward(*env);
        for (int i = 0; i < N; ++i) {
          const auto row = static_cast<std::size_t>(i) * static_cast<std::size_t>(num_actions);
          for (int j = 0; j < num_actions; ++j) step_prob[static_cast<std::size_t>(j)] = std::exp(step_logp[row + static_cast<std::size_t>(j)]);
          const int a = sample_row(step_prob.data(), num_actions, rngs[static_cast<std::size_t>(i)]);
          roll_act.push_back(a);
          roll_logp.push_back(step_logp[row + static_cast<std::size_t>(a)]);
          roll_value.push_back(step_value[static_cast<std::size_t>(i)]);
          // A finished environment has auto-reset into an episode this update ignores: it
          // waits, or takes its sampled (legal) action where waiting is illegal.
          const bool may_wait = env->masks()[row + static_cast<std::size_t>(K)] != 0;
          actions[static_cast<std::size_t>(i)] = active[static_cast<std::size_t>(i)] || !may_wait ? a : K;
        }
      }
      std::vector<std::uint8_t> valid(active);
      if (copies > 1) times_s.emplace_back(env->now_s(), env->now_s() + N);
      {
        PhaseTimer timer(times.env_s);
        env->step(actions.data());
      }
      std::vector<float> r(static_cast<std::size_t>(N));
      std::vector<std::uint8_t> d(static_cast<std::size_t>(N));
      for (int i = 0; i < N; ++i) {
        const auto k = static_cast<std::size_t>(i);
        r[k] = env->rewards()[i];
        d[k] = env->terminated()[i] || env->truncated()[i];
        if (active[k]) {
          ++st.step;
          if (d[k]) active[k] = 0;
        }
      }
      for (const auto& e : env->take_finished_episodes()) {
        // Only each environment's first episode counts; later ones are auto-resets.
        if (counted[static_cast<std::size_t>(e.env)]) continue;
        counted[static_cast<std::size_t>(e.env)] = 1;
        end_s[static_cast<std::size_t>(e.env)] = e.end_s;
        sum_return += e.episode_return;
        sum_jct += e.mean_jct_s;
        ++finished_eps;
      }
      ++T;
      rewards.push_back(std::move(r));
      dones.push_back(std::move(d));
      valids.push_back(std::move(valid));
    }
    std::vector<float> bootstrap(static_cast<std::size_t>(N), 0.0f);
    bool any_active = false;
    for (auto a : active) any_active = any_active || a;
    if (any_active) {
      PhaseTimer timer(times.policy_s);
      rollout_forward(*env);
      for (int i = 0; i < N; ++i)
        if (active[static_cast<std::size_t>(i)]) bootstrap[static_cast<std::size_t>(i)] = step_value[static_cast<std::size_t>(i)];
    }

    // --- reward scale from the discounted returns seen so far: this batch's count, mean
    // and squared deviations over all ranks, merged into the running totals (Chan et al.)
    {
      std::vector<double> rets;
      std::vector<double> ret(static_cast<std::size_t>(N), 0.0);
      for (int t = T - 1; t >= 0; --t) {
        for (int i = 0; i < N; ++i) {
          const auto k = static_cast<std::size_t>(i);
          if (!valids[static_cast<std::size_t>(t)][k]) continue;
          ret[k] = rewards[static_cast<std::size_t>(t)][k] + config.gamma * (dones[static_cast<std::size_t>(t)][k] ? 0.0 : ret[k]);
          rets.push_back(ret[k]);
        }
      }
      std::vector<double> count_sum{static_cast<double>(rets.size()), 0.0};
      for (double r : rets) count_sum[1] += r;
      comm->allreduce_sum(count_sum);
      const double n_b = count_sum[0];
      if (n_b > 0) {
        const double mean_b = count_sum[1] / n_b;
        std::vector<double> m2_b{0.0};
        for (double r : rets) m2_b[0] += (r - mean_b) * (r - mean_b);
        comm->allreduce_sum(m2_b);
        const double n_a = ret_count, n = n_a + n_b, delta = mean_b - ret_mean;
        ret_mean += delta * n_b / n;
        ret_m2 += m2_b[0] + delta * delta * n_a * n_b / n;
        ret_count = n;
      }
    }
    // train.reward_norm: none trains on the raw rewards (the statistics are still kept).
    const double scale = config.reward_norm_running_std ? 1.0 / reward_std() : 1.0;

    // --- advantages (GAE; REINFORCE = Monte-Carlo returns, lambda 1) and value targets
    const double lambda = config.algorithm == Algorithm::kReinforce ? 1.0 : config.gae_lambda;
    std::vector<std::vector<float>> adv(static_cast<std::size_t>(T), std::vector<float>(static_cast<std::size_t>(N), 0.0f));
    std::vector<double> next_adv(static_cast<std::size_t>(N), 0.0);
    for (int t = T - 1; t >= 0; --t) {
      const auto tt = static_cast<std::size_t>(t);
      for (int i = 0; i < N; ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (!valids[tt][k]) continue;
        const double nonterminal = dones[tt][k] ? 0.0 : 1.0;
        const double next_v = (t + 1 < T && valids[tt + 1][k]) ? roll_value[(tt + 1) * static_cast<std::size_t>(N) + k] : bootstrap[k];
        const double v = roll_value[tt * static_cast<std::size_t>(N) + k];
        const bool last = !(t + 1 < T && valids[tt + 1][k]);
        const double carry = last ? 0.0 : next_adv[k];
        const double delta = rewards[tt][k] * scale + config.gamma * next_v * nonterminal - v;
        next_adv[k] = delta + config.gamma * lambda * nonterminal * carry;
        adv[tt][k] = static_cast<float>(next_adv[k]);
      }
    }
    // train.input_baseline: the policy's advantages compare each step's return-to-go with
    // the other copies' at the same simulated time; the value head still learns the GAE
    // targets above.
    std::vector<std::vector<float>> policy_adv;
    if (copies > 1) policy_adv = input_baseline_advantages(rewards, valids, times_s, end_s, scale, copies);
    const std::vector<std::vector<float>>& padv = copies > 1 ? policy_adv : adv;
    // Flatten the valid samples environment-major: the global sample order (rank 0's
    // environments first) is then the same for any number of ranks.
    std::vector<std::int64_t> rows;
    std::vector<float> adv_flat, value_adv_flat;
    for (int i = 0; i < N; ++i)
      for (int t = 0; t < T; ++t)
        if (valids[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]) {
          rows.push_back(static_cast<std::int64_t>(t) * N + i);
          adv_flat.push_back(padv[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]);
          value_adv_flat.push_back(adv[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]);
        }
    const auto M_local = static_cast<std::int64_t>(rows.size());
    std::vector<double> counts(static_cast<std::size_t>(comm->world_size()), 0.0);
    counts[static_cast<std::size_t>(comm->rank())] = static_cast<double>(M_local);
    comm->allreduce_sum(counts);
    std::int64_t offset = 0, M = 0;
    for (int r = 0; r < comm->world_size(); ++r) {
      if (r < comm->rank()) offset += static_cast<std::int64_t>(counts[static_cast<std::size_t>(r)]);
      M += static_cast<std::int64_t>(counts[static_cast<std::size_t>(r)]);
    }
    // Every rank holds all advantages (one float per sample): minibatch normalisation then
    // uses exactly the single-process statistics.
    std::vector<torch::Tensor> all_adv{torch::zeros({M}, torch::kFloat32)};
    if (M_local > 0) all_adv[0].slice(0, offset, offset + M_local).copy_(torch::tensor(adv_flat, torch::kFloat32));
    comm->allreduce_sum(all_adv);
    const torch::Tensor AdvAll = all_adv[0];
    // The batch's tensors read the rollout buffers in place (index_select copies).
    const std::int64_t TN = static_cast<std::int64_t>(T) * N;
    auto idx = torch::tensor(rows, torch::kInt64);
    torch::Tensor C, Gl, Ms, A, old_logp, Ret;
    if (M_local > 0) {
      C = torch::from_blob(roll_cand.data(), {TN, K, F}, torch::kFloat32).index_select(0, idx).to(device);
      Gl = torch::from_blob(roll_glob.data(), {TN, G}, torch::kFloat32).index_select(0, idx).to(device);
      Ms = torch::from_blob(roll_mask.data(), {TN, num_actions}, torch::kUInt8).index_select(0, idx).to(torch::kBool).to(device);
      A = torch::from_blob(roll_act.data(), {TN}, torch::kInt64).index_select(0, idx).to(device);
      old_logp = torch::from_blob(roll_logp.data(), {TN}, torch::kFloat32).index_select(0, idx).to(device);
      auto old_v = torch::from_blob(roll_value.data(), {TN}, torch::kFloat32).index_select(0, idx).to(device);
      Ret = torch::tensor(value_adv_flat, torch::kFloat32).to(device) + old_v;
    }

    // --- gradient steps. Each rank computes its samples' share of the minibatch loss
    // (sums divided by the global minibatch size); the all-reduced gradient is the
    // single-process minibatch gradient, and clipping sees its global norm.
    const bool ppo = config.algorithm == Algorithm::kPpo;
    const int epochs = ppo ? config.epochs : 1;
    const std::int64_t mb = ppo ? std::min<std::int64_t>(config.minibatch, M) : M;
    auto params = net->parameters();
    double sum_pl = 0, sum_vl = 0, sum_ent = 0, sum_kl = 0;
    int n_steps = 0;
    for (int epoch = 0; epoch < epochs && M > 0; ++epoch) {
      auto perm = ppo ? torch::randperm(M, gen, torch::kInt64) : torch::arange(M, torch::kInt64);
      for (std::int64_t start = 0; start < M; start += mb) {
        auto b = perm.slice(0, start, std::min(start + mb, M));
        const double B = static_cast<double>(b.size(0));
        auto adv_b = AdvAll.index_select(0, b);
        if (adv_b.size(0) > 1) adv_b = (adv_b - adv_b.mean()) / (adv_b.std() + 1e-8);
        auto mine = ((b >= offset) & (b < offset + M_local)).nonzero().reshape({-1});
        optimizer->zero_grad();
        if (mine.size(0) > 0) {
          auto lb = (b.index_select(0, mine) - offset).to(device);
          auto adv_l = adv_b.index_select(0, mine).to(device);
          auto [logits, value] = net->forward_packed(C.index_select(0, lb), Gl.index_select(0, lb), Ms.index_select(0, lb));
          auto logp_all = torch::log_softmax(logits, 1);
          auto logp = logp_all.gather(1, A.index_select(0, lb).unsqueeze(1)).squeeze(1);
          auto old_lp = old_logp.index_select(0, lb);
          torch::Tensor policy_loss;
          if (ppo) {
            auto ratio = torch::exp(logp - old_lp);
            policy_loss = -torch::min(ratio * adv_l, torch::clamp(ratio, 1.0 - config.clip, 1.0 + config.clip) * adv_l).sum() / B;
          } else {
            policy_loss = -(logp * adv_l).sum() / B;
          }
          auto value_loss = 0.5 * (value - Ret.index_select(0, lb)).pow(2).sum() / B;
          auto entropy = -(logp_all.exp() * logp_all).sum() / B;
          auto loss = policy_loss + config.value_coef * value_loss - entropy_coef * entropy;
          loss.backward();
          sum_pl += policy_loss.item<double>();
          sum_vl += value_loss.item<double>();
          sum_ent += entropy.item<double>();
          sum_kl += (old_lp - logp).sum().item<double>() / B;
        }
        if (comm->world_size() > 1) {
          std::vector<torch::Tensor> grads;
          for (auto& p : params) {
            if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
            grads.push_back(p.grad());
          }
          comm->allreduce_sum(grads);
        }
        torch::nn::utils::clip_grad_norm_(params, config.max_grad_norm);
        optimizer->step();
        ++n_steps;
      }
    }
    // Batch statistics summed over ranks (this rank's share of each loss is already
    // divided by the global minibatch size).
    std::vector<double> totals{static_cast<double>(st.step), sum_return, sum_jct, static_cast<double>(finished_eps), sum_pl, sum_vl, sum_ent, sum_kl};
    comm->allreduce_sum(totals);
    st.step = static_cast<std::int64_t>(totals[0]);
    sum_return = totals[1];
    sum_jct = totals[2];
    finished_eps = static_cast<int>(totals[3]);
    sum_pl = totals[4];
    sum_vl = totals[5];
    sum_ent = totals[6];
    sum_kl = totals[7];
    steps += st.step;
    ++updates;
    episodes += finished_eps;
    st.step = steps;
    st.update = updates;
    st.episodes = episodes;
    st.batch_episodes = finished_eps;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    st.mean_return = finished_eps ? sum_return / finished_eps : nan;
    st.mean_jct_s = finished_eps ? sum_jct / finished_eps : nan;
    st.policy_loss = n_steps ? sum_pl / n_steps : nan;
    st.value_loss = n_steps ? sum_vl / n_steps : nan;
    st.entropy = n_steps ? sum_ent / n_steps : nan;
    st.approx_kl = n_steps ? sum_kl / n_steps : nan;
    st.lr = lr;
    return st;
  }

  EvalStats evaluate(const BatchEnvFactory& make_env, std::uint64_t seed_start, int total) const {
    // Rank r runs episodes lo..hi-1 of the `total`; the sums are all-reduced.
    const int W = comm->world_size(), r = comm->rank();
    const int lo = static_cast<int>(static_cast<std::int64_t>(total) * r / W), hi = static_cast<int>(static_cast<std::int64_t>(total) * (r + 1) / W);
    EvalStats out;
    if (hi > lo) out = evaluate_share(make_env, seed_start + static_cast<std::uint64_t>(lo), hi - lo);
    std::vector<double> sums{out.mean_jct_s, out.mean_return, static_cast<double>(out.episodes)};
    comm->allreduce_sum(sums);
    out.mean_jct_s = sums[0] / total;
    out.mean_return = sums[1] / total;
    out.episodes = static_cast<int>(sums[2]);
    return out;
  }

  // Sums (not means) over the n episodes seeded seed_start ... seed_start + n - 1.
  EvalStats evaluate_share(const BatchEnvFactory& make_env, std::uint64_t seed_start, int n) const {
    auto e = make_env(n);
    e->reset(seed_start);
    const int K = e->shape().num_candidates;
    std::vector<std::uint8_t> done(static_cast<std::size_t>(n), 0);
    std::vector<std::int32_t> actions(static_cast<std::size_t>(n));
    EvalStats out;
    int remaining = n;
    torch::NoGradGuard guard;
    while (remaining > 0) {
      Obs o = observe(*e);
      auto logits = net->forward(o.cand.to(device), o.glob.to(device), o.mask.to(device)).first.cpu().contiguous();
      for (int i = 0; i < n; ++i) {
        // An environment whose evaluation episode is done has auto-reset into an episode
        // nobody reads: let it wait, unless waiting is illegal there (jobs pending and
        // nothing else can happen), where only a start is allowed.
        const std::uint8_t* mask = e->masks() + static_cast<std::ptrdiff_t>(i) * (K + 1);
        actions[static_cast<std::size_t>(i)] =
            done[static_cast<std::size_t>(i)] && mask[K] ? K : greedy_action(logits[i].data_ptr<float>(), mask, K + 1);
      }
      e->step(actions.data());
      for (const auto& ep : e->take_finished_episodes()) {
        auto k = static_cast<std::size_t>(ep.env);
        if (done[k]) continue;
        done[k] = 1;
        --remaining;
        out.mean_jct_s += ep.mean_jct_s;
        out.mean_return += ep.episode_return;
        ++out.episodes;
      }
    }
    return out;
  }

  void save(const std::string& path) const {
    torch::serialize::OutputArchive a;
    write_meta(a, meta());
    torch::serialize::OutputArchive model, optim;
    net->save(model);
    optimizer->save(optim);
    a.write("model", model);
    a.write("optimizer", optim);
    a.write("progress", i64({steps, updates, episodes, obs_normalized ? 1 : 0}));
    a.write("return_stats", torch::tensor(std::vector<double>{ret_count, ret_mean, ret_m2}, torch::kFloat64));
    a.write("rng", gen.get_state());
    const std::string tmp = path + ".tmp";
    a.save_to(tmp);
    std::filesystem::rename(tmp, path);
  }

  void load(const std::string& path) {
    auto a = open_archive(path);
    const Meta m = read_meta(a, path);
    if (m.candidate_features != shape.candidate_features || m.global_features != shape.global_features || m.hidden != config.hidden)
      throw InputError(path, "the checkpoint's network (F=" + std::to_string(m.candidate_features) + ", G=" + std::to_string(m.global_features) +
                                 ") does not match this scenario and train.hidden");
    torch::serialize::InputArchive model, optim;
    a.read("model", model);
    net->load(model);
    a.read("optimizer", optim);
    optimizer->load(optim);
    torch::Tensor progress, stats, rng;
    a.read("progress", progress);
    a.read("return_stats", stats);
    a.read("rng", rng);
    steps = progress[0].item<std::int64_t>();
    updates = progress[1].item<std::int64_t>();
    episodes = progress[2].item<std::int64_t>();
    obs_normalized = progress[3].item<std::int64_t>() != 0;
    ret_count = stats[0].item<double>();
    ret_mean = stats[1].item<double>();
    ret_m2 = stats[2].item<double>();
    gen.set_state(rng);
  }
};

Learner::Learner(const TrainConfig& config, BatchEnvFactory make_env, const DistConfig& dist)
    : impl_(std::make_unique<Impl>(config, std::move(make_env), dist)) {}
Learner::~Learner() = default;
bool Learner::finished() const { return impl_->steps >= impl_->config.total_steps; }
UpdateStats Learner::update() { return impl_->update(); }
EvalStats Learner::evaluate(const BatchEnvFactory& make_env, std::uint64_t seed_start, int episodes) const {
  return impl_->evaluate(make_env, seed_start, episodes);
}
std::int64_t Learner::steps() const { return impl_->steps; }
std::int64_t Learner::updates() const { return impl_->updates; }
int Learner::rank() const { return impl_->comm->rank(); }
int Learner::world_size() const { return impl_->comm->world_size(); }
LearnerTimes Learner::times() const { return impl_->times; }
std::int64_t Learner::network_forward_calls() const { return impl_->net->forward_calls; }
void Learner::save_checkpoint(const std::string& path) const { impl_->save(path); }
void Learner::load_checkpoint(const std::string& path) { impl_->load(path); }

std::vector<float> Learner::flat_parameters() const {
  std::vector<float> out;
  for (const auto& p : impl_->net->parameters()) {
    auto c = p.detach().cpu().contiguous().reshape({-1});
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

std::vector<float> Learner::action_probabilities(const float* candidates, const float* global, const std::uint8_t* mask) const {
  const auto& s = impl_->shape;
  torch::NoGradGuard guard;
  auto c = torch::from_blob(const_cast<float*>(candidates), {1, s.num_candidates, s.candidate_features}, torch::kFloat32).clone();
  auto g = torch::from_blob(const_cast<float*>(global), {1, s.global_features}, torch::kFloat32).clone();
  auto m = torch::from_blob(const_cast<std::uint8_t*>(mask), {1, s.num_candidates + 1}, torch::kUInt8).to(torch::kBool);
  auto p = torch::softmax(impl_->net->forward(c.to(impl_->device), g.to(impl_->device), m.to(impl_->device)).first, 1).cpu().contiguous();
  return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

void Learner::export_torchscript(const std::string& path) const {
  torch::jit::Module m = torchscript_module(*impl_->net);
  const std::string tmp = path + ".tmp";
  m.save(tmp);
  std::filesystem::rename(tmp, path);
}

// ---------------------------------------------------------------------------------------
struct GreedyAgent::Impl {
  Meta meta;
  mutable PolicyNet net{nullptr};  // forward() of torch modules is non-const
};

GreedyAgent::GreedyAgent(const std::string& path) : impl_(std::make_unique<Impl>()) {
  // One intra-op thread: a tiny network gains nothing from more, and results then never
  // depend on the machine's core count.
  at::set_num_threads(1);
  auto a = open_archive(path);
  impl_->meta = read_meta(a, path);
  impl_->net = PolicyNet(impl_->meta.candidate_features, impl_->meta.global_features, impl_->meta.hidden);
  torch::serialize::InputArchive model;
  a.read("model", model);
  impl_->net->load(model);
  impl_->net->eval();
}
GreedyAgent::~GreedyAgent() = default;
GreedyAgent::GreedyAgent(GreedyAgent&&) noexcept = default;
int GreedyAgent::candidate_features() const { return impl_->meta.candidate_features; }
int GreedyAgent::global_features() const { return impl_->meta.global_features; }

int GreedyAgent::act(const float* candidates, const float* global, const std::uint8_t* mask, int K) const {
  torch::NoGradGuard guard;
  const int F = impl_->meta.candidate_features, G = impl_->meta.global_features;
  auto c = torch::from_blob(const_cast<float*>(candidates), {1, K, F}, torch::kFloat32);
  auto g = torch::from_blob(const_cast<float*>(global), {1, G}, torch::kFloat32);
  auto m = torch::from_blob(const_cast<std::uint8_t*>(mask), {1, K + 1}, torch::kUInt8).to(torch::kBool);
  auto logits = impl_->net->forward(c, g, m).first.contiguous();
  return greedy_action(logits.data_ptr<float>(), mask, K + 1);
}

}  // namespace schedsim::rl
