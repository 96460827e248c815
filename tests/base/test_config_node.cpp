#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include "base/config_node.hpp"
#include "base/error.hpp"
#include "base/file_checks.hpp"
#include "world/physics/throughput_matrix.hpp"
#include "test_support.hpp"

using namespace schedsim;

TEST_CASE("config errors name the file, the line and the key", "[sim][config]") {
  const ConfigNode root = ConfigNode::load_string("a:\n  b: 3\n  c: hello\n  d: -2\n  e: .nan\n", "x.yaml");
  CHECK(root.child("a").child("b").as_positive_int() == 3);
  CHECK_THROWS_WITH(root.child("a").child("c").as_int(), "x.yaml:3: a.c: expected an integer, got 'hello'");
  CHECK_THROWS_WITH(root.child("a").child("d").as_positive_int(), "x.yaml:4: a.d: must be a positive integer, got '-2'");
  CHECK_THROWS_WITH(root.child("a").child("e").as_double(), "x.yaml:5: a.e: expected a finite number, got '.nan'");
  CHECK_THROWS_WITH(root.child("a").child("zz"), Catch::Contains("x.yaml:2: a: missing required key 'zz'"));
  CHECK_THROWS_WITH(root.child("a").child("b").as_choice({"x", "y"}), Catch::Contains("'3' is not allowed; choose one of: x, y"));
}

TEST_CASE("unknown keys are rejected with the valid ones and a suggestion", "[sim][config]") {
  const ConfigNode root = ConfigNode::load_string("num_job: 5\n", "y.yaml");
  CHECK_THROWS_WITH(root.expect_map({"num_jobs", "arrival"}),
                    "y.yaml:1: unknown key 'num_job' (did you mean 'num_jobs'?); valid keys here: num_jobs, arrival");
  const ConfigNode far = ConfigNode::load_string("zzzzzz: 5\n", "y.yaml");
  CHECK_THROWS_WITH(far.expect_map({"num_jobs"}), "y.yaml:1: unknown key 'zzzzzz'; valid keys here: num_jobs");
}

TEST_CASE("YAML syntax errors name the line", "[sim][config]") {
  CHECK_THROWS_WITH(ConfigNode::load_string("a: [1, 2\nb: 3\n", "bad.yaml"), Catch::StartsWith("bad.yaml:"));
  CHECK_THROWS_WITH(ConfigNode::load_file("/nonexistent/c.yaml"), "/nonexistent/c.yaml: cannot open the config file (does it exist?)");
}

TEST_CASE("command-line overrides replace and create keys, including list items", "[sim][config]") {
  ConfigNode root = ConfigNode::load_string("w:\n  n: 1\nlist:\n  - {count: 1}\n  - {count: 2}\n", "z.yaml");
  YAML::Node doc = root.yaml();
  apply_override(doc, "w.n=500");
  apply_override(doc, "w.new.deep=abc");
  apply_override(doc, "list.1.count=8");
  apply_override(doc, "p={name: sjf, by: duration}");
  CHECK(root.child("w").child("n").as_int() == 500);
  CHECK(root.child("w").child("new").child("deep").as_string() == "abc");
  CHECK(root.child("list").at(1).child("count").as_int() == 8);
  CHECK(root.child("list").at(0).child("count").as_int() == 1);
  CHECK(root.child("p").child("by").as_string() == "duration");
  CHECK_THROWS_WITH(apply_override(doc, "list.5.count=1"), Catch::Contains("'5' is not a valid index into a list of 2"));
  CHECK_THROWS_WITH(apply_override(doc, "novalue"), Catch::Contains("expected KEY.PATH=VALUE"));
  CHECK_THROWS_WITH(apply_override(doc, "w.n.x=1"), Catch::Contains("not a map"));
  // Values from --set have no line; messages still name the key.
  CHECK_THROWS_WITH(root.child("w").child("new").child("deep").as_int(), "z.yaml: w.new.deep: expected an integer, got 'abc'");
}

