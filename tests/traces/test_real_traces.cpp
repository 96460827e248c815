// The readers on the real public files in ../shared/data, when present.
#include <catch2/catch.hpp>

#include <filesystem>

#include "app/trace_inspect.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/cluster_inventory.hpp"
#include "traces/line_reader.hpp"
#include "traces/trace_source.hpp"

using namespace schedsim;
using schedsim::test::read_trace;

#define REQUIRE_SHARED_DATA(data)                                                                   \
  const std::string data = schedsim::test::shared_data_dir();                                       \
  if (data.empty()) {                                                                               \
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)"); \
    return;                                                                                         \
  }

TEST_CASE("real SWF logs read with their skip counts", "[traces][swf][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  const auto nasa = read_trace(data + "/swf/NASA-iPSC-1993-3.1-cln.swf", "swf");
  CHECK(nasa.jobs.size() == 18066);
  CHECK(nasa.skipped == RowSkips{{"zero_duration", 173}});
  CHECK(detect_trace_format(data + "/swf/NASA-iPSC-1993-3.1-cln.swf") == "swf");
  const auto excerpt = read_trace(data + "/swf/accasim_excerpt.swf", "swf");
  REQUIRE(excerpt.jobs.size() == 25);
  CHECK(excerpt.jobs[0].id == "184");
  CHECK(excerpt.jobs[0].num_gpus == 16);
  CHECK(excerpt.jobs[0].duration_s == 61);
  CHECK(excerpt.jobs[0].estimate_s == 43200);
  CHECK(detect_trace_format(data + "/swf/accasim_excerpt.swf") == "swf");
}

TEST_CASE("the real openb pod list reads with fractional GPUs", "[traces][openb][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  const auto r = read_trace(data + "/alibaba/openb_pod_list_default.csv", "openb-pods");
  CHECK(r.jobs.size() == 6203);
  CHECK(r.skipped == RowSkips{{"cpu_only", 1088}, {"never_scheduled", 861}});
  std::size_t failed = 0, fractional = 0;
  for (const auto& j : r.jobs) {
    failed += j.recorded_status == RecordedStatus::kFailed;
    fractional += j.gpu_milli < 1000;
  }
  CHECK(failed == 1869);
  CHECK(fractional == 2573);
  // The multi-GPU variant has no time columns, so it cannot be a job trace.
  CHECK_THROWS_WITH(read_trace(data + "/alibaba/openb_pod_list_multigpu50.csv", "openb-pods"),
                    Catch::Contains("missing column 'pod_phase' for the openb-pods format"));
}

TEST_CASE("the real machine inventories become cluster sections", "[traces][inventory][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  const Inventory pai = read_inventory(data + "/alibaba/pai_machine_spec.csv", "pai-machines");
  CHECK(pai.machines_read == 1814);
  CHECK(pai.skipped == RowSkips{{"cpu_only", 83}});
  REQUIRE(pai.groups.size() == 5);
  CHECK(pai.groups[1].type == "P100");
  CHECK(pai.groups[1].devices_per_node == 2);
  CHECK(pai.groups[1].count == 798);
  const Inventory openb = read_inventory(data + "/alibaba/openb_node_list_gpu_node.csv", "openb-nodes");
  CHECK(openb.machines_read == 1213);
  CHECK(openb.groups.size() == 12);
  CHECK(openb.groups[1].type == "G2");
  CHECK(openb.groups[1].count == 549);
}

TEST_CASE("the real Gavel traces read with the real throughput matrix", "[traces][gavel][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  TraceOptions o;
  o.throughputs_path = data + "/gavel/simulation_throughputs.json";
  const std::vector<std::pair<std::string, std::size_t>> ten{{"artifact_evaluation", 15}, {"debug", 14},     {"debug_v2", 14},
                                                             {"highmem_test", 8},         {"max_min_fairness", 96}, {"medium_test", 20},
                                                             {"minimize_makespan", 100},  {"small_test", 20}};
  for (const auto& [name, jobs] : ten) {
    INFO(name);
    const auto r = read_trace(data + "/gavel/traces/" + name + ".trace", "gavel", o);
    CHECK(r.jobs.size() == jobs);
    CHECK(r.skipped.empty());
  }
  const auto small = read_trace(data + "/gavel/traces/small_test.trace", "gavel", o);
  CHECK(small.jobs[0].model == "Transformer (batch size 128)");
  CHECK(small.jobs[0].iterations == 346);
  CHECK(small.jobs[0].num_gpus == 2);
  // The physical-cluster traces ask for CycleGAN on 8 GPUs, which the matrix lacks.
  o.on_bad_row = BadRowMode::kSkip;
  for (const auto& [name, jobs] : std::vector<std::pair<std::string, std::size_t>>{{"23dbec", 8}, {"51b7ef", 17}, {"795a4c", 3}}) {
    INFO(name);
    const auto r = read_trace(data + "/gavel/traces/" + name + ".trace", "gavel", o);
    CHECK(r.jobs.size() == jobs);
    CHECK(r.jobs.size() + (r.skipped.empty() ? 0 : r.skipped.at("unknown_job_type")) == (name == "23dbec" ? 9u : name == "51b7ef" ? 18u : 3u));
  }
}

