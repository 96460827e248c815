#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "world/physics/throughput_matrix.hpp"
#include "test_support.hpp"

using namespace schedsim;

TEST_CASE("the throughput matrix reads isolated and co-located steps per second", "[sim][throughput]") {
  const auto m = ThroughputMatrix::parse(R"J({
    "v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.0, "('LM (batch size 5)', 1)": [3.0, 30.0], "(\"Bob's model\", 1)": [0.0, 0.0]},
             "('ResNet-50 (batch size 64)', 2)": {"null": 8.0}},
    "k80": {"('ResNet-50 (batch size 64)', 1)": {"null": 0.5}},
    "v100_unconsolidated": {"('ResNet-50 (batch size 64)', 2)": {"null": 6.0}}})J",
                                         "m.json");
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "v100", 1) == 4.0);
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "v100", 2) == 8.0);
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "v100", 2, ThroughputMatrix::Placement::kUnconsolidated) == 6.0);
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "k80", 1) == 0.5);
  CHECK_FALSE(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "k80", 2));
  CHECK_FALSE(m.isolated_steps_per_s("LM (batch size 5)", "v100", 1));
  CHECK(m.colocated_steps_per_s("v100", "ResNet-50 (batch size 64)", 1, "LM (batch size 5)", 1) == std::make_pair(3.0, 30.0));
  CHECK(m.colocated_steps_per_s("v100", "ResNet-50 (batch size 64)", 1, "Bob's model", 1) == std::make_pair(0.0, 0.0));
  CHECK_FALSE(m.colocated_steps_per_s("k80", "ResNet-50 (batch size 64)", 1, "LM (batch size 5)", 1));
  CHECK(m.device_types() == std::vector<std::string>{"k80", "v100"});
  CHECK(m.job_types() == std::vector<std::string>{"ResNet-50 (batch size 64)"});
  CHECK(m.gpu_counts("ResNet-50 (batch size 64)", "v100") == std::vector<int>{1, 2});
  CHECK(m.num_entries() == 4);
}

