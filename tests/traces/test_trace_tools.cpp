// trace convert (round trip), trace sample, cluster-from.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "scenario/scenario.hpp"
#include "app/trace_inspect.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/cluster_inventory.hpp"
#include "traces/trace_source.hpp"

using namespace schedsim;
using schedsim::test::read_trace;
using schedsim::test::TempDir;

namespace {

std::vector<JobSpec> source_jobs(const std::string& path, const std::string& format, const TraceOptions& o = {}) {
  std::vector<std::string> warnings;
  TraceJobSource s(path, format, o, warnings);
  std::vector<JobSpec> out;
  JobSpec j;
  while (s.next(j)) out.push_back(j);
  return out;
}

bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void check_same_jobs(const std::vector<JobSpec>& a, const std::vector<JobSpec>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("job " << i << " " << a[i].id);
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].submit == b[i].submit);
    CHECK(a[i].num_gpus == b[i].num_gpus);
    CHECK(a[i].duration_s == b[i].duration_s);
    CHECK(same_number(a[i].estimate_s, b[i].estimate_s));
    CHECK(a[i].user == b[i].user);
    CHECK(a[i].group == b[i].group);
    CHECK(a[i].model == b[i].model);
    CHECK(a[i].gpu_type == b[i].gpu_type);
    CHECK(a[i].gpu_milli == b[i].gpu_milli);
    CHECK(same_number(a[i].iterations, b[i].iterations));
    CHECK(same_number(a[i].deadline_s, b[i].deadline_s));
    CHECK(a[i].priority == b[i].priority);
    CHECK(a[i].recorded_status == b[i].recorded_status);
    CHECK(a[i].min_gpus == b[i].min_gpus);
    CHECK(a[i].max_gpus == b[i].max_gpus);
  }
}

}  // namespace

TEST_CASE("read then convert then read gives the same jobs for every format", "[traces][convert]") {
  TempDir dir;
  struct Case {
    std::string format, file, content;
    TraceOptions options;
  };
  TraceOptions gavel;
  gavel.throughputs_path = dir.write("m.json", R"J({"v100": {"('LM (batch size 5)', 1)": {"null": 3.0}}})J");
  TraceOptions generic;
  generic.mapping = CsvMapping::parse(ConfigNode::load_string("{columns: {job_id: id, submit_time: t, start_time: s, end_time: e, num_gpus: g, user: \"who, really\"}}", "m"));
  const std::vector<Case> cases{
      {"schedsim", "s.csv",
       "job_id,submit_time_s,num_gpus,duration_s,estimate_s,user,group,model,gpu_type,gpu_milli,iterations,deadline_s,priority,status,min_gpus,max_gpus\n"
       "\"a,1\",0.000001,2,0.1,,\"u \"\"x\"\"\",g,m,V100,250,1e6,100.5,-2,killed,1,4\nb,3,1,7,9,,,,,1000,,,0,,,\n",
       {}},
      {"itp", "i.csv", "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\nx,5,7,bert,20,32,2,600\ny,1,8,gpt,30,32,4,700\n", {}},
      {"tiresias", "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,606,vgg19,164,30\n", {}},
      {"helios", "h.csv",
       "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
       "1,u,v,2,1,1,FAILED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n",
       {}},
      {"acme", "a.csv", "job_id,user,gpu_num,type,state,submit_time,start_time,end_time,duration\n7,u,8,SFT,CANCELLED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,,117\n", {}},
      {"pai-tasks", "p.csv", "job1,worker,2,Terminated,1000,4600,600,29.3,50,T4\n", {}},
      {"openb-pods", "o.csv",
       "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,1,460,A10,LS,Succeeded,5,100,6\n",
       {}},
      {"swf", "l.swf", "1 0 0 100 4 -1 -1 4 200 -1 1 3 7 -1 -1 1 -1 -1\n", {}},
      {"philly", "p.json",
       R"J([{"status": "Killed", "vc": "v", "jobid": "j", "user": "u", "submitted_time": "2017-10-07 01:11:39", "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23", "detail": [{"ip": "m", "gpus": ["gpu0"]}]}]}])J",
       {}},
      {"gavel", "g.trace", "LM (batch size 5)\tcmd\tdir\t--steps\t1\t10\t1\t3\t2\t0.25\n", gavel},
      {"csv", "c.csv", "id,t,s,e,g,\"who, really\"\nz,1,10,13.5,4,me\n", generic},
  };
  for (const auto& c : cases) {
    INFO("format " << c.format);
    const std::string in = dir.write(c.file, c.content);
    const auto original = source_jobs(in, c.format, c.options);
    REQUIRE_FALSE(original.empty());
    std::ostringstream converted;
    CHECK(convert_trace(in, c.format, c.options, converted) == original.size());
    const std::string out = dir.write("converted-" + c.format + ".csv", converted.str());
    check_same_jobs(source_jobs(out, "schedsim"), original);
    CHECK(detect_trace_format(out) == "schedsim");
  }
  // Sorted by submit time on the way: itp's y comes first.
  CHECK(source_jobs(dir.path("converted-itp.csv"), "schedsim")[0].id == "y");
}

