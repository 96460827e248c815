#include <catch2/catch.hpp>

#include "sim/config_node.hpp"
#include "sim/error.hpp"
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
