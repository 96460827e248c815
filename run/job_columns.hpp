// The jobs.csv records of a run held as typed columns, for Python's simulate(): about
// 29 bytes a job under fifo (about 120 and the ids with every column varying) instead of a
// line of text plus a Python object per cell. What is kept is what the columns are
// computed from: the times as integer microsecond ticks (submit, start, end), from which
// Python derives submit_s, start_s, end_s, jct_s, queue_delay_s and gpu_s with the same
// arithmetic as JobsCsvWriter (ticks / 1e6: the double nearest the file's exact
// decimal); a job's held time and device time only where they are not end - start and
// num_gpus x that. Energy numbers are rounded through the file's "%.9g". The completed
// jobs' JCT and queue-delay samples of the summary come from here too
// (CompletedJobSamples), so the metrics collector keeps none.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "world/energy/energy.hpp"
#include "sim/job.hpp"
#include "sim/metrics.hpp"

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
  T at(std::size_t i) const { return constant_ ? first_ : values_[i]; }
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

// An int64 column that stores nothing while every row equals a formula of the other
// columns (a job's held time is end - start when it ran once): the vector is filled in,
// by the formula, when a row differs. Python computes the column by the same formula.
class DerivedRunColumn {
 public:
  void reserve(std::size_t n) { reserve_ = n; }
  // `formula`: the formula's value for this row (nullopt where it cannot be computed,
  // e.g. it overflows); `formula_at(i)`: its value for an earlier row i.
  template <typename FormulaAt>
  void push(std::int64_t v, std::optional<std::int64_t> formula, FormulaAt&& formula_at) {
    if (derived_ && formula != v) {
      values_.reserve(reserve_ > rows_ ? reserve_ : rows_ + 1);
      for (std::size_t i = 0; i < rows_; ++i) values_.push_back(formula_at(i));
      derived_ = false;
    }
    if (!derived_) values_.push_back(v);
    ++rows_;
  }
  bool derived() const { return derived_; }
  std::vector<std::int64_t>& values() { return values_; }  // every row once !derived(); else empty
  const std::vector<std::int64_t>& values() const { return values_; }

 private:
  std::size_t rows_ = 0;
  std::size_t reserve_ = 0;
  bool derived_ = true;
  std::vector<std::int64_t> values_;
};

// An int32 column kept one byte a row while every value is in 0..255 (GPU counts), and
// once while constant; Python widens it back to int32.
class SmallIntRunColumn {
 public:
  void reserve(std::size_t n) {
    narrow_.reserve(n);
    wide_.reserve(n);
  }
  void push(std::int32_t v) {
    if (!is_wide_ && (v < 0 || v > 255)) {
      for (std::size_t i = 0; i < narrow_.rows(); ++i) wide_.push(narrow_.at(i));
      narrow_ = ConstantRunColumn<std::uint8_t>();
      is_wide_ = true;
    }
    if (is_wide_) wide_.push(v);
    else narrow_.push(static_cast<std::uint8_t>(v));
  }
  std::int32_t at(std::size_t i) const { return is_wide_ ? wide_.at(i) : narrow_.at(i); }
  bool wide() const { return is_wide_; }
  ConstantRunColumn<std::uint8_t>& narrow() { return narrow_; }  // the rows while !wide()
  ConstantRunColumn<std::int32_t>& wide_column() { return wide_; }  // the rows once wide()

 private:
  bool is_wide_ = false;
  ConstantRunColumn<std::uint8_t> narrow_;
  ConstantRunColumn<std::int32_t> wide_;
};