TEST_CASE("relative paths resolve against the config file folder but --set paths against the working dir", "[sim][config]") {
  schedsim::test::TempDir dir;
  ConfigNode root = ConfigNode::load_file(dir.write("c.yaml", "p: data/x.csv\nq: /abs/y.csv\n"));
  CHECK(root.child("p").as_path() == dir.path() + "/data/x.csv");
  CHECK(root.child("q").as_path() == "/abs/y.csv");
  YAML::Node doc = root.yaml();
  apply_override(doc, "p=mine.csv");
  CHECK(root.child("p").as_path() == "mine.csv");
  const ConfigNode s = ConfigNode::load_string("p: data/x.csv\n", "inline");
  CHECK(s.child("p").as_path() == "data/x.csv");
}

// Issue 22 (reliability): what the YAML reader would otherwise accept silently.
namespace {
// Sets SCHEDSIM_DATA (or unsets it, for nullptr) for one test and restores it after.
class DataEnv {
 public:
  explicit DataEnv(const char* value) {
    if (const char* old = std::getenv("SCHEDSIM_DATA")) old_ = old;
    value ? ::setenv("SCHEDSIM_DATA", value, 1) : ::unsetenv("SCHEDSIM_DATA");
  }
  ~DataEnv() { old_ ? ::setenv("SCHEDSIM_DATA", old_->c_str(), 1) : ::unsetenv("SCHEDSIM_DATA"); }

 private:
  std::optional<std::string> old_;
};
}  // namespace

TEST_CASE("$SCHEDSIM_DATA/ paths resolve under the data folder that SCHEDSIM_DATA names", "[sim][config][data-dir]") {
  schedsim::test::TempDir data, conf;
  std::filesystem::create_directories(data.path("carbon"));
  data.write("carbon/x.csv", "t,v\n");
  const DataEnv env(data.path().c_str());
  const ConfigNode root = ConfigNode::load_file(conf.write("c.yaml", "p: $SCHEDSIM_DATA/carbon/x.csv\nq: {file: $SCHEDSIM_DATA/carbon/x.csv}\n"));
  CHECK(root.child("p").as_path() == data.path() + "/carbon/x.csv");
  CHECK(root.child("q").child("file").as_path() == data.path() + "/carbon/x.csv");
  // --set values and Python dicts use the same rule (they have no folder of their own).
  CHECK(ConfigNode::load_string("p: $SCHEDSIM_DATA/carbon/x.csv\n", "inline").child("p").as_path() == data.path() + "/carbon/x.csv");
  // A trailing slash in the setting is not doubled.
  const DataEnv slash((data.path() + "/").c_str());
  CHECK(root.child("p").as_path() == data.path() + "/carbon/x.csv");
}

TEST_CASE("a missing data folder or data file names the setting and the path tried", "[sim][config][data-dir]") {
  schedsim::test::TempDir data, conf;
  const ConfigNode root = ConfigNode::load_file(conf.write("c.yaml", "p: $SCHEDSIM_DATA/carbon/x.csv\n"));
  const std::string c = conf.path("c.yaml");
  {
    const DataEnv env("/nonexistent/data");
    CHECK_THROWS_WITH(root.child("p").as_path(), c + ":1: p: $SCHEDSIM_DATA/carbon/x.csv: the data folder /nonexistent/data (from SCHEDSIM_DATA or --data-dir) does not exist or is not a folder");
  }
  {
    const DataEnv env(data.path().c_str());
    CHECK_THROWS_WITH(root.child("p").as_path(), c + ":1: p: $SCHEDSIM_DATA/carbon/x.csv: " + data.path() + "/carbon/x.csv does not exist (data folder " + data.path() +
                                                     ", from SCHEDSIM_DATA or --data-dir)");
  }
  {
    const DataEnv env("");
    CHECK_THROWS_WITH(root.child("p").as_path(), "SCHEDSIM_DATA: is set but empty; set it (or --data-dir DIR) to the folder holding the shared data, or unset it for the default");
  }
  {
    const DataEnv env(nullptr);  // the default: ../shared/data beside the checkout
    CHECK(DataFolder::from_environment().path == std::filesystem::path(SCHEDSIM_SOURCE_DIR "/../shared/data").lexically_normal().string());
  }
}

