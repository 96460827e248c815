// Every reader on a small hand-made fixture: field mapping, units, time zones, filters.
#include <catch2/catch.hpp>

#include <cmath>

#include "base/error.hpp"
#include "test_support.hpp"
#include "trace_test_util.hpp"
#include "traces/time_parse.hpp"

using namespace schedsim;
using schedsim::test::read_trace;
using schedsim::test::read_trace_error;
using schedsim::test::TempDir;

namespace {
double unix_s(int y, unsigned m, unsigned d, int h, int mi, int s) {
  return static_cast<double>(days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + s);
}
}  // namespace

TEST_CASE("date-times parse with offsets and zones including US Pacific daylight time", "[traces][time]") {
  double t = 0;
  REQUIRE(parse_datetime("2020-06-09 18:41:01", TimeZone::fixed_hours(8), t));
  CHECK(t == unix_s(2020, 6, 9, 10, 41, 1));
  REQUIRE(parse_datetime("2023-03-01 00:18:22+08:00", TimeZone::utc(), t));
  CHECK(t == unix_s(2023, 2, 28, 16, 18, 22));
  REQUIRE(parse_datetime("2023-05-17T11:00:58Z", TimeZone::fixed_hours(8), t));
  CHECK(t == unix_s(2023, 5, 17, 11, 0, 58));
  REQUIRE(parse_datetime(" 2017-10-07 01:12:09 ", TimeZone::us_pacific(), t));  // PDT, UTC-7
  CHECK(t == unix_s(2017, 10, 7, 8, 12, 9));
  REQUIRE(parse_datetime("2017-12-01 00:00:00", TimeZone::us_pacific(), t));  // PST, UTC-8
  CHECK(t == unix_s(2017, 12, 1, 8, 0, 0));
  REQUIRE(parse_datetime("2017-11-05 01:30:00", TimeZone::us_pacific(), t));  // repeated hour: daylight reading
  CHECK(t == unix_s(2017, 11, 5, 8, 30, 0));
  REQUIRE(parse_datetime("2017-11-05 02:30:00", TimeZone::us_pacific(), t));
  CHECK(t == unix_s(2017, 11, 5, 10, 30, 0));
  REQUIRE(parse_datetime("2017-03-12 03:00:00", TimeZone::us_pacific(), t));  // first daylight hour
  CHECK(t == unix_s(2017, 3, 12, 10, 0, 0));
  REQUIRE(parse_datetime("2020-02-29 00:00:00.5", TimeZone::utc(), t));
  CHECK(t == unix_s(2020, 2, 29, 0, 0, 0) + 0.5);
  for (const char* bad : {"2019-02-29 00:00:00", "2020-13-01 00:00:00", "2020-01-01", "yesterday", "2020-01-01 00:00:00+8", "2020-01-01 24:00:00", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_datetime(bad, TimeZone::utc(), t));
  }
}