TEST_CASE("malformed throughput matrices are errors naming the key", "[sim][throughput][bad-input]") {
  auto error = [](const std::string& text) {
    try {
      ThroughputMatrix::parse(text, "m.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("{") == "m.json:1:2: not valid JSON: unexpected end of input in an object; expected a string in double quotes (the key)");
  CHECK(error("[]") == "m.json: expected a JSON object with one key per device type (k80, p100, v100...)");
  CHECK(error(R"J({"v100": {"ResNet": {"null": 1}}})J") == "m.json: v100: ResNet: expected a key like \"('ResNet-50 (batch size 64)', 1)\"");
  CHECK(error(R"J({"v100": {"('A', 0)": {"null": 1}}})J") == "m.json: v100: ('A', 0): expected a key like \"('ResNet-50 (batch size 64)', 1)\"");
  CHECK(error(R"J({"v100": {"('A', 1)": {"null": -1}}})J") == "m.json: v100: ('A', 1): null: expected a finite number of steps per second >= 0, got -1");
  CHECK(error(R"J({"v100": {"('A', 1)": {"null": "fast"}}})J") == "m.json: v100: ('A', 1): null: expected a number of steps per second, got \"fast\"");
  CHECK(error(R"J({"v100": {"('A', 1)": {"('B', 1)": [1, 2]}}})J") == "m.json: v100: ('A', 1): missing the isolated throughput (key \"null\")");
  CHECK(error(R"J({"v100": {"('A', 1)": {"null": 1, "('B', 1)": [1]}}})J") ==
        "m.json: v100: ('A', 1): ('B', 1): expected a pair [this job's steps/s, the other job's steps/s]");
  std::string name;
  int gpus = 0;
  CHECK(parse_job_type_key("('ResNet-50 (batch size 64)', 8)", name, gpus));
  CHECK(name == "ResNet-50 (batch size 64)");
  CHECK(gpus == 8);
  CHECK_FALSE(parse_job_type_key("('A', 99999999999)", name, gpus));
  CHECK_FALSE(parse_job_type_key("('A' 1)", name, gpus));
}

TEST_CASE("a throughput matrix that is not JSON names the line and column and what was expected", "[sim][throughput][bad-input]") {
  // Before: "m.json: not valid JSON: [json.exception.parse_error.101] parse error at line
  // 2, column 11: syntax error while parsing value - invalid literal; last read: ..."
  auto error = [](const std::string& text) {
    try {
      ThroughputMatrix::parse(text, "m.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("{\n  \"v100\": x\n}") == "m.json:2:11: not valid JSON: invalid literal 'x'; expected a value (an object, array, string, number, true, false or null)");
  CHECK(error(R"J({"v100": {"('A', 1)": {"null": 1,}}})J") == "m.json:1:34: not valid JSON: unexpected '}' in an object; expected a string in double quotes (the key)");
  CHECK(error(R"J({"v100" {}})J") == "m.json:1:9: not valid JSON: unexpected '{' in an object; expected ':'");
  CHECK(error(R"J({"v100": {}} {})J") == "m.json:1:14: not valid JSON: unexpected '{'; expected nothing more after the value");
  CHECK(error("") == "m.json:1:1: not valid JSON: unexpected end of input; expected a value (an object, array, string, number, true, false or null)");
  CHECK(error(R"J({"v100": "abc)J") == "m.json:1:14: not valid JSON: invalid string: missing closing quote (at '\"abc')");
  CHECK(error("{\"v100\":\n 1e99999}") == "m.json:2:2: not valid JSON: the number 1e99999 is too large (beyond a double's range, about 1.8e308)");
  // A long unterminated string is shown by its start.
  CHECK(error("{\"" + std::string(100, 'a')) ==
        "m.json:1:103: not valid JSON: invalid string: missing closing quote (at '\"" + std::string(39, 'a') + "...') in an object");
}

TEST_CASE("a long throughput matrix read stops promptly when the interruption poll throws", "[sim][throughput][interrupt]") {
  std::string text = "{\"v100\": {";
  for (int i = 1; i <= 3000; ++i) text += std::string(i > 1 ? ", " : "") + "\"('A', " + std::to_string(i) + ")\": {\"null\": 1.5}";
  text += "}}";
  struct Stop {
    std::string path;
  };
  std::uint64_t polls = 0;
  bool interrupted = true;
  const auto poll = [&](const std::string& p) {
    ++polls;
    if (interrupted) throw Stop{p};
  };
  try {
    ThroughputMatrix::parse(text, "m.json", poll);
    FAIL("the read was not stopped");
  } catch (const Stop& s) {
    CHECK(s.path == "m.json");  // before: the whole matrix was read, the signal unseen
  }
  CHECK(polls == 1);  // within 4096 JSON values
  interrupted = false;
  polls = 0;
  CHECK(ThroughputMatrix::parse(text, "m.json", poll).num_entries() == 3000);
  CHECK(polls >= 2);
  const test::TempDir dir;
  interrupted = true;
  CHECK_THROWS_AS(ThroughputMatrix::load_file(dir.write("m.json", text), poll), Stop);
}

TEST_CASE("Gavel's published throughput matrix loads completely", "[sim][throughput][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const auto m = ThroughputMatrix::load_file(data + "/gavel/simulation_throughputs.json");
  CHECK(m.num_entries() == 492);
  CHECK(m.job_types().size() == 26);
  CHECK(m.device_types() == std::vector<std::string>{"k80", "p100", "v100"});
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "v100", 1) == Approx(4.394774823323071));
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "k80", 1) == Approx(0.6190282202246573));
  CHECK(m.isolated_steps_per_s("ResNet-50 (batch size 64)", "v100", 2, ThroughputMatrix::Placement::kUnconsolidated) == Approx(6.865936825179568));
  const auto pair = m.colocated_steps_per_s("v100", "ResNet-50 (batch size 64)", 1, "LM (batch size 5)", 1);
  REQUIRE(pair);
  CHECK(pair->first == Approx(3.0881783483060685));
  CHECK(pair->second == Approx(37.79526584062318));
  // The interned lookups give every measurement the name lookups give, bit for bit.
  int measured = 0;
  for (const auto& job : m.job_types()) {
    for (const auto& device : m.device_types()) {
      for (int gpus : {1, 2, 3, 4, 8}) {
        for (const auto p : {ThroughputMatrix::Placement::kConsolidated, ThroughputMatrix::Placement::kUnconsolidated}) {
          const auto by_name = m.isolated_steps_per_s(job, device, gpus, p);
          CHECK(m.isolated_steps_per_s(m.job_type_id(job), m.device_type_id(device), gpus, p) == by_name);
          measured += by_name.has_value();
        }
      }
    }
  }
  CHECK(measured == 492);
}

TEST_CASE("the throughput matrix interns job and device types as ids", "[sim][throughput]") {
  const auto m = ThroughputMatrix::parse(R"J({
    "v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.0}, "('LM (batch size 5)', 2)": {"null": 9.0}},
    "k80": {"('ResNet-50 (batch size 64)', 1)": {"null": 0.5}},
    "k80_unconsolidated": {"('LM (batch size 5)', 2)": {"null": 1.5}}})J",
                                         "m.json");
  // Ids are indices into the sorted job_types() and device_types().
  CHECK(m.job_type_id("LM (batch size 5)") == 0);
  CHECK(m.job_type_id("ResNet-50 (batch size 64)") == 1);
  CHECK(m.job_type_id("ResNet-50") == -1);
  CHECK(m.device_type_id("k80") == 0);
  CHECK(m.device_type_id("v100") == 1);
  CHECK(m.device_type_id("V100") == -1);  // exact names, as the name lookups
  CHECK(m.isolated_steps_per_s(1, 1, 1) == 4.0);
  CHECK(m.isolated_steps_per_s(1, 0, 1) == 0.5);
  CHECK(m.isolated_steps_per_s(0, 1, 2) == 9.0);
  CHECK(m.isolated_steps_per_s(0, 0, 2, ThroughputMatrix::Placement::kUnconsolidated) == 1.5);
  CHECK_FALSE(m.isolated_steps_per_s(0, 0, 2));  // consolidated not measured
  CHECK_FALSE(m.isolated_steps_per_s(1, 1, 2));
  CHECK_FALSE(m.isolated_steps_per_s(-1, 1, 1));
  CHECK_FALSE(m.isolated_steps_per_s(2, 1, 1));
  CHECK_FALSE(m.isolated_steps_per_s(1, 2, 1));
}
