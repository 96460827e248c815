// The request-level serving engine: per-replica continuous batching (vLLM-style, chunked
// prefill), block-granular KV cache with recompute preemption, roofline iteration times,
// optional prefill/decode disaggregation. Event-driven: a replica's state changes only at
// the end of an iteration, and a run of decode-only iterations whose batch cannot change
// (no prefill to schedule, no completion, room in the KV cache) is one event whose time
// has a closed form (DecodeRun). Model and formulas: docs/serving.md.
#include "serving/serving_engine.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "serving/roofline.hpp"
#include "base/error.hpp"

namespace schedsim::serving {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class SeqState : std::uint8_t { Pending, Unrouted, Queued, Prefilling, Decoding, Transferring, Finished };
// Mixed: prefill and decode (no disaggregation); Prefill / Decode: disaggregated pools.
enum class Role : std::uint8_t { Mixed, Prefill, Decode };

struct Seq {
  Request request;
  SeqState state = SeqState::Pending;
  std::int32_t replica = -1;
  std::int64_t generated = 0;        // output tokens so far (decoding: derived from base, see below)
  std::int64_t prefill_target = 0;   // tokens the current prefill computes (prompt + generated)
  std::int64_t prefilled = 0;        // of them, done
  std::int64_t reserved_blocks = 0;  // prefilling: ceil(prefill_target / block), taken at admission
  std::int64_t base = 0;             // decoding: context of the next iteration minus the replica's iteration index
  std::int64_t finish_iteration = 0; // decoding: replica iteration index after which it is done
  std::int64_t admitted_order = 0;   // for the preemption victim (the most recently admitted)
  double first_token_s = -1;
  std::int32_t preemptions = 0;
};

enum class Phase : std::uint8_t { Idle, PlanAt, Iteration, Run };

struct Replica {
  Role role = Role::Mixed;
  double up_since_s = 0;   // holds its devices from here
  double ready_s = 0;      // takes requests from here (after warmup)
  bool ready_pending = false;
  std::deque<std::int32_t> queue;         // routed here, not admitted; preempted ones at the head
  std::vector<std::int32_t> prefilling;   // admitted, prefill not done; admission order
  std::int64_t decodes = 0;
  std::int64_t sum_base = 0;              // of the decodes: their next contexts sum to sum_base + decodes x iteration
  std::vector<std::int64_t> phase_count;  // decodes by base mod block (when each needs a new block)
  std::set<std::tuple<std::int64_t, std::int64_t, std::int32_t>> finishing;  // (finish iteration, id, seq)
  std::set<std::pair<std::int64_t, std::int32_t>> admitted;  // (admission order, seq): every running sequence
  std::int64_t iteration = 0;    // iterations done
  std::int64_t used_blocks = 0;
  std::int64_t outstanding_tokens = 0;  // routing key: prefill + output tokens still to compute here
  Phase phase = Phase::Idle;
  double start_s = 0;  // of the iteration or run in flight
  double end_s = 0;    // its end; PlanAt: when to plan
  std::vector<std::pair<std::int32_t, std::int64_t>> chunks;  // Iteration: (seq, prefill tokens)
  DecodeRun run;
  std::int64_t run_iterations = 0;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

std::string gb(double bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << bytes / 1e9 << " GB";
  return out.str();
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(12);
  out << v;
  return out.str();
}

}  // namespace

struct ServingEngine::Impl {
  DeploymentSpec deployment;
  DisaggregationSpec disaggregation;
  BatchRoofline roofline;
  std::int64_t block_tokens = 16;
  std::int64_t capacity_blocks = 0;
  double now_s = 0;
  double last_arrival_s = -kInf;
  int wanted = 0;

  std::vector<Seq> seqs;
  std::size_t next_pending = 0;               // seqs[next_pending..] have not arrived yet
  std::deque<std::int32_t> unrouted[2];       // no ready replica of the role: [0] prefill/mixed, [1] decode
  // KV caches on their way to a decode replica: (arrival time, seq).
  std::priority_queue<std::pair<double, std::int32_t>, std::vector<std::pair<double, std::int32_t>>, std::greater<>> transfers;
  struct Scale {
    double t_s;
    int replicas;
    double warmup_s;
  };
  std::deque<Scale> scales;
  double last_scale_s = -kInf;
  std::vector<Replica> replicas;
  std::int64_t admissions = 0;
  std::int64_t peak_blocks = 0;

