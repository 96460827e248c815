// Header-based CSV formats: schedsim's own, Microsoft ITP / ElasticFlow, Tiresias, and
// the generic `csv` format driven by a column mapping. Columns are found by header
// name, so their order does not matter.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "base/error.hpp"
#include "traces/readers.hpp"

namespace schedsim {

void set_submit(const CsvTable& t, int col, double seconds, JobSpec& out) {
  if (!(seconds >= 0)) t.fail(col, "must be >= 0 seconds, got " + t.quoted(col), "out_of_range");
  if (seconds > 1e12) t.fail(col, "the value " + t.quoted(col) + " is out of range (over 10^12 seconds)", "out_of_range");
  out.submit = Tick::from_seconds(seconds);
}

void set_duration(const CsvTable& t, int col, double seconds, JobSpec& out) {
  if (!(seconds > 0)) t.fail(col, "must be > 0 seconds, got " + t.quoted(col), "out_of_range");
  if (seconds > 1e12) t.fail(col, "the value " + t.quoted(col) + " is out of range (over 10^12 seconds)", "out_of_range");
  out.duration_s = seconds;
}

void set_gpus(const CsvTable& t, int col, JobSpec& out) {
  std::int64_t gpus = 0;
  if (!parse_int64(t.raw(col), gpus)) t.fail(col, "expected an integer GPU count, got " + t.quoted(col), "not_a_number");
  if (gpus < 1 || gpus > 1'000'000) t.fail(col, "must be between 1 and 1000000 GPUs, got " + t.quoted(col), "out_of_range");
  out.num_gpus = static_cast<int>(gpus);
}

namespace {

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Optional attribute columns shared by schedsim and the generic format, by column index.
struct AttributeColumns {
  int estimate = -1, user = -1, group = -1, model = -1, gpu_type = -1, gpu_milli = -1, iterations = -1, deadline = -1,
      priority = -1, status = -1, region = -1, allowed_regions = -1;
};

void read_attributes(const CsvTable& t, const AttributeColumns& c, double time_unit_s, JobSpec& out) {
  if (!t.empty(c.estimate)) {
    out.estimate_s = t.number(c.estimate) * time_unit_s;
    if (!(out.estimate_s > 0)) t.fail(c.estimate, "must be > 0 seconds or empty, got " + t.quoted(c.estimate), "out_of_range");
  }
  if (c.user >= 0) out.user.assign(t.text(c.user));
  if (c.group >= 0) out.group.assign(t.text(c.group));
  if (c.model >= 0) out.model.assign(t.text(c.model));
  if (c.gpu_type >= 0) out.gpu_type.assign(t.text(c.gpu_type));
  if (!t.empty(c.gpu_milli)) out.gpu_milli = static_cast<int>(t.integer(c.gpu_milli, 1, 1000));
  if (!t.empty(c.iterations)) {
    out.iterations = t.number(c.iterations);
    if (!(out.iterations > 0)) t.fail(c.iterations, "must be > 0 or empty, got " + t.quoted(c.iterations), "out_of_range");
  }
  if (!t.empty(c.deadline)) {
    out.deadline_s = t.number(c.deadline) * time_unit_s;
    if (!(out.deadline_s >= 0)) t.fail(c.deadline, "must be >= 0 seconds or empty, got " + t.quoted(c.deadline), "out_of_range");
  }
  if (!t.empty(c.priority)) out.priority = t.number(c.priority);
  if (c.region >= 0) out.home_region.assign(t.text(c.region));
  if (c.allowed_regions >= 0) {  // space-separated region names
    out.allowed_regions.clear();
    const std::string list(t.text(c.allowed_regions));
    for (std::size_t i = 0; i < list.size();) {
      const std::size_t j = std::min(list.find(' ', i), list.size());
      if (j > i) out.allowed_regions.push_back(list.substr(i, j - i));
      i = j + 1;
    }
  }
  if (c.status >= 0 && !parse_status(t.raw(c.status), out.recorded_status)) {
    t.fail(c.status, "unknown status " + t.quoted(c.status) + "; allowed: completed, failed, killed, unknown or empty", "bad_value");
  }
}

const std::vector<std::string> kSchedsimColumns{"job_id", "submit_time_s", "num_gpus",   "duration_s", "estimate_s",
                                                "user",   "group",         "model",      "gpu_type",   "gpu_milli",
                                                "iterations", "deadline_s", "priority", "status",     "name",
                                                "min_gpus", "max_gpus", "region", "allowed_regions"};

// A header-based format: the names of its required and optional columns. Optional names
// are nullptr where the format has no such column.
struct CsvLayout {
  const char* format;
  const char* id;
  const char* submit;
  const char* duration;
  const char* gpus;
  const char* estimate = nullptr;
  const char* user = nullptr;
  const char* group = nullptr;
  const char* model = nullptr;
  const char* gpu_type = nullptr;
  const char* gpu_milli = nullptr;
  const char* iterations = nullptr;
  const char* deadline = nullptr;
  const char* priority = nullptr;
  const char* status = nullptr;
  const char* min_gpus = nullptr;  // elastic limits: both columns or neither
  const char* max_gpus = nullptr;
  const char* region = nullptr;           // home datacenter (several datacenters)
  const char* allowed_regions = nullptr;  // space-separated datacenter names
  const std::vector<std::string>* known_columns = nullptr;  // set: other columns are an error
};

CsvLayout schedsim_layout() {
  CsvLayout l{"schedsim", "job_id", "submit_time_s", "duration_s", "num_gpus"};
  l.estimate = "estimate_s";
  l.user = "user";
  l.group = "group";
  l.model = "model";
  l.gpu_type = "gpu_type";
  l.gpu_milli = "gpu_milli";
  l.iterations = "iterations";
  l.deadline = "deadline_s";
  l.priority = "priority";
  l.status = "status";
  l.min_gpus = "min_gpus";
  l.max_gpus = "max_gpus";
  l.region = "region";
  l.allowed_regions = "allowed_regions";
  l.known_columns = &kSchedsimColumns;
  return l;
}

// ITP (microsoft/elasticflow-traces): relative seconds. ElasticFlow's files add
// num_iteration, model_name and deadline (absolute seconds), which fill the matching
// JobSpec fields; batch_size and any other column are ignored.
CsvLayout itp_layout() {
  CsvLayout l{"itp", "job_id", "submission_time", "duration", "num_gpu"};
  l.iterations = "num_iteration";
  l.model = "model_name";
  l.deadline = "deadline";
  return l;
}

// Tiresias (SymbioticLab/Tiresias): job_id,num_gpu,submit_time,iterations,model_name,
// duration,interval. `interval` (the gap to the previous submission) is redundant with
// submit_time and ignored.
CsvLayout tiresias_layout() {
  CsvLayout l{"tiresias", "job_id", "submit_time", "duration", "num_gpu"};
  l.iterations = "iterations";
  l.model = "model_name";
  return l;
}

class LayoutCsvReader : public TraceReader {
 public:
  LayoutCsvReader(const std::string& path, const CsvLayout& layout, BadRowMode mode) : TraceReader(mode), t_(path, layout.format) {
    if (layout.known_columns) {
      for (const auto& h : t_.header()) {
        if (std::find(layout.known_columns->begin(), layout.known_columns->end(), h) == layout.known_columns->end()) {
          throw InputError(path + ":1", std::string("unknown column '") + h + "' in a " + layout.format +
                                            " trace; known columns: " + join_names(*layout.known_columns));
        }
      }
    }
    id_ = t_.column(layout.id, true);
    submit_ = t_.column(layout.submit, true);
    gpus_ = t_.column(layout.gpus, true);
    duration_ = t_.column(layout.duration, true);
    auto optional = [&](const char* name) { return name ? t_.column(name, false) : -1; };
    a_.estimate = optional(layout.estimate);
    a_.user = optional(layout.user);
    a_.group = optional(layout.group);
    a_.model = optional(layout.model);
    a_.gpu_type = optional(layout.gpu_type);
    a_.gpu_milli = optional(layout.gpu_milli);
    a_.iterations = optional(layout.iterations);
    a_.deadline = optional(layout.deadline);
    a_.priority = optional(layout.priority);
    a_.status = optional(layout.status);
    a_.region = optional(layout.region);
    a_.allowed_regions = optional(layout.allowed_regions);
    min_gpus_ = optional(layout.min_gpus);
    max_gpus_ = optional(layout.max_gpus);
    if ((min_gpus_ < 0) != (max_gpus_ < 0)) {
      throw InputError(path + ":1", std::string("a ") + layout.format + " trace with elastic jobs needs both columns min_gpus and max_gpus");
    }
  }

