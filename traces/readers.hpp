// Factories of the individual trace formats, for trace_formats.cpp. Each reader is
// described, field by field, in docs/traces.md.
#pragma once

#include <memory>
#include <string>

#include "traces/csv_table.hpp"
#include "traces/trace_reader.hpp"

namespace schedsim {

std::unique_ptr<TraceReader> make_schedsim_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_itp_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_tiresias_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_generic_csv_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_helios_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_acme_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_openb_pods_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_pai_tasks_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_swf_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_philly_reader(const std::string& path, const TraceOptions& o);
std::unique_ptr<TraceReader> make_gavel_reader(const std::string& path, const TraceOptions& o);

// Checks shared by all formats; each throws BadRowError naming table.where() and `col`.
void set_submit(const CsvTable& t, int col, double seconds, JobSpec& out);      // >= 0
void set_duration(const CsvTable& t, int col, double seconds, JobSpec& out);    // > 0
void set_gpus(const CsvTable& t, int col, JobSpec& out);                         // integer 1..1e6

}  // namespace schedsim