  ServingStats committed;  // of iterations done and replicas gone
  double retired_active_s = 0;
  ServingStats stats;      // committed + what is in flight at now_s
  std::vector<RequestRecord> emitted;

  Impl(DeploymentSpec d, DisaggregationSpec g) : deployment(std::move(d)), disaggregation(g), roofline(deployment) {}

  Role role_of(int index) const {
    if (!disaggregation.enabled) return Role::Mixed;
    return index < disaggregation.prefill_replicas ? Role::Prefill : Role::Decode;
  }
  std::int64_t phase_of(std::int64_t x) const { return ((x % block_tokens) + block_tokens) % block_tokens; }

  // Tokens a sequence still has to compute on a replica of `role`.
  static std::int64_t contribution(const Seq& s, Role role) {
    const std::int64_t prefill = s.prefill_target - s.prefilled;
    if (role == Role::Prefill) return prefill;
    return prefill + (s.request.output_tokens - s.generated);
  }

  // New KV blocks the decodes of `r` take over iterations iteration..iteration+k-1 (a decode
  // whose next context c has (c - 1) % block == 0 starts a new block).
  std::int64_t new_blocks(const Replica& r, std::int64_t k) const {
    std::int64_t total = (k / block_tokens) * r.decodes;
    for (std::int64_t j = 0; j < k % block_tokens; ++j) total += r.phase_count[phase_of(1 - r.iteration - j)];
    return total;
  }
  // The most decode-only iterations that fit in `free_blocks`.
  std::int64_t iterations_fitting(const Replica& r, std::int64_t free_blocks) const {
    const std::int64_t cycles = free_blocks / r.decodes;
    std::int64_t k = cycles * block_tokens;
    std::int64_t left = free_blocks - cycles * r.decodes;
    for (std::int64_t j = 0; j < block_tokens; ++j) {
      const std::int64_t c = r.phase_count[phase_of(1 - r.iteration - j)];
      if (c > left) break;
      left -= c;
      ++k;
    }
    return k;
  }

  std::int64_t outstanding_at(const Replica& r, double t_s) const {
    if (r.phase != Phase::Run) return r.outstanding_tokens;
    return r.outstanding_tokens - r.decodes * r.run.iterations_within(r.start_s, t_s, r.run_iterations);
  }

  // ---- routing -------------------------------------------------------------------------

  // Least outstanding tokens among ready replicas of the role, lowest index on ties; -1 if none.
  int pick(bool decode_side, double t_s) const {
    int best = -1;
    std::int64_t best_tokens = 0;
    for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
      const Replica& r = replicas[i];
      if (r.ready_s > t_s) continue;
      if (disaggregation.enabled && ((r.role == Role::Decode) != decode_side)) continue;
      const std::int64_t tokens = outstanding_at(r, t_s);
      if (best < 0 || tokens < best_tokens) {
        best = i;
        best_tokens = tokens;
      }
    }
    return best;
  }

  // Puts seq `idx` in the queue of a replica at t_s (or keeps it unrouted); `by_arrival`
  // inserts it among the queue by arrival time instead of at the back.
  void route(std::int32_t idx, double t_s, bool by_arrival) {
    Seq& s = seqs[idx];
    const bool decode_side = disaggregation.enabled && s.prefilled == s.prefill_target && s.generated > 0;
    const int target = pick(decode_side, t_s);
    if (target < 0) {
      s.state = SeqState::Unrouted;
      s.replica = -1;
      unrouted[decode_side ? 1 : 0].push_back(idx);
      return;
    }
    Replica& r = replicas[target];
    s.state = SeqState::Queued;
    s.replica = target;
    r.outstanding_tokens += contribution(s, r.role);
    if (by_arrival) {
      auto at = std::find_if(r.queue.begin(), r.queue.end(), [&](std::int32_t other) {
        const Seq& o = seqs[other];
        return std::tie(o.request.arrival_s, o.request.id) > std::tie(s.request.arrival_s, s.request.id);
      });
      r.queue.insert(at, idx);
    } else {
      r.queue.push_back(idx);
    }
    wake(r, t_s);
  }

  // Work arrived at `r` at t_s: an idle replica plans at t_s; a decode run is cut at the
  // end of the iteration in flight at t_s, so the next iteration can take the newcomer.
  void wake(Replica& r, double t_s) {
    if (r.phase == Phase::Idle) {
      r.phase = Phase::PlanAt;
      r.end_s = std::max(t_s, r.ready_s);
    } else if (r.phase == Phase::Run) {
      const std::int64_t j = r.run.iterations_reaching(r.start_s, t_s, r.run_iterations);
      if (j < r.run_iterations) {
        r.run_iterations = j;
        r.end_s = r.start_s + r.run.elapsed_s(j);
      }
    }
  }