TEST_CASE("Philly cluster_job_log maps attempts to GPUs and run time and skips jobs that never ran", "[traces][philly]") {
  TempDir dir;
  const std::string path = dir.write("cluster_job_log", R"J([
 {"status": "Pass", "vc": "ee9e8c", "jobid": "application_1", "user": "ce2f4c",
  "submitted_time": "2017-10-07 01:11:39",
  "attempts": [
   {"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
    "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}]},
   {"start_time": "2017-10-07 01:13:30", "end_time": "2017-10-07 02:13:30",
    "detail": [{"ip": "m412", "gpus": ["gpu0", "gpu1"]}, {"ip": "m413", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5"]}]}
  ]},
 {"status": "Killed", "vc": "vc2", "jobid": "application_2", "user": "u2", "submitted_time": "2017-10-07 02:00:00", "attempts": []},
 {"status": "Failed", "vc": "vc2", "jobid": "application_3", "user": "u2", "submitted_time": "2017-12-01 00:00:00",
  "attempts": [{"start_time": "2017-12-01 00:00:10", "end_time": "2017-12-01 00:00:40", "detail": [{"ip": "m1", "gpus": ["gpu7"]}]}]},
 {"status": "Pass", "vc": "vc2", "jobid": "application_4", "user": "u2", "submitted_time": "2017-12-01 00:00:00",
  "attempts": [{"start_time": "2017-12-01 00:00:10", "end_time": "None", "detail": [{"ip": "m1", "gpus": ["gpu7"]}]}]},
 {"status": "Killed", "vc": "v\"c", "jobid": "application_5", "user": "u[5]", "submitted_time": "2017-12-02 00:00:00",
  "attempts": [{"start_time": null, "end_time": "2017-12-02 00:10:00", "detail": []}, {"start_time": "", "end_time": null},
               {"start_time": "2017-12-02 00:10:00", "end_time": "2017-12-02 00:20:00", "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]}]}
]
)J");
  const auto r = read_trace(path, "philly");
  REQUIRE(r.jobs.size() == 3);
  const JobSpec& a = r.jobs[0];
  CHECK(a.id == "application_1");
  CHECK(a.user == "ce2f4c");
  CHECK(a.group == "ee9e8c");
  CHECK(a.recorded_status == RecordedStatus::kCompleted);
  CHECK(a.submit == Tick::from_seconds(unix_s(2017, 10, 7, 8, 11, 39)));  // PDT
  CHECK(a.num_gpus == 8);            // the last attempt: 2 + 6 GPUs on two machines
  CHECK(a.duration_s == 74 + 3600);  // both attempts
  CHECK(a.source_line == 2);
  CHECK(r.jobs[1].id == "application_3");
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kFailed);
  CHECK(r.jobs[1].submit == Tick::from_seconds(unix_s(2017, 12, 1, 8, 0, 0)));  // PST
  CHECK(r.jobs[1].num_gpus == 1);
  CHECK(r.jobs[1].duration_s == 30);
  CHECK(r.jobs[2].group == "v\"c");
  CHECK(r.jobs[2].user == "u[5]");
  CHECK(r.jobs[2].num_gpus == 2);
  CHECK(r.jobs[2].duration_s == 600);  // the attempt without a start is not counted
  CHECK(r.jobs[2].recorded_status == RecordedStatus::kKilled);
  CHECK(r.skipped == RowSkips{{"no_attempts", 1}, {"still_running", 1}});
  CHECK(detect_trace_format(path) == "philly");
}

TEST_CASE("Helios cluster_log reads China local time and skips CPU jobs and jobs that never started", "[traces][helios]") {
  TempDir dir;
  const std::string path = dir.write("cluster_log.csv",
                                     "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                                     "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
                                     "1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0\n"
                                     "1425513,uzqls,vcpDC,16,1,2,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:30,2020-06-17 14:15:21,675231,2\n"
                                     "1425514,uzqls,vcpDC,0,4,1,COMPLETED,2020-06-09 18:42:00,2020-06-09 18:42:00,2020-06-09 18:43:00,60,0\n"
                                     "1425515,uzqls,vcpDC,8,4,1,CANCELLED,2020-06-09 18:42:00,,2020-06-09 18:43:00,,\n"
                                     "1425516,uzqls,vcpDC,8,4,1,NODE_FAIL,2020-06-09 18:43:00,2020-06-09 18:43:00,2020-06-09 18:43:00,0,0\n"
                                     "1425517,uzqls,vcpDC,8,4,1,TIMEOUT,2020-06-09 18:44:00,2020-06-09 18:44:00,2020-06-09 19:44:00,3600,0\n"
                                     "1425518,uzqls,vcpDC,8,4,1,SUSPENDED,2020-06-09 18:45:00,2020-06-09 18:45:00,2020-06-09 19:45:00,3600,0\n");
  const auto r = read_trace(path, "helios");
  REQUIRE(r.jobs.size() == 4);
  CHECK(r.jobs[0].id == "1425511");
  CHECK(r.jobs[0].user == "uXBbc");
  CHECK(r.jobs[0].group == "vcJkd");
  CHECK(r.jobs[0].submit == Tick::from_seconds(unix_s(2020, 6, 9, 10, 41, 1)));  // UTC+8
  CHECK(r.jobs[0].duration_s == 36848);
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kCompleted);
  CHECK(r.jobs[1].num_gpus == 4);
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kFailed);
  CHECK(r.jobs[2].recorded_status == RecordedStatus::kKilled);
  CHECK(r.jobs[2].num_gpus == 16);
  CHECK(r.jobs[3].id == "1425517");
  CHECK(r.jobs[3].recorded_status == RecordedStatus::kFailed);
  CHECK(r.skipped == RowSkips{{"cpu_only", 1}, {"never_started", 1}, {"zero_duration", 1}, {"other_state", 1}});
  CHECK(detect_trace_format(path) == "helios");
}

TEST_CASE("Acme Seren and Kalos traces read offsets and the LLM job type", "[traces][acme]") {
  TempDir dir;
  const std::string seren = dir.write("trace_seren.csv",
                                      "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n"
                                      "5778432,u5907,1,8,128,Pretrain,FAILED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0\n"
                                      "5778469,u5907,1,8,128,SFT,COMPLETED,2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,2023-03-01 01:09:04+08:00,2693,13,21544.0\n");
  const auto r = read_trace(seren, "acme");
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].model == "Pretrain");
  CHECK(r.jobs[0].user == "u5907");
  CHECK(r.jobs[0].group.empty());
  CHECK(r.jobs[0].submit == Tick::from_seconds(unix_s(2023, 2, 28, 16, 18, 22)));
  CHECK(r.jobs[0].duration_s == 117);
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kFailed);
  CHECK(r.jobs[1].model == "SFT");
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kCompleted);
  CHECK(detect_trace_format(seren) == "acme");

  const std::string kalos = dir.write("trace_kalos.csv",
                                      "job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time\n"
                                      "dlctk696s0jbvitv,uf794,8,64,960,1000,100.0,Evaluation,FAILED,2023-05-17 11:00:58+00:00,2023-05-17 11:01:08+00:00,2023-05-17 11:01:16+00:00,2023-05-17 11:01:16+00:00,,8,10.0,512.0\n"
                                      "dlc1t2ypl09b8qtp,uf794,8,64,960,1000,100.0,Debug,CANCELLED,2023-05-17 11:28:42+00:00,2023-05-17 11:28:54+00:00,2023-05-17 11:30:04+00:00,,2023-05-17 11:30:04+00:00,,12.0,5248.0\n");
  const auto k = read_trace(kalos, "acme");
  REQUIRE(k.jobs.size() == 2);
  CHECK(k.jobs[0].num_gpus == 64);
  CHECK(k.jobs[0].model == "Evaluation");
  CHECK(k.jobs[0].submit == Tick::from_seconds(unix_s(2023, 5, 17, 11, 0, 58)));
  CHECK(k.jobs[1].duration_s == 70);  // empty duration: end - start
  CHECK(k.jobs[1].recorded_status == RecordedStatus::kKilled);
}

