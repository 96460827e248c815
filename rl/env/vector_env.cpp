#include "rl/env/vector_env.hpp"

#include <exception>
#include <functional>

#include "rl/env/worker_pool.hpp"
#include "base/error.hpp"

namespace schedsim::rl {

struct VectorEnv::Impl {
  int n = 0;
  EnvShape shape;
  std::vector<std::unique_ptr<SchedulingEnv>> envs;
  std::vector<float> candidates, global, rewards;
  std::vector<std::uint8_t> masks, terminated, truncated;
  std::vector<float> final_candidates, final_global;
  std::vector<std::uint8_t> final_masks;
  std::vector<std::uint64_t> first_seed;  // env i's first seed since the last reset
  std::vector<std::uint64_t> episode;  // episodes begun by env i since reset
  std::vector<double> now_s;
  std::vector<std::vector<EpisodeRecord>> finished;
  std::vector<std::exception_ptr> errors;
  const std::int32_t* actions = nullptr;
  WorkerPool pool;

  Impl(int num_envs, int threads) : n(num_envs), pool(threads) {}

  void write(int i) { write_to(i, candidates, global, masks); }
  void write_to(int i, std::vector<float>& c, std::vector<float>& g, std::vector<std::uint8_t>& m) {
    const std::size_t k = static_cast<std::size_t>(shape.num_candidates);
    envs[static_cast<std::size_t>(i)]->write_observation(c.data() + static_cast<std::size_t>(i) * k * shape.candidate_features,
                                                          g.data() + static_cast<std::size_t>(i) * shape.global_features,
                                                          m.data() + static_cast<std::size_t>(i) * (k + 1));
    now_s[static_cast<std::size_t>(i)] = envs[static_cast<std::size_t>(i)]->simulator().now().seconds();
  }

  void reset_env(int i) {
    const auto u = static_cast<std::size_t>(i);
    envs[u]->reset(first_seed[u] + static_cast<std::uint64_t>(n) * episode[u]);
  }

  void step_env(int i) {
    const auto u = static_cast<std::size_t>(i);
    SchedulingEnv& env = *envs[u];
    const StepResult r = env.step(actions[i]);
    rewards[u] = static_cast<float>(r.reward);
    terminated[u] = r.terminated ? 1 : 0;
    truncated[u] = r.truncated ? 1 : 0;
    if (r.terminated || r.truncated) {
      EpisodeRecord rec;
      rec.env = i;
      rec.seed = env.episode_seed();
      rec.episode_return = env.episode_return();
      rec.jobs = env.jobs_completed();
      rec.mean_jct_s = rec.jobs > 0 ? env.total_jct_s() / static_cast<double>(rec.jobs) : 0.0;
      rec.steps = env.episode_steps();
      rec.end_s = env.simulator().now().seconds();
      finished[u].push_back(rec);
      write_to(i, final_candidates, final_global, final_masks);
      ++episode[u];
      reset_env(i);
    }
    write(i);
  }