  // ---- sequences leaving a replica -----------------------------------------------------

  void leave_decode(Replica& r, std::int32_t idx) {
    Seq& s = seqs[idx];
    s.generated = s.base + r.iteration - s.request.prompt_tokens;
    r.used_blocks -= ceil_div(s.base + r.iteration - 1, block_tokens);
    --r.phase_count[phase_of(s.base)];
    --r.decodes;
    r.sum_base -= s.base;
    r.finishing.erase({s.finish_iteration, s.request.id, idx});
    r.admitted.erase({s.admitted_order, idx});
  }

  // `to_decode`: the prefill is done and the sequence decodes here, keeping its blocks
  // (ceil(prompt + generated - 1) / block, what it reserved) and its admission order.
  void leave_prefill(Replica& r, std::int32_t idx, bool to_decode = false) {
    Seq& s = seqs[idx];
    if (!to_decode) {
      r.used_blocks -= s.reserved_blocks;
      r.admitted.erase({s.admitted_order, idx});
    }
    s.reserved_blocks = 0;
    r.prefilling.erase(std::find(r.prefilling.begin(), r.prefilling.end(), idx));
  }

  // Evicts a running sequence's KV cache: it recomputes prompt + generated tokens later.
  void evict(Replica& r, std::int32_t idx) {
    Seq& s = seqs[idx];
    const std::int64_t before = contribution(s, r.role);
    if (s.state == SeqState::Decoding) leave_decode(r, idx); else leave_prefill(r, idx);
    s.prefill_target = s.request.prompt_tokens + s.generated;
    s.prefilled = 0;
    r.outstanding_tokens += contribution(s, r.role) - before;
    ++s.preemptions;
    ++committed.preemptions;
  }

  void finish(std::int32_t idx, double t_s, int replica_index) {
    Seq& s = seqs[idx];
    s.state = SeqState::Finished;
    RequestRecord rec;
    rec.id = s.request.id;
    rec.arrival_s = s.request.arrival_s;
    rec.first_token_s = s.first_token_s;
    rec.finish_s = t_s;
    rec.prompt_tokens = s.request.prompt_tokens;
    rec.output_tokens = s.request.output_tokens;
    rec.replica = replica_index;
    rec.preemptions = s.preemptions;
    emitted.push_back(rec);
  }

  void start_decode(Replica& r, std::int32_t idx) {
    Seq& s = seqs[idx];
    s.state = SeqState::Decoding;
    s.base = s.request.prompt_tokens + s.generated - r.iteration;
    s.finish_iteration = r.iteration + (s.request.output_tokens - s.generated);
    ++r.phase_count[phase_of(s.base)];
    ++r.decodes;
    r.sum_base += s.base;
    r.finishing.insert({s.finish_iteration, s.request.id, idx});
  }

  // ---- commits -------------------------------------------------------------------------

  void finish_decodes(Replica& r, int index, double t_s) {
    while (!r.finishing.empty() && std::get<0>(*r.finishing.begin()) <= r.iteration) {
      const std::int32_t idx = std::get<2>(*r.finishing.begin());
      leave_decode(r, idx);
      finish(idx, t_s, index);
    }
  }

  void commit_iteration(int index) {
    Replica& r = replicas[index];
    const double t = r.end_s;
    r.used_blocks += new_blocks(r, 1);
    ++r.iteration;
    r.outstanding_tokens -= r.decodes;
    committed.iterations += 1;
    committed.busy_replica_s += t - r.start_s;
    for (const auto& [idx, tokens] : r.chunks) {
      Seq& s = seqs[idx];
      s.prefilled += tokens;
      r.outstanding_tokens -= tokens;
      if (s.prefilled < s.prefill_target) continue;
      // The prefill's last position yields the next output token.
      const bool handoff = r.role == Role::Prefill && s.generated + 1 < s.request.output_tokens;
      const bool done = s.generated + 1 >= s.request.output_tokens;
      leave_prefill(r, idx, !handoff && !done);
      ++s.generated;
      if (r.role != Role::Prefill) r.outstanding_tokens -= 1;
      // Under disaggregation the first token leaves once the KV cache is on the decode side.
      const double arrives_s = handoff ? t + kv_transfer_s(s.prefill_target) : t;
      if (s.first_token_s < 0) s.first_token_s = arrives_s;
      if (done) {
        finish(idx, t, index);
      } else if (handoff) {
        s.state = SeqState::Transferring;
        s.replica = -1;
        s.prefilled = s.prefill_target;  // its KV travels with it
        transfers.push({arrives_s, idx});
      } else {
        start_decode(r, idx);
      }
    }
    r.chunks.clear();
    finish_decodes(r, index, t);
    r.phase = Phase::PlanAt;
  }