 protected:
  bool read(JobSpec& out) override {
    if (!t_.next_row()) return false;
    out.id.assign(t_.text(id_));
    if (out.id.empty()) t_.fail(id_, "the job id is empty", "missing_value");
    set_submit(t_, submit_, t_.number(submit_), out);
    set_duration(t_, duration_, t_.number(duration_), out);
    set_gpus(t_, gpus_, out);
    read_attributes(t_, a_, 1.0, out);
    read_elastic(out);
    out.source_line = t_.line();
    return true;
  }

 private:
  // Both empty: a rigid job. Otherwise 1 <= min_gpus <= num_gpus <= max_gpus.
  void read_elastic(JobSpec& out) {
    out.min_gpus = 0;
    out.max_gpus = 0;
    if (min_gpus_ < 0) return;
    const bool no_min = t_.empty(min_gpus_), no_max = t_.empty(max_gpus_);
    if (no_min && no_max) return;
    if (no_min) t_.fail(min_gpus_, "is empty but max_gpus is set; give both (elastic) or neither (rigid)", "missing_value");
    if (no_max) t_.fail(max_gpus_, "is empty but min_gpus is set; give both (elastic) or neither (rigid)", "missing_value");
    out.min_gpus = static_cast<int>(t_.integer(min_gpus_, 1, out.num_gpus));
    out.max_gpus = static_cast<int>(t_.integer(max_gpus_, out.num_gpus, 1'000'000));
  }