TEST_CASE("trace sample windows subsamples compresses and shifts", "[traces][sample]") {
  TempDir dir;
  std::string csv = "job_id,submit_time_s,num_gpus,duration_s,deadline_s\n";
  for (int i = 0; i < 1000; ++i) csv += "j" + std::to_string(i) + "," + std::to_string(100 + 10 * i) + ",1,5," + std::to_string(100 + 10 * i + 50) + "\n";
  const std::string path = dir.write("t.csv", csv);
  auto sample = [&](const SampleOptions& s) {
    std::ostringstream out;
    sample_trace(path, "schedsim", {}, s, out);
    return read_trace(dir.write("sample.csv", out.str()), "schedsim").jobs;
  };
  SampleOptions window;
  window.from_s = 1000;
  window.to_s = 2000;
  const auto w = sample(window);
  REQUIRE(w.size() == 100);
  CHECK(w.front().id == "j90");
  CHECK(w.back().id == "j189");
  CHECK(w.front().submit == Tick::from_seconds(1000));  // no shift: times are kept

  SampleOptions scaled = window;
  scaled.load_scale = 2;
  scaled.shift_to_s = 0;
  const auto s = sample(scaled);
  REQUIRE(s.size() == 100);
  CHECK(s[0].submit == Tick::from_seconds(0));
  CHECK(s[1].submit == Tick::from_seconds(5));  // gaps of 10 s halved
  CHECK(s[99].submit == Tick::from_seconds(495));
  CHECK(s[1].deadline_s == 5 + 50);  // the deadline keeps its slack after the submission

  SampleOptions half;
  half.fraction = 0.5;
  half.seed = 7;
  const auto a = sample(half), b = sample(half);
  CHECK(a.size() > 430);
  CHECK(a.size() < 570);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].id == b[i].id);
  half.seed = 8;
  const auto c = sample(half);
  bool differs = c.size() != a.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].id != c[i].id;
  CHECK(differs);
  SampleOptions quarter = half;
  quarter.seed = 7;
  quarter.fraction = 0.25;
  const auto q = sample(quarter);
  std::size_t in_half = 0;
  for (const auto& job : q) in_half += std::any_of(a.begin(), a.end(), [&](const JobSpec& x) { return x.id == job.id; });
  CHECK(in_half == q.size());  // same seed: a smaller fraction keeps a subset

  SampleOptions bad;
  bad.fraction = 0;
  CHECK_THROWS_WITH(check_sample_options(bad), "--fraction: must be in (0, 1], e.g. 0.1 keeps about one job in ten");
  bad.fraction = 1;
  bad.load_scale = -1;
  CHECK_THROWS_WITH(check_sample_options(bad), Catch::StartsWith("--load-scale: must be a number > 0"));
  SampleOptions empty;
  empty.from_s = 1e9;
  std::ostringstream sink;
  CHECK_THROWS_WITH(sample_trace(path, "schedsim", {}, empty, sink), Catch::Contains("the sample is empty"));
}

