// The jobs.csv records of a run held as typed columns (one array per jobs.csv column),
// for Python's simulate(): about 60-150 bytes per job instead of a line of text plus a
// Python object per cell. The values are those a CSV reader gets from the CLI's
// jobs.csv: seconds are microsecond ticks / 1e6 (the double nearest the file's exact
// decimal), energy numbers are rounded through the file's "%.9g".
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim/energy.hpp"
#include "sim/job.hpp"

namespace schedsim {

// One column that stores nothing per row while every row has the same value (most
// counters of a run without preemptions or failures, the status of a run where every
// job completed): the vector is filled in only when a second value arrives.
template <typename T>
class ConstantRunColumn {
 public:
  void reserve(std::size_t n) { reserve_ = n; }
  void push(T v) {
    if (rows_ == 0) first_ = v;
    if (constant_ && !same(v, first_)) {
      values_.reserve(reserve_ > rows_ ? reserve_ : rows_ + 1);
      values_.assign(rows_, first_);
      constant_ = false;
    }
    if (!constant_) values_.push_back(v);
    ++rows_;
  }
  std::size_t rows() const { return rows_; }
  bool constant() const { return constant_; }
  T first() const { return first_; }          // the value of every row while constant()
  std::vector<T>& values() { return values_; }  // every row once !constant(); else empty

 private:
  // NaN equals NaN here: an all-NaN column is constant.
  static bool same(T a, T b) { return a == b || (a != a && b != b); }
  T first_{};
  std::size_t rows_ = 0;
  std::size_t reserve_ = 0;
  bool constant_ = true;
  std::vector<T> values_;
};

struct JobColumns {
  // job_id as fixed-width bytes (numpy's 'S<width>'): row i is bytes [i*width, (i+1)*width),
  // padded with NUL; the width grows (and the rows are re-laid) when a longer id arrives.
  std::vector<char> id_bytes;
  std::size_t id_width = 1;
  bool ids_ascii = true;  // else they are decoded as UTF-8
  ConstantRunColumn<double> submit_s, start_s, end_s, jct_s, queue_delay_s, gpu_s, checkpoint_gpu_s, periodic_checkpoint_gpu_s,
      restart_gpu_s, lost_gpu_s;
  ConstantRunColumn<std::int32_t> num_gpus;
  ConstantRunColumn<std::uint32_t> preemptions, moves, loss_spike_restarts, failure_restarts;
  ConstantRunColumn<std::uint8_t> status;  // JobStatus codes; names via to_string(JobStatus)
  bool has_energy = false;  // false: the three energy columns are empty (NaN), as in jobs.csv
  ConstantRunColumn<double> energy_kwh, cost_usd, co2_kg;

  std::size_t rows() const { return submit_s.rows(); }

  // `n` = the expected number of rows (0 = unknown): each column that stops being
  // constant reserves it at once instead of growing by doubling.
  void reserve(std::size_t n) {
    expected_ = n;
    for (auto* c : {&submit_s, &start_s, &end_s, &jct_s, &queue_delay_s, &gpu_s, &checkpoint_gpu_s, &periodic_checkpoint_gpu_s, &restart_gpu_s,
                    &lost_gpu_s, &energy_kwh, &cost_usd, &co2_kg}) {
      c->reserve(n);
    }
    for (auto* c : {&preemptions, &moves, &loss_spike_restarts, &failure_restarts}) c->reserve(n);
    num_gpus.reserve(n);
    status.reserve(n);
  }

  // The columns of one jobs.csv row (runner.cpp's JobsCsvWriter writes the same fields).
  void append(const JobState& j, const EnergyUse* energy) {
    append_id(j.spec.id);
    submit_s.push(seconds(j.spec.submit.us()));
    start_s.push(seconds(j.start.us()));
    end_s.push(seconds(j.end.us()));
    num_gpus.push(j.spec.num_gpus);
    jct_s.push(seconds((j.end - j.spec.submit).us()));
    queue_delay_s.push(seconds((j.end - j.spec.submit).us() - j.held_us));
    status.push(static_cast<std::uint8_t>(j.status));
    gpu_s.push(seconds(j.device_us));
    checkpoint_gpu_s.push(seconds(j.overhead_device_us));
    preemptions.push(j.preemptions);
    moves.push(j.moves);
    loss_spike_restarts.push(j.loss_spike_restarts);
    failure_restarts.push(j.failure_restarts);
    periodic_checkpoint_gpu_s.push(seconds(j.checkpoint_device_us));
    restart_gpu_s.push(seconds(j.restart_device_us));
    lost_gpu_s.push(seconds(j.lost_device_us));
    if (energy) {
      has_energy = true;
      const double nan = std::nan("");
      energy_kwh.push(as_written(energy->energy_kwh));
      cost_usd.push(energy->cost_usd ? as_written(*energy->cost_usd) : nan);
      co2_kg.push(energy->co2_kg ? as_written(*energy->co2_kg) : nan);
    }
  }

 private:
  static double seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }
  // What a reader of jobs.csv gets back from the "%.9g" text.
  static double as_written(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::strtod(buf, nullptr);
  }
  void append_id(const std::string& id) {
    if (id.size() > id_width) {
      const std::size_t n = rows();
      std::vector<char> wider;
      wider.reserve((expected_ > n ? expected_ : n + 1) * id.size());
      wider.resize(n * id.size(), '\0');
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&wider[i * id.size()], &id_bytes[i * id_width], id_width);
      id_bytes.swap(wider);
      id_width = id.size();
    } else if (id_bytes.capacity() == 0 && expected_ > 0) {
      id_bytes.reserve(expected_ * id_width);
    }
    for (char c : id) ids_ascii = ids_ascii && static_cast<unsigned char>(c) < 0x80;
    const std::size_t at = id_bytes.size();
    id_bytes.resize(at + id_width, '\0');
    std::memcpy(&id_bytes[at], id.data(), id.size());
  }
  std::size_t expected_ = 0;
};

}  // namespace schedsim