  void commit_run(int index, std::int64_t iterations, double t_s) {
    Replica& r = replicas[index];
    r.used_blocks += new_blocks(r, iterations);
    r.iteration += iterations;
    r.outstanding_tokens -= r.decodes * iterations;
    committed.iterations += iterations;
    committed.busy_replica_s += t_s - r.start_s;
    finish_decodes(r, index, t_s);
    r.phase = Phase::PlanAt;
    r.end_s = t_s;
  }

  double kv_transfer_s(std::int64_t prompt_tokens) const {
    return roofline.kv_bytes_per_token() * static_cast<double>(prompt_tokens) / disaggregation.kv_link_bytes_per_s;
  }

  // ---- planning the next iteration -----------------------------------------------------

  void plan(int index) {
    Replica& r = replicas[index];
    const double t = r.end_s;
    // 1. Room for every running decode's next token; otherwise evict the most recently
    //    admitted sequence (it goes back to the head of the queue) until there is.
    std::int64_t need = new_blocks(r, 1);
    bool preempted = false;
    while (r.decodes > 0 && r.used_blocks + need > capacity_blocks) {
      const std::int32_t victim = std::prev(r.admitted.end())->second;
      evict(r, victim);
      r.queue.push_front(victim);
      seqs[victim].state = SeqState::Queued;
      preempted = true;
      need = new_blocks(r, 1);
    }
    // 2. Prefill chunks: the admitted prefills first, then the queue in order, within the
    //    token budget, the request limit and the KV cache (a prefill reserves its blocks
    //    at admission). No admission in an iteration that preempted.
    std::int64_t budget = deployment.max_batched_tokens - r.decodes;
    r.chunks.clear();
    for (const std::int32_t idx : r.prefilling) {
      if (budget <= 0) break;
      const Seq& s = seqs[idx];
      const std::int64_t c = std::min(s.prefill_target - s.prefilled, budget);
      r.chunks.push_back({idx, c});
      budget -= c;
    }
    // (Unless nothing would run at all: then the queue head goes in.)
    const bool admit = !preempted || (r.decodes == 0 && r.prefilling.empty());
    while (admit && budget > 0 && !r.queue.empty() &&
           r.decodes + static_cast<std::int64_t>(r.prefilling.size()) < deployment.max_batch_requests) {
      const std::int32_t idx = r.queue.front();
      Seq& s = seqs[idx];
      if (s.prefilled == s.prefill_target) {
        // Arrived with its KV cache (disaggregation): decodes from this iteration on.
        const std::int64_t context = s.request.prompt_tokens + s.generated;
        const std::int64_t held = ceil_div(context - 1, block_tokens);
        const std::int64_t grows = (context - 1) % block_tokens == 0 ? 1 : 0;
        if (r.used_blocks + need + held + grows > capacity_blocks) break;
        r.queue.pop_front();
        r.used_blocks += held;
        s.admitted_order = admissions++;
        r.admitted.insert({s.admitted_order, idx});
        start_decode(r, idx);
        need = new_blocks(r, 1);
        budget -= 1;
        continue;
      }
      const std::int64_t reserve = ceil_div(s.prefill_target, block_tokens);
      if (r.used_blocks + need + reserve > capacity_blocks) break;
      r.queue.pop_front();
      r.used_blocks += reserve;
      s.reserved_blocks = reserve;
      s.state = SeqState::Prefilling;
      s.admitted_order = admissions++;
      r.admitted.insert({s.admitted_order, idx});
      r.prefilling.push_back(idx);
      const std::int64_t c = std::min(s.prefill_target, budget);
      r.chunks.push_back({idx, c});
      budget -= c;
    }
    if (r.used_blocks + need > capacity_blocks) {
      throw InvariantError("serving engine: replica " + std::to_string(index) + " would hold " +
                           std::to_string(r.used_blocks + need) + " KV blocks of " + std::to_string(capacity_blocks));
    }
    r.start_s = t;
    if (r.chunks.empty() && r.decodes == 0) {
      if (!r.queue.empty()) {
        throw InvariantError("serving engine: replica " + std::to_string(index) + " would idle with " +
                             std::to_string(r.queue.size()) + " queued requests");
      }
      r.phase = Phase::Idle;
      peak_blocks = std::max(peak_blocks, r.used_blocks);
      return;
    }
    if (r.chunks.empty() && !preempted) {
      // Decode only, and nothing can join before a completion or a full KV cache: one run.
      const std::int64_t until_finish = std::get<0>(*r.finishing.begin()) - r.iteration;
      const std::int64_t until_full = iterations_fitting(r, capacity_blocks - r.used_blocks);
      r.run_iterations = std::min(until_finish, until_full);
      r.run = DecodeRun(roofline, r.decodes, decode_context(r));
      r.phase = Phase::Run;
      r.end_s = t + r.run.elapsed_s(r.run_iterations);
      peak_blocks = std::max(peak_blocks, r.used_blocks + new_blocks(r, r.run_iterations));
      return;
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> shape;
    shape.reserve(r.chunks.size());
    for (const auto& [idx, c] : r.chunks) shape.push_back({seqs[idx].prefilled, c});
    r.phase = Phase::Iteration;
    r.end_s = t + roofline.iteration_time_s(shape, r.decodes, decode_context(r));
    peak_blocks = std::max(peak_blocks, r.used_blocks + need);
  }

  // Sum of the decodes' contexts in the next iteration, from the running sum of bases.
  std::int64_t decode_context(const Replica& r) const { return r.sum_base + r.decodes * r.iteration; }


  // ---- replicas coming and going -------------------------------------------------------

  void drain_unrouted(double t_s) {
    for (auto& pending : unrouted) {
      std::deque<std::int32_t> waiting;
      waiting.swap(pending);
      for (const std::int32_t idx : waiting) route(idx, t_s, true);
    }
  }

  void add_replica(double t_s, double warmup_s) {
    Replica r;
    r.role = role_of(static_cast<int>(replicas.size()));
    r.up_since_s = t_s;
    r.ready_s = t_s + warmup_s;
    r.ready_pending = warmup_s > 0;
    r.phase_count.assign(static_cast<std::size_t>(block_tokens), 0);
    replicas.push_back(std::move(r));
    if (warmup_s <= 0) drain_unrouted(t_s);
  }

  // The highest-index replica stops at t_s: work done by then counts, the iteration in
  // flight is lost, its sequences' KV caches are dropped and they are routed again.
  void remove_last_replica(double t_s) {
    const int index = static_cast<int>(replicas.size()) - 1;
    Replica& r = replicas.back();
    if (r.phase == Phase::Run) {
      const std::int64_t j = r.run.iterations_within(r.start_s, t_s, r.run_iterations);
      commit_run(index, j, t_s);
    } else if (r.phase == Phase::Iteration) {
      committed.busy_replica_s += t_s - r.start_s;
      r.chunks.clear();
    }
    std::vector<std::int32_t> moved;
    for (const auto& entry : r.admitted) moved.push_back(entry.second);
    for (const std::int32_t idx : moved) evict(r, idx);
    moved.insert(moved.end(), r.queue.begin(), r.queue.end());
    retired_active_s += t_s - r.up_since_s;
    replicas.pop_back();
    for (const std::int32_t idx : moved) route(idx, t_s, true);
  }

  void apply_scale(const Scale& s) {
    while (static_cast<int>(replicas.size()) > s.replicas) remove_last_replica(s.t_s);
    while (static_cast<int>(replicas.size()) < s.replicas) add_replica(s.t_s, s.warmup_s);
  }

  // ---- the event loop ------------------------------------------------------------------

  // Processes, in time order, every event at or before t_s, except planning at t_s itself
  // (a request submitted later for t_s may still join that iteration). At equal times:
  // iteration ends, replicas becoming ready, scaling, KV transfers arriving, requests
  // arriving, planning; among replicas the lowest index first.
  double run_until(double t_s) {
    double last_s = now_s;
    for (;;) {
      double best_s = kInf;
      int kind = 99;
      int who = -1;
      const auto consider = [&](double time_s, int k, int w) {
        if (time_s < best_s || (time_s == best_s && k < kind)) {
          best_s = time_s;
          kind = k;
          who = w;
        }
      };
      for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
        const Replica& r = replicas[i];
        if (r.phase == Phase::Iteration || r.phase == Phase::Run) consider(r.end_s, 0, i);
        if (r.phase == Phase::PlanAt) consider(r.end_s, 5, i);
        if (r.ready_pending) consider(r.ready_s, 1, i);
      }
      if (!scales.empty()) consider(scales.front().t_s, 2, -1);
      if (!transfers.empty()) consider(transfers.top().first, 3, -1);
      if (next_pending < seqs.size()) consider(seqs[next_pending].request.arrival_s, 4, -1);
      if (best_s == kInf || best_s > t_s || (kind == 5 && best_s >= t_s)) break;
      last_s = best_s;
      switch (kind) {
        case 0:
          if (replicas[who].phase == Phase::Iteration) {
            commit_iteration(who);
          } else {
            commit_run(who, replicas[who].run_iterations, replicas[who].end_s);
          }
          break;
        case 1:
          replicas[who].ready_pending = false;
          drain_unrouted(best_s);
          break;
        case 2: {
          const Scale s = scales.front();
          scales.pop_front();
          apply_scale(s);
          break;
        }
        case 3: {
          const std::int32_t idx = transfers.top().second;
          transfers.pop();
          route(idx, best_s, false);
          break;
        }
        case 4: {
          const auto idx = static_cast<std::int32_t>(next_pending++);
          route(idx, best_s, false);
          break;
        }
        default:
          plan(who);
      }
    }
    return last_s;
  }