TEST_CASE("PAI task table turns plan_gpu percent into GPUs and fractional shares", "[traces][pai]") {
  TempDir dir;
  const std::string path = dir.write("pai_task_table.csv",
                                     "job1,worker,2,Terminated,1000,4600,600,29.3,50,T4\n"
                                     "job2,tensorflow,1,Failed,2000,2100,600,29.3,100,V100\n"
                                     "job3,worker,4,Terminated,3000,3500,600,29.3,200,\n"
                                     "job4,ps,1,Terminated,3000,3500,600,29.3,,\n"
                                     "job5,worker,1,Running,3000,,600,29.3,100,P100\n"
                                     "job6,worker,1.0,Terminated,4000,4010,600,29.3,150,MISC\n");
  const auto r = read_trace(path, "pai-tasks");
  REQUIRE(r.jobs.size() == 4);
  CHECK(r.jobs[0].id == "job1/worker");
  CHECK(r.jobs[0].num_gpus == 2);
  CHECK(r.jobs[0].gpu_milli == 500);
  CHECK(r.jobs[0].gpu_type == "T4");
  CHECK(r.jobs[0].submit == Tick::from_seconds(1000));
  CHECK(r.jobs[0].duration_s == 3600);
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kCompleted);
  CHECK(r.jobs[1].num_gpus == 1);
  CHECK(r.jobs[1].gpu_milli == 1000);
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kFailed);
  CHECK(r.jobs[2].num_gpus == 8);  // 4 instances x 2 GPUs
  CHECK(r.jobs[3].num_gpus == 2);  // 150 % rounds up to 2 whole GPUs
  CHECK(r.skipped == RowSkips{{"cpu_only", 1}, {"still_running", 1}});
  CHECK(detect_trace_format(path) == "pai-tasks");
}

