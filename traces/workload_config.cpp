#include "traces/workload_config.hpp"

#include <algorithm>

#include "traces/trace_reader.hpp"
#include "traces/trace_source.hpp"

namespace schedsim {

WorkloadConfig WorkloadConfig::parse(const ConfigNode& node) {
  node.expect_map({"trace", "synthetic", "oversized"});
  WorkloadConfig w;
  if (node.has("trace") == node.has("synthetic")) {
    node.fail("give exactly one of 'trace' (a file) or 'synthetic' (a generated workload)");
  }
  if (auto t = node.maybe_child("trace")) {
    if (t->is_scalar()) {
      w.trace = TraceConfig{t->as_string(), t->as_path(), "schedsim"};
    } else {
      t->expect_map({"path", "format"});
      const ConfigNode path = t->child("path");
      TraceConfig tc{path.as_string(), path.as_path(), "schedsim"};
      if (auto f = t->maybe_child("format")) {
        std::vector<std::string> names;
        for (const auto& info : trace_formats()) names.push_back(info.name);
        tc.format = f->as_string();
        if (std::find(names.begin(), names.end(), tc.format) == names.end()) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          f->fail("unknown trace format '" + tc.format + "'; known formats: " + list);
        }
      }
      w.trace = tc;
    }
  }
  if (auto s = node.maybe_child("synthetic")) w.synthetic = SyntheticConfig::parse(*s);
  if (auto o = node.maybe_child("oversized")) {
    w.oversized = o->as_choice({"error", "drop"}) == "drop" ? OversizedMode::kDrop : OversizedMode::kError;
  }
  return w;
}

YAML::Node WorkloadConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  if (trace) {
    YAML::Node t(YAML::NodeType::Map);
    t["path"] = trace->path;
    t["format"] = trace->format;
    n["trace"] = t;
  }
  if (synthetic) n["synthetic"] = synthetic->to_yaml();
  n["oversized"] = oversized == OversizedMode::kDrop ? "drop" : "error";
  return n;
}

std::unique_ptr<JobSource> WorkloadConfig::make_source(std::uint64_t seed, std::vector<std::string>& warnings) const {
  if (trace) return std::make_unique<TraceJobSource>(trace->resolved_path, trace->format, warnings);
  return std::make_unique<SyntheticJobSource>(*synthetic, seed);
}

}  // namespace schedsim