  void update_stats(double t_s) {
    stats = committed;
    double active_s = retired_active_s;
    for (const Replica& r : replicas) {
      active_s += t_s - r.up_since_s;
      if (r.phase == Phase::Iteration) stats.busy_replica_s += std::max(0.0, t_s - r.start_s);
      if (r.phase == Phase::Run) {
        stats.busy_replica_s += std::max(0.0, t_s - r.start_s);
        stats.iterations += r.run.iterations_within(r.start_s, t_s, r.run_iterations);
      }
    }
    stats.active_replica_s = active_s;
    // Devices of a replica in an iteration draw TDP, the others (idle or loading the
    // model) idle power.
    const double devices = deployment.tensor_parallel;
    stats.energy_j = devices * (deployment.device.tdp_w * stats.busy_replica_s +
                                deployment.device.idle_w * (stats.active_replica_s - stats.busy_replica_s));
  }
};

namespace {

std::string deployment_name(const DeploymentSpec& d) {
  return "serving deployment '" + d.model.name + "' on " + std::to_string(d.tensor_parallel) + " x " + d.device.name;
}

void validate(const DeploymentSpec& d, int replicas, const DisaggregationSpec& g) {
  const std::string where = deployment_name(d);
  d.model.validate();
  const auto positive_int = [&](const char* key, long long v) {
    if (v <= 0) throw InputError(where, std::string(key) + ": must be > 0, got " + std::to_string(v));
  };
  const auto fraction = [&](const char* key, double v) {
    if (!(v > 0 && v <= 1)) throw InputError(where, std::string(key) + ": must be in (0, 1], got " + number(v));
  };
  const auto positive = [&](const char* key, double v) {
    if (!(v > 0) || !std::isfinite(v)) throw InputError(where, std::string(key) + ": must be > 0, got " + number(v));
  };
  positive_int("tensor_parallel", d.tensor_parallel);
  positive_int("max_batch_requests", d.max_batch_requests);
  positive_int("max_batched_tokens", d.max_batched_tokens);
  positive_int("kv_block_tokens", d.kv_block_tokens);
  if (d.max_batched_tokens < d.max_batch_requests) {
    throw InputError(where, "max_batched_tokens (" + std::to_string(d.max_batched_tokens) + ") must be >= max_batch_requests (" +
                                std::to_string(d.max_batch_requests) + "): every running sequence decodes a token per iteration");
  }
  fraction("gpu_memory_utilization", d.gpu_memory_utilization);
  fraction("compute_efficiency", d.compute_efficiency);
  fraction("memory_efficiency", d.memory_efficiency);
  positive("bytes_per_param", d.bytes_per_param);
  positive("device peak_dense_bf16_flops", d.device.peak_dense_bf16_flops);
  positive("device memory_bytes", d.device.memory_bytes);
  positive("device memory_bandwidth_bytes_per_s", d.device.memory_bandwidth_bytes_per_s);
  if (d.tensor_parallel > 1) positive("device intra_node_link_bytes_per_s (tensor_parallel > 1)", d.device.intra_node_link_bytes_per_s);
  if (replicas < 0) throw InputError(where, "replicas: must be >= 0, got " + std::to_string(replicas));
  if (g.enabled) {
    if (g.prefill_replicas < 1 || g.prefill_replicas >= replicas) {
      throw InputError(where, "disaggregation: prefill_replicas must be in 1.." + std::to_string(replicas - 1) +
                                  " (at least one prefill and one decode replica of " + std::to_string(replicas) + "), got " +
                                  std::to_string(g.prefill_replicas));
    }
    positive("disaggregation kv_link_bytes_per_s", g.kv_link_bytes_per_s);
  }
}

}  // namespace