// Job ids, numbered while every id is one prefix followed by a number written in
// decimal without leading zeros below 2^32 (the synthetic workload's "0", "1", ...;
// "job-17"): 4 bytes a row. Otherwise (and from then on) fixed-width bytes, numpy's
// 'S<width>': row i is bytes [i*width, (i+1)*width), padded with NUL; the width grows
// (and the rows are re-laid) when a longer id arrives.
class JobIdColumn {
 public:
  void reserve(std::size_t n) { expected_ = n; }
  void push(const std::string& id) {
    std::uint32_t number = 0;
    if (numbered_) {
      if (rows_ == 0 && !split(id, prefix_, number)) numbered_ = false;
      std::string prefix;
      if (numbered_ && rows_ > 0 && !(split(id, prefix, number) && prefix == prefix_)) to_bytes();
    }
    if (numbered_) {
      if (numbers_.capacity() == 0 && expected_ > 0) numbers_.reserve(expected_);
      numbers_.push_back(number);
    } else {
      append_bytes(id);
    }
    ++rows_;
  }
  std::size_t rows() const { return rows_; }
  bool numbered() const { return numbered_; }
  const std::string& prefix() const { return prefix_; }          // while numbered()
  std::vector<std::uint32_t>& numbers() { return numbers_; }     // while numbered()
  std::vector<char>& bytes() { return bytes_; }                  // once !numbered()
  std::size_t width() const { return width_; }                   // of bytes()
  bool ascii() const { return ascii_; }                          // else the ids are UTF-8
  std::string at(std::size_t i) const {
    if (numbered_) return prefix_ + std::to_string(numbers_[i]);
    return std::string(&bytes_[i * width_], strnlen(&bytes_[i * width_], width_));
  }

 private:
  // id = prefix + the number; false when it is not of that form (or has a NUL, which
  // the bytes' padding would drop).
  static bool split(const std::string& id, std::string& prefix, std::uint32_t& number) {
    std::size_t digits = id.size();
    while (digits > 0 && id[digits - 1] >= '0' && id[digits - 1] <= '9') --digits;
    const std::size_t count = id.size() - digits;
    if (count == 0 || count > 10 || (count > 1 && id[digits] == '0') || id.find('\0') != std::string::npos) return false;
    std::uint64_t n = 0;
    for (std::size_t i = digits; i < id.size(); ++i) n = n * 10 + static_cast<std::uint64_t>(id[i] - '0');
    if (n > UINT32_MAX) return false;
    prefix.assign(id, 0, digits);
    number = static_cast<std::uint32_t>(n);
    return true;
  }
  void to_bytes() {
    numbered_ = false;
    const std::size_t n = rows_;
    std::vector<std::uint32_t> numbers;
    numbers.swap(numbers_);
    rows_ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      append_bytes(prefix_ + std::to_string(numbers[i]));
      ++rows_;
    }
  }
  void append_bytes(const std::string& id) {
    if (id.size() > width_) {
      std::vector<char> wider;
      wider.reserve((expected_ > rows_ ? expected_ : rows_ + 1) * id.size());
      wider.resize(rows_ * id.size(), '\0');
      for (std::size_t i = 0; i < rows_; ++i) std::memcpy(&wider[i * id.size()], &bytes_[i * width_], width_);
      bytes_.swap(wider);
      width_ = id.size();
    } else if (bytes_.capacity() == 0 && expected_ > 0) {
      bytes_.reserve(expected_ * width_);
    }
    for (char c : id) ascii_ = ascii_ && static_cast<unsigned char>(c) < 0x80;
    const std::size_t at = bytes_.size();
    bytes_.resize(at + width_, '\0');
    std::memcpy(&bytes_[at], id.data(), id.size());
  }
  std::size_t expected_ = 0;
  std::size_t rows_ = 0;
  bool numbered_ = true;
  std::string prefix_;
  std::vector<std::uint32_t> numbers_;
  std::vector<char> bytes_;
  std::size_t width_ = 1;
  bool ascii_ = true;
};