TEST_CASE("cluster-from turns inventories into a cluster section a scenario accepts", "[traces][inventory]") {
  TempDir dir;
  const std::string pai = dir.write("pai_machine_spec.csv",
                                    "m1,V100,96,512,8\nm2,CPU,96,512,0\nm3,V100,96,512,8\nm4,T4,96,512,2\nm5,P100,64,512,2\n");
  const Inventory inv = read_inventory(pai, "pai-machines");
  CHECK(inv.machines_read == 4);
  CHECK(inv.skipped == RowSkips{{"cpu_only", 1}});
  const std::string yaml = inventory_yaml(inv);
  CHECK_THAT(yaml, Catch::EndsWith("cluster:\n  nodes:\n    - {count: 1, type: P100, devices_per_node: 2}\n    - {count: 1, type: T4, devices_per_node: 2}\n"
                                   "    - {count: 2, type: V100, devices_per_node: 8}\n"));
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig sc = load_scenario(dir.write("s.yaml", yaml + "workload: {synthetic: {num_jobs: 3}}\n"), {}, std::nullopt, reg);
  CHECK(sc.num_devices() == 2 + 2 + 16);

  const std::string openb = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,32000,262144,0,nan\nn2,64000,262144,8,G2\n");
  const Inventory o = read_inventory(openb, "openb-nodes");
  REQUIRE(o.groups.size() == 2);
  CHECK(o.groups[0].type == "G2");
  CHECK(o.groups[0].devices_per_node == 8);
  CHECK(o.skipped == RowSkips{{"cpu_only", 1}});
  CHECK_THROWS_WITH(read_inventory(dir.write("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,2,\n"), "openb-nodes"),
                    Catch::EndsWith("bad.csv:2: model: the GPU model is empty on a machine with GPUs"));
  CHECK_THROWS_WITH(read_inventory(dir.write("bad2.csv", "n0,V100,1,1,many\n"), "pai-machines"),
                    Catch::EndsWith("bad2.csv:1: cap_gpu: expected an integer, got 'many'"));
}

TEST_CASE("scenarios read csv traces through a mapping file and gavel traces through their matrix", "[traces][experiments]") {
  TempDir dir;
  dir.write("jobs.csv", "id,t,d,g\na,0,60,1\nb,30,60,2\n");
  dir.write("map.yaml", "columns: {job_id: id, submit_time: t, duration: d, num_gpus: g}\ntime_unit: min\n");
  dir.write("m.json", R"J({"v100": {"('LM (batch size 5)', 1)": {"null": 4.0}}, "k80": {"('LM (batch size 5)', 1)": {"null": 1.0}}})J");
  dir.write("g.trace", "LM (batch size 5)\tcmd\tdir\t--steps\t1\t400\t1\t1\t-1\t0\n");
  const std::string cluster = "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n";
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig csv = load_scenario(dir.write("csv.yaml", cluster + "workload: {trace: {path: jobs.csv, format: csv, mapping: map.yaml}}\n"), {},
                                           std::nullopt, reg);
  REQUIRE(csv.workload.trace);
  std::vector<std::string> warnings;
  auto source = csv.workload.make_source(1, warnings);
  JobSpec j;
  REQUIRE(source->next(j));
  REQUIRE(source->next(j));
  CHECK(j.submit == Tick::from_seconds(1800));
  CHECK(j.duration_s == 3600);
  const YAML::Node resolved = csv.workload.to_yaml();
  CHECK(resolved["trace"]["mapping"]["time_unit"].as<std::string>() == "min");
  CHECK(resolved["trace"]["on_bad_row"].as<std::string>() == "error");

  const ScenarioConfig gavel = load_scenario(
      dir.write("gavel.yaml", cluster + "workload: {trace: {path: g.trace, format: gavel, throughputs: m.json, reference_device: k80}}\n"), {}, std::nullopt, reg);
  auto g = gavel.workload.make_source(1, warnings);
  REQUIRE(g->next(j));
  CHECK(j.duration_s == 400);  // 400 steps at 1 step/s on a K80
  CHECK_THROWS_WITH(load_scenario(dir.write("nomatrix.yaml", cluster + "workload: {trace: {path: g.trace, format: gavel}}\n"), {}, std::nullopt, reg),
                    Catch::Contains("workload.trace: format gavel needs 'throughputs'"));
  CHECK_THROWS_WITH(load_scenario(dir.write("nomap.yaml", cluster + "workload: {trace: {path: jobs.csv, format: csv}}\n"), {}, std::nullopt, reg),
                    Catch::Contains("workload.trace: format csv needs 'mapping'"));
}