ServingEngine::ServingEngine(DeploymentSpec deployment, int replicas, DisaggregationSpec disaggregation) {
  validate(deployment, replicas, disaggregation);
  impl_ = std::make_unique<Impl>(std::move(deployment), disaggregation);
  Impl& m = *impl_;
  const DeploymentSpec& d = m.deployment;
  m.block_tokens = d.kv_block_tokens;
  const double usable = d.gpu_memory_utilization * d.device.memory_bytes * d.tensor_parallel;
  const double weights = m.roofline.weight_bytes();
  const std::string where = deployment_name(d);
  const std::string room = number(d.gpu_memory_utilization) + " x " + gb(d.device.memory_bytes) + " x " +
                           std::to_string(d.tensor_parallel) + " = " + gb(usable) + " for weights and KV cache";
  if (weights > usable) {
    throw InputError(where, "the weights (" + gb(weights) + " at " + number(d.bytes_per_param) +
                                " bytes per parameter) do not fit: " + room +
                                "; raise tensor_parallel or gpu_memory_utilization");
  }
  const double block_bytes = m.roofline.kv_bytes_per_token() * static_cast<double>(m.block_tokens);
  m.capacity_blocks = static_cast<std::int64_t>(std::floor((usable - weights) / block_bytes));
  if (m.capacity_blocks < 1) {
    throw InputError(where, "after the weights (" + gb(weights) + ") no KV block of " + std::to_string(m.block_tokens) +
                                " tokens (" + gb(block_bytes) + ") fits: " + room);
  }
  m.wanted = replicas;
  for (int i = 0; i < replicas; ++i) m.add_replica(0.0, 0.0);
  m.update_stats(0.0);
}