TEST_CASE("a key given twice in a map is an error naming both lines", "[sim][config][reliability]") {
  CHECK_THROWS_WITH(ConfigNode::load_string("policy: fifo\npolicy: sjf\n", "x.yaml"),
                    "x.yaml:2: duplicate key 'policy' (first given on line 1); a key may appear only once in a map");
  CHECK_THROWS_WITH(ConfigNode::load_string("workload:\n  synthetic:\n    num_jobs: 5\n    num_jobs: 6\n", "x.yaml"),
                    "x.yaml:4: workload.synthetic: duplicate key 'num_jobs' (first given on line 3); a key may appear only once in a map");
  CHECK_THROWS_WITH(ConfigNode::load_string("l:\n  - {k: 1}\n  - {k: 1, k: 2}\n", "x.yaml"),
                    "x.yaml:3: l[1]: duplicate key 'k' (first given on line 3); a key may appear only once in a map");
  // The same key in two different maps, and an alias used twice, are fine.
  CHECK_NOTHROW(ConfigNode::load_string("a: {k: 1}\nb: {k: 2}\nc: &x {k: 3}\nd: [*x, *x]\n", "x.yaml"));
}

TEST_CASE("a second YAML document is an error, not ignored", "[sim][config][reliability]") {
  const std::string msg = ": a second YAML document starts here ('---'); schedsim reads one document per file and would ignore the rest: "
                          "remove the '---' line or split the file";
  CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\n---\nb: 2\n", "x.yaml"), "x.yaml:2" + msg);
  CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\nc: 3\n---\n", "x.yaml"), "x.yaml:3" + msg);
  CHECK_NOTHROW(ConfigNode::load_string("---\na: 1\n...\n", "x.yaml"));  // one explicit document
}

TEST_CASE("fuzz regression: a malformed text after the first document is one error, not endless documents", "[sim][config][reliability][fuzz-regression]") {
  // tests/fuzz/regressions/config/oom-loadall-endless-documents.yaml: YAML::LoadAll kept
  // producing empty documents for this text until memory ran out (24 GB, then SIGKILL).
  const std::string text = schedsim::test::read_file(std::string(SCHEDSIM_SOURCE_DIR) + "/tests/fuzz/regressions/config/oom-loadall-endless-documents.yaml");
  CHECK_THROWS_WITH(ConfigNode::load_string(text, "x.yaml"),
                    "x.yaml:2: the YAML document ends before this line and more text follows, which schedsim would ignore; check the indentation and brackets above");
}

TEST_CASE("integers with a leading zero or a base prefix are rejected, not read as octal", "[sim][config][reliability]") {
  const ConfigNode root = ConfigNode::load_string("a: 0100\nb: -012\nc: 09\nd: 0x10\ne: 0o17\nf: 0\ng: -0\nh: 00\ni: +7\nj: 0b\n", "x.yaml");
  CHECK_THROWS_WITH(root.child("a").as_int(), "x.yaml:1: a: '0100' has a leading zero (octal in YAML 1.1); write 100");
  CHECK_THROWS_WITH(root.child("b").as_int(), "x.yaml:2: b: '-012' has a leading zero (octal in YAML 1.1); write -12");
  CHECK_THROWS_WITH(root.child("c").as_positive_int(), "x.yaml:3: c: '09' has a leading zero (octal in YAML 1.1); write 9");
  CHECK_THROWS_WITH(root.child("d").as_int(), "x.yaml:4: d: '0x10' is not a decimal integer (hexadecimal prefixes are not read); write 16");
  CHECK_THROWS_WITH(root.child("e").as_int(), "x.yaml:5: e: '0o17' is not a decimal integer (octal prefixes are not read); write 15");
  CHECK(root.child("f").as_int() == 0);
  CHECK(root.child("g").as_int() == 0);
  CHECK_THROWS_WITH(root.child("h").as_int(), "x.yaml:8: h: '00' has a leading zero (octal in YAML 1.1); write 0");
  CHECK(root.child("i").as_int() == 7);
  CHECK_THROWS_WITH(root.child("j").as_int(), "x.yaml:10: j: '0b' is not a decimal integer (binary prefixes are not read); write the number in decimal");
  std::int64_t v = 0;
  CHECK(parse_decimal_int("9223372036854775807", v).empty());
  CHECK(v == 9223372036854775807LL);
  CHECK(parse_decimal_int("-9223372036854775808", v).empty());
  CHECK(v == std::numeric_limits<std::int64_t>::min());
  CHECK(parse_decimal_int("9223372036854775808", v) == "expected an integer, got '9223372036854775808'");
  CHECK(parse_decimal_int("1e3", v) == "expected an integer, got '1e3'");
}