TEST_CASE("openb pod lists carry gpu_milli and skip CPU and pending pods", "[traces][openb]") {
  TempDir dir;
  const std::string path = dir.write("openb_pod_list.csv",
                                     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
                                     "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                                     "openb-pod-0001,6000,12288,1,460,V100M16|V100M32,LS,Succeeded,427061,12902960,427070\n"
                                     "openb-pod-0002,6000,12288,0,0,,BE,Failed,500000,600000,500000\n"
                                     "openb-pod-0003,6000,12288,1,1000,,BE,Pending,600000,600100,\n"
                                     "openb-pod-0004,6000,12288,8,1000,,Guaranteed,Failed,700000,700600,700100\n");
  const auto r = read_trace(path, "openb-pods");
  REQUIRE(r.jobs.size() == 3);
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kUnknown);
  CHECK(r.jobs[0].duration_s == 12537496);
  CHECK(r.jobs[1].gpu_milli == 460);
  CHECK(r.jobs[1].gpu_type == "V100M16|V100M32");
  CHECK(r.jobs[1].group == "LS");
  CHECK(r.jobs[1].submit == Tick::from_seconds(427061));
  CHECK(r.jobs[1].duration_s == 12902960 - 427070);
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kCompleted);
  CHECK(r.jobs[2].num_gpus == 8);
  CHECK(r.jobs[2].duration_s == 500);
  CHECK(r.jobs[2].recorded_status == RecordedStatus::kFailed);
  CHECK(r.skipped == RowSkips{{"cpu_only", 1}, {"never_scheduled", 1}});
  CHECK(detect_trace_format(path) == "openb-pods");
}

TEST_CASE("SWF reads plain and gzip files with -1 as missing and floats in integer fields", "[traces][swf]") {
  const std::string swf =
      "; Version: 2.2\n"
      "; Computer: test\n"
      "  1   0     5  100   4   -1 -1   4  200 -1  1  3  7 -1 -1  1 -1 -1\n"
      "  2  10     0   50  -1   -1 -1   8   -1 -1  0  3  7 -1 -1  1 -1 -1\n"
      "  3  20     0   -1   2   -1 -1   2  100 -1  5  3  7 -1 -1  1 -1 -1\n"
      "\n"
      "  4  30.0   0 18.00 16.0  18.0 -1 16 43200 -1  5 -1 -1 -1 -1  1 -1 -1\n"
      "  5  40     0    0   1   -1 -1   1  100 -1  1  3  7 -1 -1  1 -1 -1\n";
  TempDir dir;
  for (const bool gz : {false, true}) {
    INFO("gzip " << gz);
    std::string path = dir.path(gz ? "log.swf.gz" : "log.swf");
    if (gz) schedsim::test::write_gzip(path, swf);
    else dir.write("log.swf", swf);
    const auto r = read_trace(path, "swf");
    REQUIRE(r.jobs.size() == 3);
    CHECK(r.jobs[0].id == "1");
    CHECK(r.jobs[0].num_gpus == 4);
    CHECK(r.jobs[0].duration_s == 100);
    CHECK(r.jobs[0].estimate_s == 200);
    CHECK(r.jobs[0].user == "3");
    CHECK(r.jobs[0].group == "7");
    CHECK(r.jobs[0].recorded_status == RecordedStatus::kCompleted);
    CHECK(r.jobs[0].source_line == 3);
    CHECK(r.jobs[1].num_gpus == 8);  // allocated -1: the requested processors
    CHECK_FALSE(r.jobs[1].has_estimate());
    CHECK(r.jobs[1].recorded_status == RecordedStatus::kFailed);
    CHECK(r.jobs[2].id == "4");
    CHECK(r.jobs[2].num_gpus == 16);
    CHECK(r.jobs[2].duration_s == 18);
    CHECK(r.jobs[2].submit == Tick::from_seconds(30));
    CHECK(r.jobs[2].user.empty());
    CHECK(r.jobs[2].recorded_status == RecordedStatus::kKilled);
    CHECK(r.skipped == RowSkips{{"missing_run_time", 1}, {"zero_duration", 1}});
    CHECK(detect_trace_format(path) == "swf");
  }
}

