// Measured training throughput (steps/s) by job type, device type and GPU count, as in
// Gavel's simulation_throughputs.json: the isolated throughput with workers packed on as
// few servers as possible (consolidated) or spread across servers (unconsolidated), and
// the throughputs of two jobs sharing the same devices (co-location). Immutable after
// loading; shared by the Gavel trace reader and the physics model.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace schedsim {

class ThroughputMatrix {
 public:
  enum class Placement { kConsolidated, kUnconsolidated };

  // Reads Gavel's JSON layout: {device: {"('<job type>', <gpus>)": {"null": steps/s,
  // "('<other type>', <gpus>)": [mine, other], ...}}}, where a device key ending in
  // "_unconsolidated" holds the spread-out placement. Throws InputError naming the file
  // and the key for malformed JSON, keys that are not such tuples, or values that are
  // not finite numbers >= 0.
  // `poll_interrupt` (may be empty) is called with the source every few thousand JSON
  // values and may throw to stop a long read (as TraceOptions::poll_interrupt).
  static ThroughputMatrix load_file(const std::string& path, const std::function<void(const std::string&)>& poll_interrupt = {});
  static ThroughputMatrix parse(const std::string& json_text, const std::string& source,
                                const std::function<void(const std::string&)>& poll_interrupt = {});

  // steps/s of `job_type` running alone on `num_gpus` devices of `device_type`
  // (lower-case, e.g. "v100"); nullopt when the matrix has no such entry.
  std::optional<double> isolated_steps_per_s(std::string_view job_type, std::string_view device_type, int num_gpus,
                                             Placement placement = Placement::kConsolidated) const;
  // steps/s of job a and of job b when they share devices of `device_type` (consolidated
  // placement); {0, 0} means the pair cannot be co-located; nullopt when not measured.
  std::optional<std::pair<double, double>> colocated_steps_per_s(std::string_view device_type, std::string_view job_a, int gpus_a,
                                                                 std::string_view job_b, int gpus_b) const;

  // Sorted, without the "_unconsolidated" suffix.
  std::vector<std::string> device_types() const;
  std::vector<std::string> job_types() const;
  // GPU counts measured for `job_type` on `device_type` (consolidated), ascending.
  std::vector<int> gpu_counts(std::string_view job_type, std::string_view device_type) const;
  std::size_t num_entries() const { return entries_.size(); }

  // Interned names, for callers that ask about the same names many times (a rate query
  // per placement): the index in job_types() / device_types(), -1 when absent.
  int job_type_id(std::string_view job_type) const;
  int device_type_id(std::string_view device_type) const;
  // isolated_steps_per_s by those ids: an array lookup, no string compares. Ids out of
  // range give nullopt.
  std::optional<double> isolated_steps_per_s(int job_type_id, int device_type_id, int num_gpus,
                                             Placement placement = Placement::kConsolidated) const;

 private:
  // (device type, placement, job type, GPUs)
  using Key = std::tuple<std::string, Placement, std::string, int>;
  struct Entry {
    double isolated_steps_per_s = -1;  // -1 = absent
    std::map<std::pair<std::string, int>, std::pair<double, double>> colocated;
  };
  const Entry* find(std::string_view device, Placement p, std::string_view job, int gpus) const;
  std::map<Key, Entry, std::less<>> entries_;
  // The interned view of entries_' isolated throughputs (built by parse): sorted names,
  // and by (device id, placement, job id) the measured (GPUs, steps/s), ascending GPUs.
  void intern();
  std::vector<std::string> job_names_, device_names_;
  std::vector<std::vector<std::pair<int, double>>> isolated_by_id_;
};

// Parses a Python tuple repr "('ResNet-50 (batch size 64)', 1)" (either quote kind) into
// its name and integer; false when the text is not of that shape.
bool parse_job_type_key(std::string_view text, std::string& name, int& gpus);

}  // namespace schedsim
