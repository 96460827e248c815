// The RL environments (rl/env) for Python. Env wraps one SchedulingEnv; EnvBatch steps N
// of them together (schedsim.VectorEnv) and hands its output arrays to numpy without
// copying (the arrays keep the EnvBatch alive and are overwritten by its next step or
// reset; the Python side copies them unless asked not to). Stepping and resetting
// release the GIL.
#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "rl/env/scheduling_env.hpp"
#include "rl/env/vector_env.hpp"
#include "rl/env/worker_pool.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim::python {

namespace {

using rl::EnvConfig;
using rl::SchedulingEnv;

std::uint64_t seed_of(std::int64_t seed) {
  if (seed < 0) throw py::value_error("seed: expected a non-negative int, got " + std::to_string(seed));
  return static_cast<std::uint64_t>(seed);
}

// The scenario's `env:` map (or the defaults), with the arguments given in Python on top.
using Opt = std::optional<double>;
EnvConfig env_config(const Scenario& s, std::optional<int> max_candidates, Opt reward_scale, std::optional<std::int64_t> max_steps, Opt w_jobs,
                     Opt w_slowdown, Opt w_makespan) {
  EnvConfig c = EnvConfig::from_scenario(*s.config);
  if (max_candidates) {
    // The env: map's limit (rl/env/scheduling_env.cpp), checked before any row is allocated.
    if (*max_candidates < 1 || *max_candidates > 4096) {
      throw py::value_error("max_candidates: expected an int in 1..4096 (candidate rows per observation), got " + std::to_string(*max_candidates));
    }
    c.max_candidates = *max_candidates;
  }
  if (reward_scale) {
    if (!(*reward_scale > 0) || !std::isfinite(*reward_scale)) throw py::value_error("reward_scale: expected a finite number > 0, got " + std::to_string(*reward_scale));
    c.reward_scale = *reward_scale;
  }
  if (max_steps) {
    if (*max_steps < 0) throw py::value_error("max_steps: expected an int >= 0 (0 = no limit), got " + std::to_string(*max_steps));
    c.max_steps = *max_steps;
  }
  if (w_jobs) c.reward.jobs_in_system = *w_jobs;
  if (w_slowdown) c.reward.slowdown = *w_slowdown;
  if (w_makespan) c.reward.makespan = *w_makespan;
  return c;
}

// A numpy view of `data` (no copy) that keeps `owner` alive.
template <typename T>
py::array view_of(const T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  py::array_t<T> a(shape, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return std::move(a);
}

// One environment with its own observation buffers.
class Env {
 public:
  Env(const Scenario& s, const EnvConfig& c) : scenario_(s.config), env_(s.config, c) {
    const rl::EnvShape& sh = env_.shape();
    candidates_.resize(static_cast<std::size_t>(sh.num_candidates) * sh.candidate_features);
    global_.resize(static_cast<std::size_t>(sh.global_features));
    mask_.resize(static_cast<std::size_t>(sh.num_actions()));
  }
  SchedulingEnv& env() { return env_; }
  void observe() { env_.write_observation(candidates_.data(), global_.data(), mask_.data()); }
  // Fresh arrays (copies): a single env's observations may be kept across steps.
  py::tuple observation() const {
    const rl::EnvShape& sh = env_.shape();
    py::array_t<float> c({sh.num_candidates, sh.candidate_features});
    std::copy(candidates_.begin(), candidates_.end(), c.mutable_data());
    py::array_t<float> g(static_cast<py::ssize_t>(global_.size()));
    std::copy(global_.begin(), global_.end(), g.mutable_data());
    py::array_t<bool> m(static_cast<py::ssize_t>(mask_.size()));
    for (std::size_t i = 0; i < mask_.size(); ++i) m.mutable_data()[i] = mask_[i] != 0;
    return py::make_tuple(c, g, m);
  }
  bool legal(int action) const { return action >= 0 && static_cast<std::size_t>(action) < mask_.size() && mask_[static_cast<std::size_t>(action)]; }

 private:
  std::shared_ptr<const ScenarioConfig> scenario_;  // outlives env_
  SchedulingEnv env_;
  std::vector<float> candidates_, global_;
  std::vector<std::uint8_t> mask_;
};

py::dict state_dict(const SchedulingEnv& env) {
  // What render() draws: time, queue, and the owner (job slot, -1 free) of each device.
  const Simulator& sim = env.simulator();
  const ClusterState& cs = sim.cluster_state();
  const ClusterSpec& spec = cs.spec();
  py::array_t<std::int64_t> owners(spec.num_devices());
  for (int d = 0; d < spec.num_devices(); ++d) owners.mutable_data()[d] = cs.owner(d);
  py::list nodes;
  for (int n = 0; n < spec.num_nodes(); ++n) {
    const NodeSpec& node = spec.node(n);
    nodes.append(py::make_tuple(spec.device_types()[static_cast<std::size_t>(node.type_index)], node.first_device, node.num_devices));
  }
  py::dict d;
  d["time_s"] = sim.now().seconds();
  d["pending"] = sim.num_pending();
  d["running"] = sim.num_running();
  d["jobs_completed"] = sim.stats().jobs_completed;
  d["owners"] = owners;
  d["nodes"] = nodes;
  return d;
}

py::dict shape_dict(const rl::EnvShape& sh) {
  py::dict d;
  d["num_candidates"] = sh.num_candidates;
  d["candidate_features"] = sh.candidate_features;
  d["global_features"] = sh.global_features;
  d["num_actions"] = sh.num_actions();
  return d;
}


// N environments stepped together for schedsim.VectorEnv, with either autoreset mode of
// gymnasium: SAME_STEP (an env that ends resets in the same step; its last observation
// goes to the final_* arrays) or NEXT_STEP (the arrays keep its last observation; the next
// step resets it instead of stepping it, with reward 0 and both flags false). Env i's
// episodes use seed_i, seed_i + N, seed_i + 2N, ... (seed_i given to reset). Rewards are
// doubles, as SchedulingEnv computes them. Results never depend on the thread count.
class EnvBatch {
 public:
  EnvBatch(const Scenario& s, const EnvConfig& c, int n, int threads, bool next_step)
      : scenario_(s.config), n_(n), next_step_(next_step), pool_(std::min(threads, n)) {
    for (int i = 0; i < n; ++i) envs_.push_back(std::make_unique<SchedulingEnv>(s.config, c));
    shape_ = envs_[0]->shape();
    const auto u = static_cast<std::size_t>(n);
    cand_size_ = static_cast<std::size_t>(shape_.num_candidates) * static_cast<std::size_t>(shape_.candidate_features);
    candidates_.assign(u * cand_size_, 0.0f);
    global_.assign(u * static_cast<std::size_t>(shape_.global_features), 0.0f);
    masks_.assign(u * static_cast<std::size_t>(shape_.num_actions()), 0);
    final_candidates_ = candidates_;
    final_global_ = global_;
    final_masks_ = masks_;
    rewards_.assign(u, 0.0);
    terminated_.assign(u, 0);
    truncated_.assign(u, 0);
    pending_reset_.assign(u, 0);
    base_seed_.assign(u, 0);
    episode_.assign(u, 0);
    finished_.resize(u);
    errors_.resize(u);
  }

  int num_envs() const { return n_; }
  const rl::EnvShape& shape() const { return shape_; }
  bool next_step() const { return next_step_; }
  const SchedulingEnv& env(int i) const { return *envs_[static_cast<std::size_t>(i)]; }

  void reset(const std::vector<std::uint64_t>& seeds) {
    for (int i = 0; i < n_; ++i) {
      const auto u = static_cast<std::size_t>(i);
      base_seed_[u] = seeds[u];
      episode_[u] = 0;
      finished_[u].clear();
      rewards_[u] = 0.0;
      terminated_[u] = truncated_[u] = pending_reset_[u] = 0;
    }
    run([this](int i) {
      reset_env(i);
      write(i, candidates_, global_, masks_);
    });
  }

  // Envs waiting for their NEXT_STEP reset (their action is ignored in the next step).
  const std::uint8_t* pending_reset() const { return pending_reset_.data(); }

  void step(const std::int32_t* actions) {
    actions_ = actions;
    run([this](int i) { step_env(i); });
    actions_ = nullptr;
  }

  const float* candidates() const { return candidates_.data(); }
  const float* global() const { return global_.data(); }
  const std::uint8_t* masks() const { return masks_.data(); }
  const double* rewards() const { return rewards_.data(); }
  const std::uint8_t* terminated() const { return terminated_.data(); }
  const std::uint8_t* truncated() const { return truncated_.data(); }
  const float* final_candidates() const { return final_candidates_.data(); }
  const float* final_global() const { return final_global_.data(); }
  const std::uint8_t* final_masks() const { return final_masks_.data(); }

  std::vector<rl::VectorEnv::EpisodeRecord> take_finished_episodes() {
    std::vector<rl::VectorEnv::EpisodeRecord> out;
    for (auto& f : finished_) {
      out.insert(out.end(), f.begin(), f.end());
      f.clear();
    }
    return out;
  }

 private:
  void write(int i, std::vector<float>& c, std::vector<float>& g, std::vector<std::uint8_t>& m) const {
    const auto u = static_cast<std::size_t>(i);
    envs_[u]->write_observation(c.data() + u * cand_size_, g.data() + u * static_cast<std::size_t>(shape_.global_features),
                                m.data() + u * static_cast<std::size_t>(shape_.num_actions()));
  }
  void reset_env(int i) {
    const auto u = static_cast<std::size_t>(i);
    envs_[u]->reset(base_seed_[u] + static_cast<std::uint64_t>(n_) * episode_[u]);
  }
  void step_env(int i) {
    const auto u = static_cast<std::size_t>(i);
    SchedulingEnv& env = *envs_[u];
    if (pending_reset_[u]) {
      pending_reset_[u] = 0;
      reset_env(i);
      rewards_[u] = 0.0;
      terminated_[u] = truncated_[u] = 0;
      write(i, candidates_, global_, masks_);
      return;
    }
    const rl::StepResult r = env.step(actions_[i]);
    rewards_[u] = r.reward;
    terminated_[u] = r.terminated ? 1 : 0;
    truncated_[u] = r.truncated ? 1 : 0;
    if (r.terminated || r.truncated) {
      rl::VectorEnv::EpisodeRecord rec;
      rec.env = i;
      rec.seed = env.episode_seed();
      rec.episode_return = env.episode_return();
      rec.jobs = env.jobs_completed();
      rec.mean_jct_s = rec.jobs > 0 ? env.total_jct_s() / static_cast<double>(rec.jobs) : 0.0;
      rec.steps = env.episode_steps();
      finished_[u].push_back(rec);
      ++episode_[u];
      if (next_step_) {
        pending_reset_[u] = 1;
      } else {
        write(i, final_candidates_, final_global_, final_masks_);
        reset_env(i);
      }
    }
    write(i, candidates_, global_, masks_);
  }
  void run(const std::function<void(int)>& fn) {
    for (auto& e : errors_) e = nullptr;
    pool_.run(n_, [&](int i) {
      try {
        fn(i);
      } catch (...) {
        errors_[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
    for (auto& e : errors_) {  // the lowest env's error, whatever the thread timing
      if (e) std::rethrow_exception(e);
    }
  }

  std::shared_ptr<const ScenarioConfig> scenario_;  // outlives envs_
  int n_;
  bool next_step_;
  rl::EnvShape shape_;
  std::size_t cand_size_ = 0;
  std::vector<std::unique_ptr<SchedulingEnv>> envs_;
  std::vector<float> candidates_, global_, final_candidates_, final_global_;
  std::vector<std::uint8_t> masks_, final_masks_, terminated_, truncated_, pending_reset_;
  std::vector<double> rewards_;
  std::vector<std::uint64_t> base_seed_, episode_;
  std::vector<std::vector<rl::VectorEnv::EpisodeRecord>> finished_;
  std::vector<std::exception_ptr> errors_;
  const std::int32_t* actions_ = nullptr;
  rl::WorkerPool pool_;
};


py::list episode_dicts(const std::vector<rl::VectorEnv::EpisodeRecord>& episodes) {
  py::list out;
  for (const auto& e : episodes) {
    py::dict d;
    d["env"] = e.env;
    d["seed"] = e.seed;
    d["episode_return"] = e.episode_return;
    d["mean_jct_s"] = e.mean_jct_s;
    d["jobs"] = e.jobs;
    d["steps"] = e.steps;
    out.append(d);
  }
  return out;
}

// The actions of a batch step, checked with the GIL held (shape, type, range): an int32
// C-contiguous array goes through without a conversion (this is on every step), other
// integer types through int64, checked, never wrapped around. `keep` holds the array.
const std::int32_t* batch_actions(py::handle actions, py::ssize_t n, int num_actions, py::array& keep, std::vector<std::int32_t>& narrowed) {
  using Actions = py::array_t<std::int32_t, py::array::c_style>;
  const auto out_of_range = [&](py::ssize_t i, const std::string& value) {
    return py::value_error("actions: expected values in 0.." + std::to_string(num_actions - 1) + ", got " + value + " for env " + std::to_string(i));
  };
  const std::int32_t* data = nullptr;
  if (Actions::check_(actions) && py::reinterpret_borrow<py::array>(actions).ndim() == 1 && py::reinterpret_borrow<py::array>(actions).shape(0) == n) {
    keep = py::reinterpret_borrow<py::array>(actions);
    data = static_cast<const std::int32_t*>(keep.data());
  } else {
    keep = py::array::ensure(actions);
    const char kind = keep ? keep.dtype().kind() : 'O';
    if (kind != 'i' && kind != 'u')
      throw py::type_error("actions: expected an integer array, got " + (keep ? "dtype " + py::str(keep.dtype()).cast<std::string>() : python_type_name(actions)));
    if (keep.ndim() != 1 || keep.shape(0) != n)
      throw py::value_error("actions: expected shape (" + std::to_string(n) + ",), got " + py::str(py::getattr(keep, "shape")).cast<std::string>());
    auto wide = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(keep);
    for (py::ssize_t i = 0; i < n; ++i) {
      const std::int64_t x = wide.at(i);
      if (x < 0 || x >= num_actions) throw out_of_range(i, py::str(keep.attr("__getitem__")(i)));  // a uint64 above int64's range reads negative
      narrowed.push_back(static_cast<std::int32_t>(x));
    }
    data = narrowed.data();
  }
  for (py::ssize_t i = 0; i < n; ++i) {
    if (data[i] < 0 || data[i] >= num_actions) throw out_of_range(i, std::to_string(data[i]));
  }
  return data;
}

// Every action checked against its mask before any environment steps, so a bad one leaves
// the batch as it was. Rows in `skip` (NEXT_STEP resets, whose action is ignored) pass.
void check_masked(const std::int32_t* data, const std::uint8_t* masks, const std::uint8_t* skip, py::ssize_t n, int num_actions) {
  for (py::ssize_t i = 0; i < n; ++i) {
    const std::int32_t x = data[i];
    if ((skip == nullptr || !skip[i]) && !masks[i * num_actions + x]) {
      std::string mask;
      for (int b = 0; b < num_actions; ++b) mask += masks[i * num_actions + b] ? '1' : '0';
      throw PolicyError("actions: env " + std::to_string(i) + ": action " + std::to_string(x) + " is masked (mask over actions 0.." +
                        std::to_string(num_actions - 1) + ", the last one wait: " + mask + ")");
    }
  }
}

}  // namespace

void bind_env(py::module_& m) {
  m.attr("HAS_ENV") = true;
  m.def("candidate_feature_names", &SchedulingEnv::candidate_feature_names);
  m.def("global_feature_names", &SchedulingEnv::global_feature_names);

  py::class_<Env>(m, "Env", "One scheduling environment (use schedsim.make).")
      .def(py::init([](const Scenario& s, std::optional<int> k, Opt scale, std::optional<std::int64_t> max_steps, Opt wj, Opt ws, Opt wm) {
             return new Env(s, env_config(s, k, scale, max_steps, wj, ws, wm));
           }),
           py::arg("scenario"), py::arg("max_candidates") = py::none(), py::arg("reward_scale") = py::none(), py::arg("max_steps") = py::none(),
           py::arg("jobs_in_system") = py::none(), py::arg("slowdown") = py::none(), py::arg("makespan") = py::none())
      .def_property_readonly("shape", [](Env& e) { return shape_dict(e.env().shape()); })
      .def("reset", [](Env& e, std::int64_t seed) {
        const std::uint64_t s = seed_of(seed);
        {
          py::gil_scoped_release release;
          e.env().reset(s);
          e.observe();
        }
        return e.observation();
      }, py::arg("seed"))
      .def("step", [](Env& e, int action) {
        rl::StepResult r;
        {
          py::gil_scoped_release release;
          r = e.env().step(action);
          e.observe();
        }
        return py::make_tuple(e.observation(), r.reward, r.terminated, r.truncated);
      }, py::arg("action"))
      .def("legal", &Env::legal, py::arg("action"))
      .def_property_readonly("done", [](Env& e) { return e.env().done(); })
      .def_property_readonly("episode_steps", [](Env& e) { return e.env().episode_steps(); })
      .def("state", [](Env& e) { return state_dict(e.env()); });

  py::class_<EnvBatch>(m, "EnvBatch", "N environments stepped together, either autoreset mode (use schedsim.VectorEnv).")
      .def(py::init([](const Scenario& s, int num_envs, int num_threads, bool next_step, std::optional<int> k, Opt scale,
                       std::optional<std::int64_t> max_steps, Opt wj, Opt ws, Opt wm) {
             if (num_envs < 1 || num_envs > rl::WorkerPool::kMaxItems)
               throw py::value_error("num_envs: expected an int in 1.." + std::to_string(rl::WorkerPool::kMaxItems) + ", got " + std::to_string(num_envs));
             if (num_threads < 1) throw py::value_error("num_threads: expected an int >= 1, got " + std::to_string(num_threads));
             return new EnvBatch(s, env_config(s, k, scale, max_steps, wj, ws, wm), num_envs, num_threads, next_step);
           }),
           py::arg("scenario"), py::arg("num_envs"), py::arg("num_threads") = 1, py::arg("next_step") = true, py::arg("max_candidates") = py::none(),
           py::arg("reward_scale") = py::none(), py::arg("max_steps") = py::none(), py::arg("jobs_in_system") = py::none(),
           py::arg("slowdown") = py::none(), py::arg("makespan") = py::none())
      .def_property_readonly("num_envs", &EnvBatch::num_envs)
      .def_property_readonly("shape", [](EnvBatch& v) { return shape_dict(v.shape()); })
      .def("reset", [](EnvBatch& v, const std::vector<std::int64_t>& seeds) {
        if (seeds.size() != static_cast<std::size_t>(v.num_envs()))
          throw py::value_error("seed: expected " + std::to_string(v.num_envs()) + " seeds, got " + std::to_string(seeds.size()));
        std::vector<std::uint64_t> s;
        for (const std::int64_t x : seeds) s.push_back(seed_of(x));
        py::gil_scoped_release release;
        v.reset(s);
      }, py::arg("seeds"))
      .def("step", [](EnvBatch& v, py::handle actions, bool check_mask) {
        const py::ssize_t n = v.num_envs();
        const int num_actions = v.shape().num_actions();
        py::array keep;
        std::vector<std::int32_t> narrowed;
        const std::int32_t* data = batch_actions(actions, n, num_actions, keep, narrowed);
        if (check_mask) check_masked(data, v.masks(), v.pending_reset(), n, num_actions);
        int ended = 0;
        {
          py::gil_scoped_release release;
          v.step(data);
          for (int i = 0; i < v.num_envs(); ++i) ended += (v.terminated()[i] | v.truncated()[i]) ? 1 : 0;
        }
        return ended;
      }, py::arg("actions"), py::arg("check_mask") = true, "Steps every environment; returns how many ended an episode.")
      .def("arrays", [](py::object self) {
        // [N,K,F] candidates, [N,G] global, [N,K+1] masks, [N] rewards (float64), terminated,
        // truncated, pending NEXT_STEP resets. The buffers never move: views made once.
        auto& v = self.cast<EnvBatch&>();
        const rl::EnvShape& sh = v.shape();
        const py::ssize_t n = v.num_envs();
        return py::make_tuple(view_of(v.candidates(), {n, sh.num_candidates, sh.candidate_features}, self),
                              view_of(v.global(), {n, sh.global_features}, self),
                              view_of(reinterpret_cast<const bool*>(v.masks()), {n, sh.num_actions()}, self),
                              view_of(v.rewards(), {n}, self),
                              view_of(reinterpret_cast<const bool*>(v.terminated()), {n}, self),
                              view_of(reinterpret_cast<const bool*>(v.truncated()), {n}, self),
                              view_of(reinterpret_cast<const bool*>(v.pending_reset()), {n}, self));
      })
      .def("final_arrays", [](py::object self) {
        auto& v = self.cast<EnvBatch&>();
        const rl::EnvShape& sh = v.shape();
        const py::ssize_t n = v.num_envs();
        return py::make_tuple(view_of(v.final_candidates(), {n, sh.num_candidates, sh.candidate_features}, self),
                              view_of(v.final_global(), {n, sh.global_features}, self),
                              view_of(reinterpret_cast<const bool*>(v.final_masks()), {n, sh.num_actions()}, self));
      })
      .def("state", [](EnvBatch& v, int i) {
        if (i < 0 || i >= v.num_envs()) throw py::index_error("env: expected 0.." + std::to_string(v.num_envs() - 1) + ", got " + std::to_string(i));
        return state_dict(v.env(i));
      }, py::arg("env"))
      .def("take_finished_episodes", [](EnvBatch& v) { return episode_dicts(v.take_finished_episodes()); });
}

}  // namespace schedsim::python