namespace {
// A two-device, two-job-type matrix in Gavel's layout.
const char* kMatrix = R"J({
  "v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.0, "('LM (batch size 5)', 1)": [3.0, 30.0]},
           "('ResNet-50 (batch size 64)', 2)": {"null": 8.0},
           "('LM (batch size 5)', 1)": {"null": 40.0, "('ResNet-50 (batch size 64)', 1)": [30.0, 3.0]}},
  "k80":  {"('ResNet-50 (batch size 64)', 1)": {"null": 0.5}, "('LM (batch size 5)', 1)": {"null": 10.0}},
  "v100_unconsolidated": {"('ResNet-50 (batch size 64)', 2)": {"null": 6.0}}
})J";
}  // namespace

TEST_CASE("Gavel traces turn steps into seconds with the throughput matrix", "[traces][gavel]") {
  TempDir dir;
  TraceOptions o;
  o.throughputs_path = dir.write("throughputs.json", kMatrix);
  const std::string ten = dir.write("ten.trace",
                                    "ResNet-50 (batch size 64)\tpython3 main.py -b 64\timage_classification/imagenet\t--num_minibatches\t1\t400\t2\t1\t-1.000000\t0\n"
                                    "LM (batch size 5)\tpython main.py --batch_size 5\tlanguage_modeling\t--steps\t1\t4000\t1\t2\t1.5\t30.5\n");
  const auto r = read_trace(ten, "gavel", o);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].id == "0");
  CHECK(r.jobs[0].model == "ResNet-50 (batch size 64)");
  CHECK(r.jobs[0].num_gpus == 2);
  CHECK(r.jobs[0].iterations == 400);
  CHECK(r.jobs[0].duration_s == 50);  // 400 steps / 8 steps/s on 2 V100s
  CHECK(r.jobs[0].priority == 1);
  CHECK(std::isnan(r.jobs[0].deadline_s));  // SLO -1: none
  CHECK(r.jobs[1].duration_s == 100);
  CHECK(r.jobs[1].submit == Tick::from_seconds(30.5));
  CHECK(r.jobs[1].priority == 2);
  CHECK(r.jobs[1].deadline_s == 30.5 + 1.5 * 100);
  CHECK(detect_trace_format(ten) == "gavel");

  const std::string seven = dir.write("seven.trace", "LM (batch size 5)\tcd %s && python main.py\t--steps\t1\t500\t12.000000\t1\n");
  o.reference_device = "k80";
  const auto s = read_trace(seven, "gavel", o);
  REQUIRE(s.jobs.size() == 1);
  CHECK(s.jobs[0].duration_s == 50);  // 500 steps / 10 steps/s on a K80
  CHECK(s.jobs[0].submit == Tick::from_seconds(12));
  CHECK(detect_trace_format(seven) == "gavel");

  o.reference_device = "a100";
  CHECK(read_trace_error(seven, "gavel", o) == "throughputs.json: reference device type 'a100' is not in the throughput matrix; it has: k80, v100");
  CHECK_THAT(read_trace_error(seven, "gavel", {}), Catch::Contains("the gavel format needs Gavel's throughput matrix"));
}

TEST_CASE("Tiresias and ElasticFlow traces fill model iterations and deadline", "[traces][tiresias][itp]") {
  TempDir dir;
  const std::string t = dir.write("60_job.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n");
  const auto r = read_trace(t, "tiresias");
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[1].num_gpus == 8);
  CHECK(r.jobs[1].submit == Tick::from_seconds(30));
  CHECK(r.jobs[1].iterations == 133);
  CHECK(r.jobs[1].model == "vgg11");
  CHECK(r.jobs[1].duration_s == 147);
  CHECK(detect_trace_format(t) == "tiresias");

  const std::string ef = dir.write("ef.csv",
                                   "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
                                   "bdd6,3715485,3249,deepspeech2,3716178,32,1,1075\n");
  const auto e = read_trace(ef, "itp");
  REQUIRE(e.jobs.size() == 1);
  CHECK(e.jobs[0].deadline_s == 3716178);
  CHECK(e.jobs[0].iterations == 3249);
  CHECK(e.jobs[0].model == "deepspeech2");
  const auto plain = read_trace(dir.write("itp.csv", "job_id,submission_time,duration,num_gpu\nx,5,600,2\n"), "itp");
  REQUIRE(plain.jobs.size() == 1);
  CHECK(std::isnan(plain.jobs[0].deadline_s));
  CHECK(plain.jobs[0].model.empty());
}