TEST_CASE("the real Tiresias and ElasticFlow traces read with their extra fields", "[traces][tiresias][itp][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  const auto t = read_trace(data + "/tiresias/60_job.csv", "tiresias");
  REQUIRE(t.jobs.size() == 60);
  CHECK(t.jobs[0].model == "vgg19");
  CHECK(t.jobs[0].iterations == 606);
  CHECK(detect_trace_format(data + "/tiresias/60_job.csv") == "tiresias");
  const auto ef = read_trace(data + "/elasticflow/cluster10.csv", "itp");
  REQUIRE(ef.jobs.size() == 260);
  CHECK(ef.jobs[0].deadline_s == 2267101);
  CHECK(ef.jobs[0].model == "bert");
  const auto ef195 = read_trace(data + "/elasticflow/195job.csv", "itp");
  CHECK(ef195.jobs.size() == 195);
  const TraceInspection i = inspect_trace(data + "/alibaba/openb_pod_list_default.csv", "auto");
  CHECK(i.format == "openb-pods");
  CHECK(i.jobs == 6203);
  CHECK(i.statuses.at("failed") == 1869);
  CHECK(i.rows_skipped.at("cpu_only") == 1088);
}

namespace {
// Data rows of a text file: non-blank lines, minus the header when there is one.
std::uint64_t data_rows(const std::string& path, bool header) {
  LineReader lines(path);
  std::string line;
  std::uint64_t n = 0;
  while (lines.next(line)) n += line.find_first_not_of(" \t\r") != std::string::npos;
  return header && n > 0 ? n - 1 : n;
}
std::uint64_t total(const RowSkips& s) {
  std::uint64_t n = 0;
  for (const auto& [reason, count] : s) n += count;
  return n;
}
}  // namespace

TEST_CASE("the large public job logs account for every row when they are present", "[traces][shared-data]") {
  REQUIRE_SHARED_DATA(data);
  // These files are not in ../shared/data by default (see its README); a user who adds
  // them gets their rows checked: every row is a job or a skipped row with a reason.
  struct Log {
    std::string file, format;
    bool header;
    std::uint64_t published_rows;  // 0 = not published
  };
  const std::vector<Log> logs{
      {"philly/cluster_job_log", "philly", false, 117325},  // philly_traces_README.md: 117,325 jobs
      {"helios/Venus/cluster_log.csv", "helios", true, 246708},  // helios_cluster_summary.csv job_num
      {"helios/Earth/cluster_log.csv", "helios", true, 872886},
      {"helios/Saturn/cluster_log.csv", "helios", true, 1753078},
      {"helios/Uranus/cluster_log.csv", "helios", true, 490309},
      {"acme/trace_seren.csv", "acme", true, 1031550},  // acme/cluster_summary.csv job_num
      {"acme/trace_kalos.csv", "acme", true, 62413},
      {"alibaba/pai_task_table.csv", "pai-tasks", false, 0},
  };
  int present = 0;
  for (const auto& log : logs) {
    const std::string path = data + "/" + log.file;
    if (!std::filesystem::exists(path)) continue;
    ++present;
    INFO(log.file);
    TraceOptions lenient;
    lenient.on_bad_row = BadRowMode::kSkip;
    const auto r = read_trace(path, log.format, lenient);
    CHECK(r.jobs.size() > 0);
    if (log.published_rows) CHECK(r.jobs.size() + total(r.skipped) == log.published_rows);
    else if (log.format != "philly") CHECK(r.jobs.size() + total(r.skipped) == data_rows(path, log.header));
  }
  if (present == 0) WARN("skipped: the Philly, Helios, Acme and PAI job logs are not in ../shared/data (only their summaries are)");
}
