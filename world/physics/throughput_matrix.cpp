#include "world/physics/throughput_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/file_checks.hpp"
#include "base/json_errors.hpp"

namespace schedsim {
namespace {

const std::string kUnconsolidated = "_unconsolidated";

double rate(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number()) throw InputError(where, "expected a number of steps per second, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw InputError(where, "expected a finite number of steps per second >= 0, got " + v.dump());
  return d;
}

}  // namespace

bool parse_job_type_key(std::string_view s, std::string& name, int& gpus) {
  if (s.size() < 6 || s.front() != '(' || s.back() != ')') return false;
  const char quote = s[1];
  if (quote != '\'' && quote != '"') return false;
  const auto close = s.rfind(quote);
  if (close <= 1) return false;
  name.assign(s.substr(2, close - 2));
  std::string_view rest = s.substr(close + 1, s.size() - close - 2);  // ", 1"
  if (rest.empty() || rest.front() != ',') return false;
  rest.remove_prefix(1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty() || rest.size() > 7) return false;
  int v = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1) return false;
  gpus = v;
  return !name.empty();
}

ThroughputMatrix ThroughputMatrix::load_file(const std::string& path, const std::function<void(const std::string&)>& poll_interrupt) {
  // A folder opens as an empty stream, and EACCES is not "does it exist?".
  if (const std::string problem = file_open_problem(path, "throughput matrix"); !problem.empty()) throw InputError(path, problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the throughput matrix (does it exist?)");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path, poll_interrupt);
}

ThroughputMatrix ThroughputMatrix::parse(const std::string& text, const std::string& source,
                                         const std::function<void(const std::string&)>& poll_interrupt) {
  nlohmann::json doc;
  try {
    std::uint64_t values = 0;  // every 4096 values parsed: a signal is seen within milliseconds
    doc = poll_interrupt ? nlohmann::json::parse(text,
                                                 [&](int, nlohmann::json::parse_event_t, const nlohmann::json&) {
                                                   if ((++values & 4095) == 0) poll_interrupt(source);
                                                   return true;
                                                 })
                         : nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors and number overflow (1e99999)
    const JsonErrorDescription d = describe_json_error(e.what(), text);
    throw InputError(json_error_place(source, d), "not valid JSON: " + d.what);
  }
  if (!doc.is_object()) throw InputError(source, "expected a JSON object with one key per device type (k80, p100, v100...)");
  ThroughputMatrix m;
  for (const auto& [device_key, jobs] : doc.items()) {
    std::string device = device_key;
    Placement placement = Placement::kConsolidated;
    if (device.size() > kUnconsolidated.size() && device.compare(device.size() - kUnconsolidated.size(), kUnconsolidated.size(), kUnconsolidated) == 0) {
      device.resize(device.size() - kUnconsolidated.size());
      placement = Placement::kUnconsolidated;
    }
    if (!jobs.is_object()) throw InputError(source + ": " + device_key, "expected an object of job types");
    for (const auto& [job_key, row] : jobs.items()) {
      const std::string where = source + ": " + device_key + ": " + job_key;
      std::string job;
      int gpus = 0;
      if (!parse_job_type_key(job_key, job, gpus)) throw InputError(where, "expected a key like \"('ResNet-50 (batch size 64)', 1)\"");
      if (!row.is_object()) throw InputError(where, "expected an object with \"null\" (isolated) and co-located pairs");
      Entry e;
      for (const auto& [other_key, v] : row.items()) {
        if (other_key == "null") {
          e.isolated_steps_per_s = rate(v, where + ": null");
          continue;
        }
        std::string other;
        int other_gpus = 0;
        if (!parse_job_type_key(other_key, other, other_gpus)) throw InputError(where + ": " + other_key, "expected a key like \"('LM (batch size 5)', 1)\" or \"null\"");
        if (!v.is_array() || v.size() != 2) throw InputError(where + ": " + other_key, "expected a pair [this job's steps/s, the other job's steps/s]");
        e.colocated[{other, other_gpus}] = {rate(v[0], where + ": " + other_key), rate(v[1], where + ": " + other_key)};
      }
      if (e.isolated_steps_per_s < 0) throw InputError(where, "missing the isolated throughput (key \"null\")");
      m.entries_[Key{device, placement, job, gpus}] = std::move(e);
    }
  }
  m.intern();
  return m;
}

void ThroughputMatrix::intern() {
  job_names_ = job_types();
  device_names_ = device_types();
  isolated_by_id_.assign(device_names_.size() * 2 * job_names_.size(), {});
  for (const auto& [k, e] : entries_) {  // in key order: GPUs ascend within a (device, placement, job)
    const auto p = std::get<1>(k) == Placement::kConsolidated ? 0 : 1;
    const auto slot = (static_cast<std::size_t>(device_type_id(std::get<0>(k))) * 2 + p) * job_names_.size() + static_cast<std::size_t>(job_type_id(std::get<2>(k)));
    isolated_by_id_[slot].emplace_back(std::get<3>(k), e.isolated_steps_per_s);
  }
}

namespace {
int index_in(const std::vector<std::string>& sorted, std::string_view name) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), name, [](const std::string& a, std::string_view b) { return a < b; });
  return it != sorted.end() && *it == name ? static_cast<int>(it - sorted.begin()) : -1;
}
}  // namespace