TEST_CASE("the generic csv format reads columns named by a YAML mapping", "[traces][csv]") {
  TempDir dir;
  const std::string path = dir.write("slurm.csv",
                                     "JobID;Submit;Elapsed;GPUs;Account;State;Limit\n"
                                     "7;1.5;2;4;team-a;COMPLETED;3\n"
                                     "8;2;0.5;1;team-b;CANCELLED;\n");
  TraceOptions o;
  o.mapping = CsvMapping::parse(ConfigNode::load_string(
      "{columns: {job_id: JobID, submit_time: Submit, duration: Elapsed, num_gpus: GPUs, group: Account, status: State, estimate: Limit},"
      " time_unit: min, delimiter: ';'}",
      "map.yaml"));
  const auto r = read_trace(path, "csv", o);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].submit == Tick::from_seconds(90));
  CHECK(r.jobs[0].duration_s == 120);
  CHECK(r.jobs[0].estimate_s == 180);
  CHECK(r.jobs[0].group == "team-a");
  CHECK(r.jobs[0].recorded_status == RecordedStatus::kCompleted);
  CHECK(r.jobs[1].duration_s == 30);
  CHECK(r.jobs[1].recorded_status == RecordedStatus::kKilled);
  CHECK_FALSE(r.jobs[1].has_estimate());

  auto mapping_error = [](const std::string& yaml) {
    try {
      CsvMapping::parse(ConfigNode::load_string(yaml, "map.yaml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(mapping_error("{columns: {job_id: a, submit_time: b, num_gpus: c}}") ==
        "map.yaml:1: columns: give either 'duration' or both 'start_time' and 'end_time' (duration = end - start)");
  CHECK_THAT(mapping_error("{columns: {job_id: a, submit_time: b, duration: d, num_gpus: c, runtime: x}}"),
             Catch::StartsWith("map.yaml:1: columns: unknown key 'runtime'"));
  CHECK_THAT(mapping_error("{columns: {job_id: a, submit_time: b, duration: d, num_gpus: c}, time_unit: days}"),
             Catch::Contains("'days' is not allowed"));
  TraceOptions missing_column = o;
  missing_column.mapping->columns["user"] = "Owner";
  CHECK(read_trace_error(path, "csv", missing_column) ==
        "slurm.csv:1: missing column 'Owner' for the csv format (header has: JobID, Submit, Elapsed, GPUs, Account, State, Limit)");
}

TEST_CASE("odd files are errors with a clear message and never a crash", "[traces][bad-input]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path("folder"));
  CHECK(read_trace_error(dir.path("folder"), "schedsim") == "folder: is a folder, not a trace file");
  CHECK(read_trace_error(dir.path("folder"), "philly") == "folder: is a folder, not a trace file");
  CHECK_THROWS_WITH(detect_trace_format(dir.path("folder")), Catch::EndsWith("folder: is a folder, not a trace file"));
  CHECK(read_trace_error(dir.write("open.json", "[\n"), "philly") == "open.json:2: the file ends before the job array's closing ']' (truncated file?)");
  CHECK(read_trace_error(dir.write("cut.json", "[{\"jobid\": \"a\", "), "philly") == "cut.json:1: the file ends inside a job (truncated JSON?)");
  CHECK(read_trace_error(dir.write("obj.json", "{\"jobid\": \"a\"}"), "philly") == "obj.json:1: expected a JSON array of jobs ('[' first)");
  CHECK(read_trace_error(dir.write("nojson.json", "[1, {\"jobid\": 5}]"), "philly") == "nojson.json:1: expected a job object {\"jobid\": ..., \"attempts\": [...]}");
  const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\n\x03\0>\0\x01\0";  // an ELF header's start, NULs included
  const std::string binary(elf, sizeof elf - 1);
  CHECK_THROWS_WITH(detect_trace_format(dir.write("bin.dat", binary)), Catch::Contains("cannot tell the trace format from the first line"));
  TraceOptions lenient;
  lenient.on_bad_row = BadRowMode::kSkip;
  const auto r = read_trace(dir.path("bin.dat"), "swf", lenient);
  CHECK(r.jobs.empty());
  CHECK(r.skipped == RowSkips{{"malformed_row", 2}});
}