TEST_CASE("seeds are 0 .. 2^63-1 wherever they are read", "[sim][config][reliability]") {
  std::uint64_t s = 0;
  CHECK(parse_seed("9223372036854775807", s).empty());
  CHECK(s == kMaxSeed);
  CHECK(parse_seed("0", s).empty());
  CHECK(s == 0);
  const std::string range = "must be an integer in 0..9223372036854775807 (2^63-1), got ";
  CHECK(parse_seed("-1", s) == range + "'-1'");
  CHECK(parse_seed("9223372036854775808", s) == range + "'9223372036854775808'");
  CHECK(parse_seed("18446744073709551616", s) == range + "'18446744073709551616'");
  CHECK(parse_seed("010", s) == "'010' has a leading zero (octal in YAML 1.1); write 10");
  CHECK(parse_seed("abc", s) == "expected an integer, got 'abc'");
  const ConfigNode root = ConfigNode::load_string("seed: -1\nbig: 9223372036854775808\n", "x.yaml");
  CHECK_THROWS_WITH(root.child("seed").as_seed(), "x.yaml:1: seed: " + range + "'-1'");
  CHECK_THROWS_WITH(root.child("big").as_seed(), "x.yaml:2: big: " + range + "'9223372036854775808'");
}

TEST_CASE("control characters in strings are rejected, naming the key", "[sim][config][reliability]") {
  const ConfigNode root = ConfigNode::load_string("p: \"jobs\\0.csv\"\nn: \"a\\nb\"\nt: \"a\\tb\"\nd: \"x\\x7f\"\ne: \"\\e\"\n", "x.yaml");
  CHECK_THROWS_WITH(root.child("p").as_path(), "x.yaml:1: p: the value contains a NUL character (\\0) at character 5; control characters are not allowed in names and paths");
  CHECK_THROWS_WITH(root.child("n").as_string(), "x.yaml:2: n: the value contains a line break (\\n) at character 2; control characters are not allowed in names and paths");
  CHECK(root.child("t").as_string() == "a\tb");  // a tab is a CSV delimiter
  CHECK_THROWS_WITH(root.child("t").as_path(), "x.yaml:3: t: the path contains a tab at character 2; control characters are not allowed in paths");
  CHECK_THROWS_WITH(root.child("d").as_string(), "x.yaml:4: d: the value contains the control character 0x7F at character 2; control characters are not allowed in names and paths");
  CHECK_THROWS_WITH(root.child("e").as_string(), "x.yaml:5: e: the value contains the control character 0x1B at character 1; control characters are not allowed in names and paths");
  // Keys too: a NUL in a key would print as nothing.
  const ConfigNode keyed = ConfigNode::load_string("m:\n  \"a\\0b\": 1\n", "x.yaml");
  CHECK_THROWS_WITH(keyed.child("m").keys(), "x.yaml:2: m: a key contains a NUL character (\\0) at character 2; control characters are not allowed in names and paths");
  CHECK_THROWS_WITH(keyed.child("m").expect_map({"ab"}), "x.yaml:2: m: a key contains a NUL character (\\0) at character 2; control characters are not allowed in names and paths");
}