  CsvTable t_;
  int id_, submit_, gpus_, duration_;
  int min_gpus_ = -1, max_gpus_ = -1;
  AttributeColumns a_;
};

const std::vector<std::string> kMappingFields{"job_id", "submit_time", "duration", "start_time", "end_time", "num_gpus", "estimate",
                                              "user",   "group",       "model",    "gpu_type",   "gpu_milli", "iterations", "deadline",
                                              "priority", "status"};

class GenericCsvReader : public TraceReader {
 public:
  GenericCsvReader(const std::string& path, const CsvMapping& m, BadRowMode mode)
      : TraceReader(mode), t_(path, "csv", m.delimiter), unit_(m.time_unit_s) {
    auto col = [&](const char* field, bool required) {
      const auto it = m.columns.find(field);
      if (it == m.columns.end()) return -1;
      return t_.column(it->second, required);
    };
    id_ = col("job_id", true);
    submit_ = col("submit_time", true);
    duration_ = col("duration", true);
    start_ = col("start_time", true);
    end_ = col("end_time", true);
    gpus_ = col("num_gpus", true);
    a_.estimate = col("estimate", true);
    a_.user = col("user", true);
    a_.group = col("group", true);
    a_.model = col("model", true);
    a_.gpu_type = col("gpu_type", true);
    a_.gpu_milli = col("gpu_milli", true);
    a_.iterations = col("iterations", true);
    a_.deadline = col("deadline", true);
    a_.priority = col("priority", true);
    a_.status = col("status", true);
  }

 protected:
  bool read(JobSpec& out) override {
    if (!t_.next_row()) return false;
    out.id.assign(t_.text(id_));
    if (out.id.empty()) t_.fail(id_, "the job id is empty", "missing_value");
    set_submit(t_, submit_, t_.number(submit_) * unit_, out);
    if (duration_ >= 0) {
      set_duration(t_, duration_, t_.number(duration_) * unit_, out);
    } else {
      set_duration(t_, end_, (t_.number(end_) - t_.number(start_)) * unit_, out);
    }
    if (gpus_ >= 0) set_gpus(t_, gpus_, out);
    read_attributes(t_, a_, unit_, out);
    out.source_line = t_.line();
    return true;
  }

