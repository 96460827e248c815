// The format registry, format detection and the lenient-reading loop shared by every
// reader.
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "base/error.hpp"
#include "traces/line_reader.hpp"
#include "traces/readers.hpp"

namespace schedsim {
namespace {

using Factory = std::unique_ptr<TraceReader> (*)(const std::string&, const TraceOptions&);

struct FormatEntry {
  const char* name;
  const char* description;
  Factory make;
};

const std::vector<FormatEntry>& registry() {
  static const std::vector<FormatEntry> kFormats{
      {"schedsim", "schedsim's CSV: job_id,submit_time_s,num_gpus,duration_s[,estimate_s,user,group,model,gpu_type,gpu_milli,iterations,deadline_s,priority,status]",
       make_schedsim_reader},
      {"itp", "Microsoft ITP / ElasticFlow CSV: job_id,submission_time,duration,num_gpu[,num_iteration,model_name,deadline] (seconds)", make_itp_reader},
      {"tiresias", "Tiresias CSV: job_id,num_gpu,submit_time,iterations,model_name,duration,interval (seconds)", make_tiresias_reader},
      {"philly", "Microsoft Philly cluster_job_log: JSON list of jobs with attempts (US Pacific times)", make_philly_reader},
      {"helios", "SenseTime Helios cluster_log.csv (China local time, UTC+8)", make_helios_reader},
      {"acme", "Shanghai AI Lab Acme trace_seren.csv / trace_kalos.csv (times with UTC offsets)", make_acme_reader},
      {"pai-tasks", "Alibaba PAI 2020 pai_task_table (headerless; plan_gpu in percent of one GPU), optionally joined with pai_job_table (workload.trace.job_table)", make_pai_tasks_reader},
      {"openb-pods", "Alibaba 2023 openb pod list: name,...,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
       make_openb_pods_reader},
      {"swf", "Parallel Workloads Archive Standard Workload Format, plain or gzip (processors read as GPUs)", make_swf_reader},
      {"gavel", "Gavel .trace (TAB-separated, 10 or 7 fields) with its throughput matrix (workload.trace.throughputs)", make_gavel_reader},
      {"csv", "any CSV with a column mapping given in YAML (workload.trace.mapping)", make_generic_csv_reader},
  };
  return kFormats;
}

// The first line of the file (at most 64 KiB of it), decompressing gzip.
std::string first_line(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a folder, not a trace file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, "cannot open the trace file (does it exist?)");
  std::string buf(1 << 16, '\0');
  const int n = gzread(f, &buf[0], static_cast<unsigned>(buf.size()));
  int code = Z_OK;
  gzerror(f, &code);
  if (n < 0 || (n == 0 && code == Z_BUF_ERROR)) {
    const DamagedFileError e = damaged_gzip_error(path, 0, zlib_message(f, path));
    gzclose(f);
    throw e;
  }
  gzclose(f);
  buf.resize(static_cast<std::size_t>(n));
  if (buf.compare(0, 3, "\xEF\xBB\xBF") == 0) buf.erase(0, 3);
  const auto start = buf.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  buf.erase(0, start);
  const auto nl = buf.find('\n');
  if (nl != std::string::npos) buf.resize(nl);
  if (!buf.empty() && buf.back() == '\r') buf.pop_back();
  return buf;
}

std::vector<std::string> split(const std::string& s, char delimiter) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (true) {
    const auto e = s.find(delimiter, b);
    out.push_back(std::string(trim(std::string_view(s).substr(b, e == std::string::npos ? std::string::npos : e - b))));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

}  // namespace

void TraceReader::attach(std::string path, std::function<void(const std::string&)> poll_interrupt) {
  path_ = std::move(path);
  poll_interrupt_ = std::move(poll_interrupt);
}

// A row error in a compressed file may be garbage decoded from a damaged stream: the
// damaged file is then the error (check_gzip_intact throws it), else the row's.
void TraceReader::rethrow_explained() {
  if (path_.empty()) throw;
  // The line of the row, from "PATH:LINE: ..." (0 when the message names none).
  std::int64_t line = 0;
  try {
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.compare(0, path_.size() + 1, path_ + ":") == 0) {
      for (std::size_t i = path_.size() + 1; i < what.size() && what[i] >= '0' && what[i] <= '9' && line < (std::int64_t{1} << 50); ++i) {
        line = line * 10 + (what[i] - '0');
      }
    }
  }
  check_gzip_intact(path_, line);
  throw;
}