TEST_CASE("keys that are not names are described, with their line", "[sim][config][reliability]") {
  const ConfigNode root = ConfigNode::load_string("a: 1\n~: 2\n", "x.yaml");
  CHECK_THROWS_WITH(root.expect_map({"a", "b"}), "x.yaml:2: map keys must be plain names, got a null key (~, null or nothing before the colon); valid keys here: a, b");
  const ConfigNode list_key = ConfigNode::load_string("m:\n  [1, 2]: 3\n", "x.yaml");
  CHECK_THROWS_WITH(list_key.child("m").expect_map({"a"}), "x.yaml:2: m: map keys must be plain names, got a list used as a key; valid keys here: a");
  CHECK_THROWS_WITH(list_key.child("m").keys(), "x.yaml:2: m: map keys must be plain names, got a list used as a key");
  const ConfigNode map_key = ConfigNode::load_string("? {x: 1}\n: 3\n", "x.yaml");
  CHECK_THROWS_WITH(map_key.expect_map({"a"}), "x.yaml:1: map keys must be plain names, got a map used as a key; valid keys here: a");
}

TEST_CASE("a bad --set value names the --set option, not the file", "[sim][config][reliability]") {
  const ConfigNode root = ConfigNode::load_string("w:\n  n: 1\np: fifo\nlist:\n  - {count: 1}\n", "z.yaml");
  YAML::Node doc = root.yaml();
  std::vector<ConfigNode::Override> applied;
  for (const std::string o : {"w.n=abc", "p={name: sjf, by: 0x1}", "list.0.count=010"}) applied.push_back({apply_override(doc, o), o});
  const ConfigNode with = root.with_overrides(applied);
  CHECK_THROWS_WITH(with.child("w").child("n").as_int(), "--set w.n=abc: expected an integer, got 'abc'");
  CHECK_THROWS_WITH(with.child("p").child("by").as_int(), "--set p={name: sjf, by: 0x1}: p.by: '0x1' is not a decimal integer (hexadecimal prefixes are not read); write 1");
  CHECK_THROWS_WITH(with.child("list").at(0).child("count").as_int(), "--set list.0.count=010: '010' has a leading zero (octal in YAML 1.1); write 10");
  // Values of the file keep their line.
  CHECK_THROWS_WITH(with.child("list").at(0).expect_map({"x"}), Catch::StartsWith("z.yaml:5: list[0]: unknown key 'count'"));
  // The value's own YAML is checked too, and a huge list index is an error, not std::stoul's exception.
  CHECK_THROWS_WITH(apply_override(doc, "p={name: fifo, name: sjf}"), "--set p={name: fifo, name: sjf}: duplicate key 'name'; a key may appear only once in a map");
  CHECK_THROWS_WITH(apply_override(doc, "list.99999999999999999999.count=1"), "--set list.99999999999999999999.count=1: '99999999999999999999' is not a valid index into a list of 1");
  CHECK_THROWS_WITH(apply_override(doc, "w.=1"), "--set w.=1: empty component in key path 'w.'");
}

TEST_CASE("a config path that is a folder says so", "[sim][config][reliability]") {
  schedsim::test::TempDir dir;
  std::filesystem::create_directories(dir.path("sub"));
  dir.write("sub/x.yaml", "a: 1\n");
  CHECK_THROWS_WITH(ConfigNode::load_file(dir.path("sub")), dir.path("sub") + ": is a directory, not a config file");
  CHECK_THROWS_WITH(ConfigNode::load_file(dir.path("sub/x.yaml/y")), dir.path("sub/x.yaml/y") + ": cannot open the config file (does it exist?)");
  // The same check for the other files a scenario names.
  CHECK_THROWS_WITH(ThroughputMatrix::load_file(dir.path("sub")), dir.path("sub") + ": is a directory, not a throughput matrix");
  CHECK(file_open_problem(dir.path("sub/x.yaml"), "config file").empty());
  // A file far larger than any scenario is refused before it is read (a sparse file: no disk used).
  const std::string big = dir.write("big.yaml", "a: 1\n");
  std::filesystem::resize_file(big, 300ull * 1024 * 1024);
  CHECK_THROWS_WITH(ConfigNode::load_file(big), big + ": the config file is 300 MiB, more than the 256 MiB schedsim reads (docs/config.md#limits); is this a scenario?");
}
