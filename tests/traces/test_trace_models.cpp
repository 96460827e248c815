// workload.trace.models: profiles for trace jobs (issue 23 part 3), the physics check of
// model names (issue 25) and the warning about jobs left without a profile.
#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/trace_models.hpp"

using namespace schedsim;
using Catch::EndsWith;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

const std::string kCluster = "seed: 7\ncluster: {nodes: [{count: 2, type: H100-SXM, devices_per_node: 8}]}\npolicy: fifo\n";

// A trace of `n` jobs without a model column: GPUs cycle 1, 2, 4, 8; durations 600 .. 7800 s.
std::string trace_without_models(int n) {
  std::string csv = "job_id,submit_time_s,num_gpus,duration_s\n";
  const int gpus[] = {1, 2, 4, 8};
  for (int i = 0; i < n; ++i) {
    csv += "j" + std::to_string(i) + "," + std::to_string(i * 60) + "," + std::to_string(gpus[i % 4]) + "," + std::to_string(600 + (i % 13) * 600) + "\n";
  }
  return csv;
}

TraceModelAssignment parse_models(const std::string& yaml) {
  return TraceModelAssignment::parse(ConfigNode::load_string(yaml, "m.yaml").child("models"));
}

JobSpec job(const std::string& id, int gpus, double duration_s, const std::string& model = "", std::int64_t line = 0) {
  JobSpec j;
  j.id = id;
  j.num_gpus = gpus;
  j.duration_s = duration_s;
  j.model = model;
  j.source_line = line;
  return j;
}

std::string load_error(const TempDir& dir, const std::string& name, const std::string& yaml) {
  try {
    const PolicyRegistry reg = builtin_policies();
    const ScenarioConfig s = load_scenario(dir.write(name, yaml), {}, std::nullopt, reg);
    std::vector<std::string> warnings;
    s.workload.make_source(s.seed, warnings);  // reads the trace: where trace rows are checked
  } catch (const InputError& e) {
    const std::string msg = e.what();  // without the temporary folder
    return msg.substr(msg.rfind('/', msg.find(':')) + 1);
  }
  return "no error";
}

}  // namespace