ServingEngine::~ServingEngine() = default;
ServingEngine::ServingEngine(const ServingEngine& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
ServingEngine& ServingEngine::operator=(const ServingEngine& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
ServingEngine::ServingEngine(ServingEngine&&) noexcept = default;
ServingEngine& ServingEngine::operator=(ServingEngine&&) noexcept = default;

void ServingEngine::submit(const Request& request) {
  Impl& m = *impl_;
  const std::string where = "request " + std::to_string(request.id);
  if (!std::isfinite(request.arrival_s) || request.arrival_s < m.now_s || request.arrival_s < m.last_arrival_s) {
    throw InputError(where, "arrival_s " + number(request.arrival_s) + " must be finite and at or after the engine's time (" +
                                number(m.now_s) + ") and the previous request's arrival (" +
                                number(std::max(m.last_arrival_s, 0.0)) + "): submit in arrival order");
  }
  if (request.prompt_tokens < 1) {
    throw InputError(where, "prompt_tokens: must be >= 1, got " + std::to_string(request.prompt_tokens));
  }
  if (request.output_tokens < 1) {
    throw InputError(where, "output_tokens: must be >= 1, got " + std::to_string(request.output_tokens));
  }
  // The largest KV cache it holds: prompt + every output token but the last.
  const std::int64_t tokens = static_cast<std::int64_t>(request.prompt_tokens) + request.output_tokens - 1;
  const std::int64_t blocks = ceil_div(tokens, m.block_tokens);
  if (blocks > m.capacity_blocks) {
    throw InputError(where, "prompt_tokens " + std::to_string(request.prompt_tokens) + " + output_tokens " +
                                std::to_string(request.output_tokens) + " need KV cache for " + std::to_string(tokens) +
                                " tokens (" + std::to_string(blocks) + " blocks of " + std::to_string(m.block_tokens) +
                                ") but one replica of " + deployment_name(m.deployment).substr(19) + " holds " +
                                std::to_string(m.capacity_blocks * m.block_tokens) + " tokens (" +
                                std::to_string(m.capacity_blocks) + " blocks): it could never run");
  }
  Seq s;
  s.request = request;
  s.prefill_target = request.prompt_tokens;
  m.seqs.push_back(s);
  m.last_arrival_s = request.arrival_s;
}

void ServingEngine::advance_to(double t_s, std::vector<RequestRecord>& finished) {
  Impl& m = *impl_;
  if (std::isnan(t_s) || t_s < m.now_s) {
    throw InputError("serving engine", "advance_to(" + number(t_s) + "): the time must be at or after now (" +
                                           number(m.now_s) + ")");
  }
  const double last_s = m.run_until(t_s);
  m.now_s = std::isinf(t_s) ? std::max(m.now_s, last_s) : t_s;
  m.update_stats(m.now_s);
  std::sort(m.emitted.begin(), m.emitted.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return std::tie(a.finish_s, a.id) < std::tie(b.finish_s, b.id);
  });
  finished.insert(finished.end(), m.emitted.begin(), m.emitted.end());
  m.emitted.clear();
}

void ServingEngine::set_replicas(double t_s, int replicas, double warmup_s) {
  Impl& m = *impl_;
  const std::string where = "set_replicas(" + number(t_s) + ", " + std::to_string(replicas) + ", " + number(warmup_s) + ")";
  if (!std::isfinite(t_s) || t_s < m.now_s || t_s < m.last_scale_s) {
    throw InputError(where, "the time must be finite and at or after now (" + number(m.now_s) +
                                ") and the previous set_replicas time");
  }
  if (!std::isfinite(warmup_s) || warmup_s < 0) throw InputError(where, "warmup_s must be >= 0, got " + number(warmup_s));
  if (replicas < 0) throw InputError(where, "replicas must be >= 0, got " + std::to_string(replicas));
  if (m.disaggregation.enabled && replicas <= m.disaggregation.prefill_replicas) {
    throw InputError(where, "with disaggregation the first " + std::to_string(m.disaggregation.prefill_replicas) +
                                " replicas prefill: replicas must be > " + std::to_string(m.disaggregation.prefill_replicas) +
                                " to leave a decode replica");
  }
  m.scales.push_back({t_s, replicas, warmup_s});
  m.last_scale_s = t_s;
  m.wanted = replicas;
}

double ServingEngine::now_s() const { return impl_->now_s; }
int ServingEngine::replicas() const { return impl_->wanted; }

std::int64_t ServingEngine::waiting() const {
  std::int64_t n = static_cast<std::int64_t>(impl_->unrouted[0].size() + impl_->unrouted[1].size());
  for (const Replica& r : impl_->replicas) n += static_cast<std::int64_t>(r.queue.size());
  return n;
}

std::int64_t ServingEngine::running() const {
  std::int64_t n = static_cast<std::int64_t>(impl_->transfers.size());
  for (const Replica& r : impl_->replicas) n += r.decodes + static_cast<std::int64_t>(r.prefilling.size());
  return n;
}

const ServingStats& ServingEngine::stats() const { return impl_->stats; }
std::int64_t ServingEngine::kv_capacity_tokens() const { return impl_->capacity_blocks * impl_->block_tokens; }
std::int64_t ServingEngine::kv_capacity_blocks() const { return impl_->capacity_blocks; }
std::int64_t ServingEngine::peak_kv_blocks_used() const { return impl_->peak_blocks; }

int ServingEngine::ready_replicas() const {
  int n = 0;
  for (const Replica& r : impl_->replicas) n += r.ready_s <= impl_->now_s ? 1 : 0;
  return n;
}

std::int64_t ServingEngine::outstanding_tokens() const {
  std::int64_t n = 0;
  for (const Replica& r : impl_->replicas) n += impl_->outstanding_at(r, impl_->now_s);
  return n;
}

double ServingEngine::iteration_time_s(const std::vector<std::pair<std::int64_t, std::int64_t>>& prefill_chunks,
                                       std::int64_t decodes, std::int64_t decode_context_tokens) const {
  return impl_->roofline.iteration_time_s(prefill_chunks, decodes, decode_context_tokens);
}

double ServingEngine::kv_transfer_time_s(std::int64_t prompt_tokens) const {
  if (!impl_->disaggregation.enabled) return 0;
  return impl_->kv_transfer_s(prompt_tokens);
}

std::vector<RequestRecord> serve_all(const DeploymentSpec& deployment, int replicas, const std::vector<Request>& requests,
                                     DisaggregationSpec disaggregation) {
  ServingEngine engine(deployment, replicas, disaggregation);
  std::vector<Request> sorted = requests;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  for (const Request& r : sorted) engine.submit(r);
  std::vector<RequestRecord> out;
  out.reserve(requests.size());
  engine.advance_to(kInf, out);
  return out;
}

}  // namespace schedsim::serving