  void run(const std::function<void(int)>& fn) {
    for (auto& e : errors) e = nullptr;
    pool.run(n, [&](int i) {
      try {
        fn(i);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
    for (auto& e : errors) {  // the lowest env's error, whatever the thread timing
      if (e) std::rethrow_exception(e);
    }
  }
};

VectorEnv::VectorEnv(std::shared_ptr<const ScenarioConfig> scenario, EnvConfig config, int num_envs, int num_threads) {
  if (num_envs < 1) throw InputError("VectorEnv", "num_envs must be at least 1, got " + std::to_string(num_envs));
  if (num_envs > WorkerPool::kMaxItems) {
    throw InputError("VectorEnv", "num_envs must be at most " + std::to_string(WorkerPool::kMaxItems) + ", got " + std::to_string(num_envs));
  }
  if (num_threads < 1) throw InputError("VectorEnv", "num_threads must be at least 1, got " + std::to_string(num_threads));
  impl_ = std::make_unique<Impl>(num_envs, std::min(num_threads, num_envs));
  Impl& m = *impl_;
  for (int i = 0; i < num_envs; ++i) m.envs.push_back(std::make_unique<SchedulingEnv>(scenario, config));
  m.shape = m.envs[0]->shape();
  const auto n = static_cast<std::size_t>(num_envs);
  const auto k = static_cast<std::size_t>(m.shape.num_candidates);
  m.candidates.assign(n * k * static_cast<std::size_t>(m.shape.candidate_features), 0.0f);
  m.global.assign(n * static_cast<std::size_t>(m.shape.global_features), 0.0f);
  m.masks.assign(n * (k + 1), 0);
  m.final_candidates.assign(m.candidates.size(), 0.0f);
  m.final_global.assign(m.global.size(), 0.0f);
  m.final_masks.assign(m.masks.size(), 0);
  m.rewards.assign(n, 0.0f);
  m.terminated.assign(n, 0);
  m.truncated.assign(n, 0);
  m.episode.assign(n, 0);
  m.first_seed.assign(n, 0);
  m.now_s.assign(n, 0.0);
  m.finished.resize(n);
  m.errors.resize(n);
}

VectorEnv::~VectorEnv() = default;

int VectorEnv::num_envs() const { return impl_->n; }
const EnvShape& VectorEnv::shape() const { return impl_->shape; }

void VectorEnv::reset(std::uint64_t seed) {
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(impl_->n));
  for (int i = 0; i < impl_->n; ++i) seeds[static_cast<std::size_t>(i)] = seed + static_cast<std::uint64_t>(i);
  reset_each(seeds);
}

void VectorEnv::reset_each(const std::vector<std::uint64_t>& seeds) {
  Impl& m = *impl_;
  if (seeds.size() != static_cast<std::size_t>(m.n)) {
    throw InputError("VectorEnv", "reset_each needs one seed per environment (" + std::to_string(m.n) + "), got " + std::to_string(seeds.size()));
  }
  m.first_seed = seeds;
  for (auto& e : m.episode) e = 0;
  for (auto& f : m.finished) f.clear();
  std::fill(m.rewards.begin(), m.rewards.end(), 0.0f);
  std::fill(m.terminated.begin(), m.terminated.end(), 0);
  std::fill(m.truncated.begin(), m.truncated.end(), 0);
  m.run([&m](int i) {
    m.reset_env(i);
    m.write(i);
  });
}

void VectorEnv::step(const std::int32_t* actions) {
  Impl& m = *impl_;
  m.actions = actions;
  m.run([&m](int i) { m.step_env(i); });
  m.actions = nullptr;
}

const double* VectorEnv::now_s() const { return impl_->now_s.data(); }
const float* VectorEnv::candidates() const { return impl_->candidates.data(); }
const float* VectorEnv::global() const { return impl_->global.data(); }
const std::uint8_t* VectorEnv::masks() const { return impl_->masks.data(); }
const float* VectorEnv::rewards() const { return impl_->rewards.data(); }
const std::uint8_t* VectorEnv::terminated() const { return impl_->terminated.data(); }
const std::uint8_t* VectorEnv::truncated() const { return impl_->truncated.data(); }
const float* VectorEnv::final_candidates() const { return impl_->final_candidates.data(); }
const float* VectorEnv::final_global() const { return impl_->final_global.data(); }
const std::uint8_t* VectorEnv::final_masks() const { return impl_->final_masks.data(); }

std::vector<VectorEnv::EpisodeRecord> VectorEnv::take_finished_episodes() {
  std::vector<EpisodeRecord> out;
  for (auto& f : impl_->finished) {
    out.insert(out.end(), f.begin(), f.end());
    f.clear();
  }
  return out;
}

SchedulingEnv& VectorEnv::env(int i) {
  if (i < 0 || i >= impl_->n) throw InputError("VectorEnv", "env index " + std::to_string(i) + " out of range 0.." + std::to_string(impl_->n - 1));
  return *impl_->envs[static_cast<std::size_t>(i)];
}

}  // namespace schedsim::rl