TEST_CASE("trace models: shares and rules parse strictly, with exact messages", "[traces][trace_models]") {
  const TraceModelAssignment shares = parse_models("models: {BERT-large: 0.6, ResNet-50: 0.4}\n");
  REQUIRE(shares.shares_form());
  REQUIRE(shares.rules().size() == 1);
  CHECK(shares.rules()[0].shares == std::vector<std::pair<std::string, double>>{{"BERT-large", 0.6}, {"ResNet-50", 0.4}});

  const TraceModelAssignment rules = parse_models(
      "models:\n"
      "  - {min_gpus: 8, model: GPT-2-1.5B}\n"
      "  - {trace_model: bert, model: BERT-large}\n"
      "  - {max_duration_s: 3600, shares: {ResNet-50: 0.5, DLRM: 0.5}}\n");
  REQUIRE(rules.rules().size() == 3);
  CHECK(rules.rules()[0].min_gpus == 8);
  CHECK(rules.rules()[0].single);
  CHECK(rules.rules()[1].trace_model == "bert");
  CHECK(rules.rules()[2].max_duration_s == 3600);
  CHECK(rules.rules()[2].shares.front().first == "DLRM");  // sorted by name
  const YAML::Node y = rules.to_yaml();
  CHECK(y[0]["min_gpus"].as<int>() == 8);
  CHECK(y[0]["model"].as<std::string>() == "GPT-2-1.5B");
  CHECK(!y[0]["max_gpus"]);
  CHECK(y[2]["shares"]["DLRM"].as<double>() == 0.5);

  auto error = [](const std::string& yaml) {
    try {
      parse_models(yaml);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("models: {ResNet-50: 0.5, BERT-large: 0.4}\n") == "m.yaml:1: models: shares must sum to 1, they sum to 0.9");
  CHECK(error("models: {ResNet-50: 0, BERT-large: 1}\n") == "m.yaml:1: models.ResNet-50: must be > 0, got '0'");
  CHECK(error("models: {}\n") == "m.yaml:1: models: give at least one profile with its share, e.g. {ResNet-50: 0.4, BERT-large: 0.6}");
  CHECK(error("models: []\n") ==
        "m.yaml:1: models: must be a map of shares ({ResNet-50: 0.4, BERT-large: 0.6}) or a non-empty list of rules "
        "([{min_gpus: 8, model: GPT-2-1.5B}, {model: ResNet-50}])");
  CHECK(error("models:\n  - {min_gpu: 8, model: GPT-2-1.5B}\n") ==
        "m.yaml:2: models[0]: unknown key 'min_gpu' (did you mean 'min_gpus'?); valid keys here: trace_model, min_gpus, max_gpus, "
        "min_duration_s, max_duration_s, model, shares, plan");  // plan: issue 26, docs/parallelism.md
  CHECK(error("models:\n  - {min_gpus: 8}\n") ==
        "m.yaml:2: models[0]: give exactly one of 'model' (a profile name) or 'shares' (a map of profile name to share)");
  CHECK(error("models:\n  - {model: DLRM, shares: {DLRM: 1}}\n") ==
        "m.yaml:2: models[0]: give exactly one of 'model' (a profile name) or 'shares' (a map of profile name to share)");
  CHECK(error("models:\n  - {min_gpus: 8, max_gpus: 4, model: DLRM}\n") ==
        "m.yaml:2: models[0].max_gpus: is 4, below min_gpus 8: no job can match");
  CHECK(error("models:\n  - {min_duration_s: 600, max_duration_s: 600, model: DLRM}\n") ==
        "m.yaml:2: models[0].max_duration_s: is 600, not above min_duration_s 600 (max is exclusive): no job can match");
  CHECK(error("models:\n  - DLRM\n") == "m.yaml:2: models[0]: a rule must be a map, e.g. {min_gpus: 8, model: GPT-2-1.5B}");
}

TEST_CASE("trace models: the scenario checks profile names and needs physics", "[traces][trace_models][experiments]") {
  TempDir dir;
  dir.write("t.csv", trace_without_models(4));
  CHECK(load_error(dir, "a.yaml", kCluster + "physics: {}\nworkload: {trace: {path: t.csv, models: {ResNet-50: 0.5, bert: 0.5}}}\n") ==
        "a.yaml:5: workload.trace.models.bert: unknown workload profile 'bert'; known workload profiles: ResNet-50, BERT-large, GPT-2-1.5B, "
        "LLaMA-2-7B, LLaMA-2-70B, DLRM, StableDiffusion-UNet; names match ignoring case, '-', '_' and spaces, and aliases work too");
  CHECK(load_error(dir, "b.yaml", kCluster + "physics: {}\nworkload:\n  trace:\n    path: t.csv\n    models:\n      - {min_gpus: 8, model: GPT2}\n") ==
        "b.yaml:9: workload.trace.models[0].model: unknown workload profile 'GPT2' (did you mean 'gpt2-xl'?); known workload profiles: "
        "ResNet-50, BERT-large, GPT-2-1.5B, LLaMA-2-7B, LLaMA-2-70B, DLRM, StableDiffusion-UNet; names match ignoring case, '-', '_' and "
        "spaces, and aliases work too");
  CHECK(load_error(dir, "c.yaml", kCluster + "workload: {trace: {path: t.csv, models: {ResNet-50: 1}}}\n") ==
        "c.yaml:4: workload.trace.models: models only matter with the physics model on; add a `physics:` map to the scenario");

  // Aliases resolve to the canonical name, which the resolved config shows.
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(dir.write("d.yaml", kCluster + "physics: {}\nworkload: {trace: {path: t.csv, models: {resnet50: 0.25, bert_large: 0.75}}}\n"),
                                         {}, std::nullopt, reg);
  const YAML::Node resolved = s.to_yaml(YAML::Node("fifo"));
  CHECK(resolved["workload"]["trace"]["models"]["ResNet-50"].as<double>() == 0.25);
  CHECK(resolved["workload"]["trace"]["models"]["BERT-large"].as<double>() == 0.75);
}

TEST_CASE("trace models: the assignment is a function of the seed and the job, not of the read order", "[traces][trace_models]") {
  const TraceModelAssignment a = parse_models("models: {ResNet-50: 0.3, BERT-large: 0.3, DLRM: 0.4}\n");
  const TraceModelRule& rule = a.rules().front();
  std::vector<std::string> seed1, again, seed2;
  for (int i = 0; i < 200; ++i) seed1.push_back(TraceModelAssignment::draw(rule, job("j" + std::to_string(i), 1, 600, "", i + 2), 1));
  for (int i = 199; i >= 0; --i) again.push_back(TraceModelAssignment::draw(rule, job("j" + std::to_string(i), 1, 600, "", i + 2), 1));
  std::reverse(again.begin(), again.end());
  for (int i = 0; i < 200; ++i) seed2.push_back(TraceModelAssignment::draw(rule, job("j" + std::to_string(i), 1, 600, "", i + 2), 2));
  CHECK(seed1 == again);
  CHECK(seed1 != seed2);
  int differ = 0;
  for (int i = 0; i < 200; ++i) differ += seed1[static_cast<std::size_t>(i)] != seed2[static_cast<std::size_t>(i)];
  CHECK(differ > 80);  // independent draws differ with probability 0.66

  // Through the trace source, twice with one seed: the same models, line for line.
  TempDir dir;
  dir.write("t.csv", trace_without_models(100));
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(dir.write("s.yaml", kCluster + "physics: {}\nworkload: {trace: {path: t.csv, models: {ResNet-50: 0.5, DLRM: 0.5}}}\n"),
                                         {}, std::nullopt, reg);
  auto models_of = [&](std::uint64_t seed) {
    std::vector<std::string> warnings, out;
    auto source = s.workload.make_source(seed, warnings);
    CHECK(warnings.empty());  // every job got a profile
    JobSpec j;
    while (source->next(j)) out.push_back(j.model);
    return out;
  };
  const auto first = models_of(7);
  CHECK(first.size() == 100);
  CHECK(first == models_of(7));
  CHECK(first != models_of(8));
}

TEST_CASE("trace models: shares are realised within tolerance on 1000 jobs", "[traces][trace_models]") {
  const TraceModelAssignment a = parse_models("models: {ResNet-50: 0.4, BERT-large: 0.6}\n");
  std::map<std::string, int> count;
  for (int i = 0; i < 1000; ++i) ++count[TraceModelAssignment::draw(a.rules().front(), job("job-" + std::to_string(i), 1, 600, "", i + 2), 42)];
  REQUIRE(count.size() == 2);
  // Binomial(1000, 0.4): standard deviation 15.5; 4 of them either side.
  CHECK(count["ResNet-50"] >= 338);
  CHECK(count["ResNet-50"] <= 462);
  CHECK(count["ResNet-50"] + count["BERT-large"] == 1000);
}

TEST_CASE("trace models: the first matching rule wins, trace_model maps a name or replaces every model", "[traces][trace_models]") {
  const TraceModelAssignment a = parse_models(
      "models:\n"
      "  - {trace_model: bert, model: BERT-large}\n"
      "  - {min_gpus: 8, model: GPT-2-1.5B}\n"
      "  - {min_duration_s: 3600, model: DLRM}\n"
      "  - {max_gpus: 2, max_duration_s: 3600, model: ResNet-50}\n");
  auto model_for = [&](const JobSpec& j) {
    const TraceModelRule* r = a.rule_for(j);
    return r ? TraceModelAssignment::draw(*r, j, 1) : std::string("(none)");
  };
  CHECK(model_for(job("a", 8, 100000)) == "GPT-2-1.5B");        // rule 2 before rule 3
  CHECK(model_for(job("b", 4, 3600)) == "DLRM");                // min_duration_s is inclusive
  CHECK(model_for(job("c", 2, 3599)) == "ResNet-50");
  CHECK(model_for(job("d", 4, 600)) == "(none)");               // no rule matches: no profile
  CHECK(model_for(job("e", 8, 600, "BERT")) == "BERT-large");   // the name, ignoring case
  CHECK(model_for(job("f", 8, 600, "ResNet-50")) == "(none)");  // a job's own model is kept
  const TraceModelAssignment any = parse_models("models:\n  - {trace_model: any, model: DLRM}\n");
  CHECK(any.rule_for(job("g", 1, 600, "ResNet-50")) != nullptr);
  CHECK(any.rule_for(job("h", 1, 600)) != nullptr);
}

TEST_CASE("physics on: an unknown model name in a trace is an error naming the line, off it stays a label", "[traces][trace_models][experiments]") {
  TempDir dir;
  dir.write("m.csv", "job_id,submit_time_s,num_gpus,duration_s,model\na,0,1,600,resnet50\nb,60,2,600,vgg16\nc,120,1,600,\n");
  CHECK(load_error(dir, "u.yaml", kCluster + "physics: {}\nworkload: {trace: m.csv}\n") ==
        "m.csv:3: job 'b': unknown workload profile 'vgg16'; known workload profiles: ResNet-50, BERT-large, GPT-2-1.5B, LLaMA-2-7B, "
        "LLaMA-2-70B, DLRM, StableDiffusion-UNet; names match ignoring case, '-', '_' and spaces, and aliases work too; with the physics "
        "model on every model name needs a profile: map it with a rule under workload.trace.models (e.g. - {trace_model: vgg16, model: "
        "PROFILE}) or define it under workload_profiles");
  // Mapped explicitly, it runs; without physics it is only a label.
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig mapped = load_scenario(
      dir.write("v.yaml", kCluster + "physics: {}\nworkload:\n  trace:\n    path: m.csv\n    models:\n      - {trace_model: vgg16, model: ResNet-50}\n"
                                     "      - {model: DLRM}\n"),
      {}, std::nullopt, reg);
  std::vector<std::string> warnings;
  auto source = mapped.workload.make_source(mapped.seed, warnings);
  std::vector<std::string> models;
  JobSpec j;
  while (source->next(j)) models.push_back(j.model);
  CHECK(models == std::vector<std::string>{"resnet50", "ResNet-50", "DLRM"});
  CHECK(warnings.empty());
  const ScenarioConfig plain = load_scenario(dir.write("w.yaml", kCluster + "workload: {trace: m.csv}\n"), {}, std::nullopt, reg);
  CHECK(run_scenario(plain, reg, RunOptions{}).summary.jobs_completed == 3);
}

TEST_CASE("physics on: jobs without a profile give one warning, on stderr's list and in results.json", "[traces][trace_models][experiments]") {
  TempDir dir;
  dir.write("t.csv", trace_without_models(8));
  const PolicyRegistry reg = builtin_policies();
  const std::string expected = dir.path("t.csv") +
                               ": 8 of 8 jobs (100.0%) have no workload profile, so the physics model runs them at rate 1 on every device type; "
                               "assign profiles with workload.trace.models (shares such as {ResNet-50: 0.5, BERT-large: 0.5}, or rules by GPU "
                               "count and duration) (docs/traces.md#model-profiles)";
  const ScenarioConfig s = load_scenario(dir.write("s.yaml", kCluster + "physics: {}\nworkload: {trace: t.csv}\n"), {}, std::nullopt, reg);
  const RunResult r = run_scenario(s, reg, RunOptions{dir.path("out")});
  CHECK(r.warnings == std::vector<std::string>{expected});
  const auto results = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  CHECK(results["warnings"] == nlohmann::json::array({expected}));

  // A rule for the 8-GPU jobs only: the rest are still counted.
  const ScenarioConfig part = load_scenario(
      dir.write("p.yaml", kCluster + "physics: {}\nworkload: {trace: {path: t.csv, models: [{min_gpus: 8, model: GPT-2-1.5B}]}}\n"), {}, std::nullopt, reg);
  CHECK(run_scenario(part, reg, RunOptions{}).warnings ==
        std::vector<std::string>{dir.path("t.csv") +
                                 ": 6 of 8 jobs (75.0%) have no workload profile, so the physics model runs them at rate 1 on every device type; "
                                 "add a rule that matches them to workload.trace.models (docs/traces.md#model-profiles)"});
  // Without physics the rate is 1 by design: no warning.
  const ScenarioConfig off = load_scenario(dir.write("o.yaml", kCluster + "workload: {trace: t.csv}\n"), {}, std::nullopt, reg);
  CHECK(run_scenario(off, reg, RunOptions{}).warnings.empty());
}