 private:
  CsvTable t_;
  double unit_;
  int id_, submit_, duration_, start_, end_, gpus_;
  AttributeColumns a_;
};

}  // namespace

CsvMapping CsvMapping::parse(const ConfigNode& node) {
  node.expect_map({"columns", "time_unit", "delimiter"});
  CsvMapping m;
  const ConfigNode cols = node.child("columns");
  cols.expect_keys(kMappingFields);
  for (const std::string& key : cols.keys()) m.columns[key] = cols.child(key).as_string();
  for (const char* required : {"job_id", "submit_time", "num_gpus"}) {
    if (!m.columns.count(required)) cols.fail(std::string("missing required key '") + required + "' (the column that holds it)");
  }
  const bool has_duration = m.columns.count("duration") > 0;
  const bool has_span = m.columns.count("start_time") > 0 && m.columns.count("end_time") > 0;
  if (has_duration == has_span) cols.fail("give either 'duration' or both 'start_time' and 'end_time' (duration = end - start)");
  if (!has_duration && (m.columns.count("start_time") + m.columns.count("end_time")) != 2) cols.fail("give both 'start_time' and 'end_time'");
  if (auto u = node.maybe_child("time_unit")) {
    const std::string unit = u->as_choice({"s", "ms", "us", "min", "h"});
    m.time_unit_s = unit == "s" ? 1.0 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : unit == "min" ? 60.0 : 3600.0;
  }
  if (auto d = node.maybe_child("delimiter")) {
    const std::string s = d->as_string();
    if (s.size() != 1 || s == "\"" || s == "\n" || s == "\r") d->fail("must be one character other than a quote or line break, e.g. ',' or ';' or '\\t'");
    m.delimiter = s[0];
  }
  return m;
}

CsvMapping CsvMapping::load_file(const std::string& path) { return parse(ConfigNode::load_file(path)); }

YAML::Node CsvMapping::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  YAML::Node c(YAML::NodeType::Map);
  for (const auto& [field, column] : columns) c[field] = column;
  n["columns"] = c;
  const char* unit = time_unit_s == 1.0 ? "s" : time_unit_s == 1e-3 ? "ms" : time_unit_s == 1e-6 ? "us" : time_unit_s == 60.0 ? "min" : "h";
  n["time_unit"] = unit;
  n["delimiter"] = std::string(1, delimiter);
  return n;
}

std::unique_ptr<TraceReader> make_schedsim_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<LayoutCsvReader>(path, schedsim_layout(), o.on_bad_row);
}
std::unique_ptr<TraceReader> make_itp_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<LayoutCsvReader>(path, itp_layout(), o.on_bad_row);
}
std::unique_ptr<TraceReader> make_tiresias_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<LayoutCsvReader>(path, tiresias_layout(), o.on_bad_row);
}
std::unique_ptr<TraceReader> make_generic_csv_reader(const std::string& path, const TraceOptions& o) {
  if (!o.mapping) throw InputError(path, "the csv format needs a column mapping (workload.trace.mapping, or --mapping FILE on the command line)");
  return std::make_unique<GenericCsvReader>(path, *o.mapping, o.on_bad_row);
}

namespace {
void write_number(std::ostream& out, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out << buf;
}
}  // namespace

void write_schedsim_trace_header(std::ostream& out, const SchedsimColumns& c) {
  out << "job_id,submit_time_s,num_gpus,duration_s" << (c.estimate ? ",estimate_s" : "");
  if (c.attributes) out << ",user,group,model,gpu_type,gpu_milli,iterations,deadline_s,priority,status";
  if (c.elastic) out << ",min_gpus,max_gpus";
  out << '\n';
}

void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, const SchedsimColumns& c) {
  write_csv_field(out, job.id);
  out << ',' << format_seconds(job.submit) << ',' << job.num_gpus << ',';
  write_number(out, job.duration_s);  // %.17g round-trips every double exactly
  if (c.estimate) {
    out << ',';
    if (job.has_estimate()) write_number(out, job.estimate_s);
  }
  if (c.attributes) {
    out << ',';
    write_csv_field(out, job.user);
    out << ',';
    write_csv_field(out, job.group);
    out << ',';
    write_csv_field(out, job.model);
    out << ',';
    write_csv_field(out, job.gpu_type);
    out << ',' << job.gpu_milli << ',';
    if (!std::isnan(job.iterations)) write_number(out, job.iterations);
    out << ',';
    if (!std::isnan(job.deadline_s)) write_number(out, job.deadline_s);
    out << ',';
    write_number(out, job.priority);
    out << ',' << to_string(job.recorded_status);
  }
  if (c.elastic) {
    out << ',';
    if (job.is_elastic()) out << job.min_gpus << ',' << job.max_gpus;
    else out << ',';
  }
  out << '\n';
}

void write_schedsim_trace_header(std::ostream& out, bool with_estimates) { write_schedsim_trace_header(out, SchedsimColumns{with_estimates, false}); }
void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, bool with_estimates) {
  write_schedsim_trace_row(out, job, SchedsimColumns{with_estimates, false});
}

}  // namespace schedsim