struct JobColumns : CompletedJobSamples {
  JobIdColumn job_id;
  // Microsecond ticks; the seconds are ticks / 1e6.
  ConstantRunColumn<std::int64_t> submit_us, start_us, end_us;
  SmallIntRunColumn num_gpus;
  DerivedRunColumn held_us;    // derived: end_us - start_us
  DerivedRunColumn device_us;  // derived: num_gpus x held_us (gpu_s = device_us / 1e6)
  ConstantRunColumn<double> checkpoint_gpu_s, periodic_checkpoint_gpu_s, restart_gpu_s, lost_gpu_s;
  ConstantRunColumn<std::uint32_t> preemptions, moves, loss_spike_restarts, failure_restarts;
  ConstantRunColumn<std::uint8_t> status;  // JobStatus codes; names via to_string(JobStatus)
  bool has_energy = false;  // false: the three energy columns are empty (NaN), as in jobs.csv
  ConstantRunColumn<double> energy_kwh, cost_usd, co2_kg;

  std::size_t rows() const { return submit_us.rows(); }

  // `n` = the expected number of rows (0 = unknown): each column that stores rows
  // reserves it at once instead of growing by doubling.
  void reserve(std::size_t n) {
    job_id.reserve(n);
    for (auto* c : {&submit_us, &start_us, &end_us}) c->reserve(n);
    num_gpus.reserve(n);
    held_us.reserve(n);
    device_us.reserve(n);
    for (auto* c : {&checkpoint_gpu_s, &periodic_checkpoint_gpu_s, &restart_gpu_s, &lost_gpu_s, &energy_kwh, &cost_usd, &co2_kg}) c->reserve(n);
    for (auto* c : {&preemptions, &moves, &loss_spike_restarts, &failure_restarts}) c->reserve(n);
    status.reserve(n);
  }

  // The columns of one jobs.csv row (runner.cpp's JobsCsvWriter writes the same fields).
  void append(const JobState& j, const EnergyUse* energy) {
    job_id.push(j.spec.id);
    submit_us.push(j.spec.submit.us());
    start_us.push(j.start.us());
    end_us.push(j.end.us());
    num_gpus.push(j.spec.num_gpus);
    held_us.push(j.held_us, difference(j.end.us(), j.start.us()), [this](std::size_t i) { return end_us.at(i) - start_us.at(i); });
    device_us.push(j.device_us, product(j.spec.num_gpus, j.held_us), [this](std::size_t i) { return std::int64_t{num_gpus.at(i)} * held_at(i); });
    status.push(static_cast<std::uint8_t>(j.status));
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

  std::int64_t held_at(std::size_t i) const { return held_us.derived() ? end_us.at(i) - start_us.at(i) : held_us.values()[i]; }

  // CompletedJobSamples: what MetricsCollector::on_job_end computes, from these columns.
  void jct_s(std::vector<double>& out) const override {
    completed_values(out, [this](std::size_t i) { return Tick::from_us(end_us.at(i) - submit_us.at(i)).seconds(); });
  }
  void queue_delay_s(std::vector<double>& out) const override {
    completed_values(out, [this](std::size_t i) {
      return Tick::from_us(end_us.at(i) - submit_us.at(i)).seconds() - Tick::from_us(held_at(i)).seconds();
    });
  }

 private:
  static double seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }
  static std::optional<std::int64_t> difference(std::int64_t a, std::int64_t b) {
    std::int64_t d;
    if (__builtin_sub_overflow(a, b, &d)) return std::nullopt;
    return d;
  }
  static std::optional<std::int64_t> product(std::int64_t a, std::int64_t b) {
    std::int64_t p;
    if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
    return p;
  }
  // What a reader of jobs.csv gets back from the "%.9g" text.
  static double as_written(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::strtod(buf, nullptr);
  }
  template <typename Value>
  void completed_values(std::vector<double>& out, Value&& value) const {
    out.clear();
    std::size_t completed = 0;
    for (std::size_t i = 0; i < rows(); ++i) completed += completed_at(i);
    out.reserve(completed);
    for (std::size_t i = 0; i < rows(); ++i) {
      if (completed_at(i)) out.push_back(value(i));
    }
  }
  // As MetricsCollector::on_job_end counts them: every end but failed and killed.
  bool completed_at(std::size_t i) const {
    const auto s = static_cast<JobStatus>(status.at(i));
    return s != JobStatus::kFailed && s != JobStatus::kKilled;
  }
};

}  // namespace schedsim