int ThroughputMatrix::job_type_id(std::string_view job_type) const { return index_in(job_names_, job_type); }
int ThroughputMatrix::device_type_id(std::string_view device_type) const { return index_in(device_names_, device_type); }

std::optional<double> ThroughputMatrix::isolated_steps_per_s(int job, int device, int gpus, Placement p) const {
  if (job < 0 || device < 0 || static_cast<std::size_t>(job) >= job_names_.size() || static_cast<std::size_t>(device) >= device_names_.size()) return std::nullopt;
  const auto slot = (static_cast<std::size_t>(device) * 2 + (p == Placement::kConsolidated ? 0 : 1)) * job_names_.size() + static_cast<std::size_t>(job);
  for (const auto& [g, v] : isolated_by_id_[slot]) {
    if (g == gpus) return v;
  }
  return std::nullopt;
}

const ThroughputMatrix::Entry* ThroughputMatrix::find(std::string_view device, Placement p, std::string_view job, int gpus) const {
  // Looked up by views (the map's comparator is transparent): no string is built per query.
  const auto it = entries_.find(std::make_tuple(device, p, job, gpus));
  return it == entries_.end() ? nullptr : &it->second;
}

std::optional<double> ThroughputMatrix::isolated_steps_per_s(std::string_view job, std::string_view device, int gpus, Placement p) const {
  const Entry* e = find(device, p, job, gpus);
  if (!e) return std::nullopt;
  return e->isolated_steps_per_s;
}

std::optional<std::pair<double, double>> ThroughputMatrix::colocated_steps_per_s(std::string_view device, std::string_view job_a, int gpus_a,
                                                                                 std::string_view job_b, int gpus_b) const {
  const Entry* e = find(device, Placement::kConsolidated, job_a, gpus_a);
  if (!e) return std::nullopt;
  const auto it = e->colocated.find({std::string(job_b), gpus_b});
  if (it == e->colocated.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ThroughputMatrix::device_types() const {
  std::set<std::string> s;
  for (const auto& [k, e] : entries_) s.insert(std::get<0>(k));
  return {s.begin(), s.end()};
}

std::vector<std::string> ThroughputMatrix::job_types() const {
  std::set<std::string> s;
  for (const auto& [k, e] : entries_) s.insert(std::get<2>(k));
  return {s.begin(), s.end()};
}

std::vector<int> ThroughputMatrix::gpu_counts(std::string_view job, std::string_view device) const {
  std::vector<int> out;
  for (const auto& [k, e] : entries_) {
    if (std::get<0>(k) == device && std::get<1>(k) == Placement::kConsolidated && std::get<2>(k) == job) out.push_back(std::get<3>(k));
  }
  return out;
}

}  // namespace schedsim