bool TraceReader::next(JobSpec& out) {
  while (true) {
    reset_job(out);
    poll();
    try {
      return read(out);
    } catch (const DamagedFileError&) {
      throw;
    } catch (const BadRowError& e) {
      if (mode_ == BadRowMode::kError) rethrow_explained();
      ++skipped_[e.reason()];
    } catch (const InputError&) {
      rethrow_explained();
    }
  }
}

std::vector<TraceFormatInfo> trace_formats() {
  std::vector<TraceFormatInfo> out;
  for (const auto& f : registry()) out.push_back({f.name, f.description});
  return out;
}

std::vector<std::string> trace_format_names() {
  std::vector<std::string> out;
  for (const auto& f : registry()) out.emplace_back(f.name);
  return out;
}

std::unique_ptr<TraceReader> open_trace_reader(const std::string& path, const std::string& format, const TraceOptions& options) {
  for (const auto& f : registry()) {
    if (format != f.name) continue;
    if (!options.job_table_path.empty() && format != "pai-tasks") {
      throw InputError(path, "the job table option (job_table / --job-table, here " + options.job_table_path +
                                   ") applies only to format pai-tasks; this trace has format " + format);
    }
    std::unique_ptr<TraceReader> reader;
    try {
      reader = f.make(path, options);
    } catch (const DamagedFileError&) {
      throw;
    } catch (const InputError&) {  // a header garbled by a damaged stream
      check_gzip_intact(path);
      throw;
    }
    reader->attach(path, options.poll_interrupt);
    return reader;
  }
  std::string known;
  for (const auto& f : registry()) known += std::string(known.empty() ? "" : ", ") + f.name;
  throw InputError(path, "unknown trace format '" + format + "'; known formats: " + known);
}

std::string detect_trace_format(const std::string& path) {
  const std::string line = first_line(path);
  if (line.empty()) throw InputError(path, "the trace is empty (no header line)");
  if (line[0] == '[' || line[0] == '{') return "philly";
  if (line[0] == ';') return "swf";
  if (line.find('\t') != std::string::npos) {
    const auto n = split(line, '\t').size();
    if (n == 10 || n == 7) return "gavel";
  }
  const auto h = split(line, ',');
  auto has = [&](const char* name) { return std::find(h.begin(), h.end(), name) != h.end(); };
  if (has("submit_time_s") && has("duration_s")) return "schedsim";
  if (has("submission_time") && has("num_gpu")) return "itp";
  if (has("submit_time") && has("num_gpu") && has("interval")) return "tiresias";
  if (has("pod_phase") && has("gpu_milli")) return "openb-pods";
  if (has("gpu_num") && has("state") && has("vc")) return "helios";
  if (has("gpu_num") && has("state")) return "acme";
  // Headerless: 18 whitespace-separated numbers is SWF; 10 comma-separated fields whose
  // third is a number is the PAI task table.
  {
    std::vector<std::string> ws;
    std::string_view rest(line);
    while (true) {
      const auto b = rest.find_first_not_of(" \t");
      if (b == std::string_view::npos) break;
      rest.remove_prefix(b);
      const auto e = rest.find_first_of(" \t");
      ws.emplace_back(rest.substr(0, e));
      if (e == std::string_view::npos) break;
      rest.remove_prefix(e);
    }
    double v = 0;
    if (ws.size() == 18 && std::all_of(ws.begin(), ws.end(), [&](const std::string& s) { return parse_double(s, v); })) return "swf";
  }
  double v = 0;
  if (h.size() == 10 && parse_double(h[2], v)) return "pai-tasks";
  std::string known;
  for (const auto& f : registry()) known += std::string(known.empty() ? "" : ", ") + f.name;
  throw InputError(path + ":1", "cannot tell the trace format from the first line; name it with --format (known: " + known + ")");
}

}  // namespace schedsim
