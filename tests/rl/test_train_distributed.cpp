// `schedsim train` as several processes on 127.0.0.1 (c10d, Gloo): two ranks with two
// environments each follow the learning curve of one process with four, only rank 0
// writes, a rank that dies makes the run fail with a message naming it (never a hang:
// train.dist_timeout_s bounds every wait), and bad launch settings are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "run/runner.hpp"
#include "rl/distributed.hpp"
#include "rl/learner.hpp"
#include "rl/train_command.hpp"
#include "tests/test_support.hpp"

namespace fs = std::filesystem;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

const std::string kConfig = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/rl_train.yaml";
const std::vector<std::string> kSmall = {"workload.synthetic.num_jobs=30", "train.total_steps=1000", "train.num_envs=4",
                                         "train.eval_episodes=2",          "train.eval_every=500",   "train.minibatch=64",
                                         "train.hidden=[16]",              "train.checkpoint_every=500", "train.threads=1",
                                         "train.dist_timeout_s=20",         "train.input_baseline=0"};

struct Launch {
  std::vector<std::string> args;               // after `schedsim train CONFIG`
  std::map<std::string, std::string> env;      // added to (or, with "", removed from) the environment
  std::string log;                             // stdout + stderr go here
};

std::vector<std::string> train_args(const std::string& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a = {"--quiet", "--out", out};
  for (const auto& s : kSmall) {
    a.emplace_back("--set");
    a.push_back(s);
  }
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

const std::vector<std::string> kDistVariables = {"RANK",         "WORLD_SIZE",   "LOCAL_RANK",    "MASTER_ADDR",
                                                 "MASTER_PORT",  "SLURM_PROCID", "SLURM_NTASKS",  "SLURM_LOCALID",
                                                 "SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE"};

pid_t start(const Launch& l) {
  std::vector<std::string> args = {SCHEDSIM_EXE, "train", kConfig};
  args.insert(args.end(), l.args.begin(), l.args.end());
  return schedsim::test::spawn_process(args, {l.env.begin(), l.env.end()}, l.log, kDistVariables);
}

int wait_exit(pid_t pid) { return schedsim::test::wait_process(pid); }

bool skip_without_c10d() {
  if (schedsim::rl::distributed_available()) return false;
  WARN("skipped: this build has no c10d/Gloo (install libgloo-dev and reconfigure)");
  return true;
}

int run(const Launch& l) { return wait_exit(start(l)); }

std::vector<std::vector<std::string>> csv_cells(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    std::string c;
    while (std::getline(ls, c, ',')) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

// The final network of a run (its checkpoint), flattened.
std::vector<float> final_parameters(const std::string& out) {
  schedsim::PolicyRegistry reg = schedsim::builtin_policies();
  schedsim::rl::register_rl_policy(reg);
  auto scenario = std::make_shared<const schedsim::ScenarioConfig>(schedsim::load_scenario(kConfig, {"workload.synthetic.num_jobs=30"}, std::nullopt, reg));
  const auto env = schedsim::rl::EnvConfig::from_scenario(*scenario);
  schedsim::rl::TrainConfig tc;
  tc.hidden = {16};
  tc.num_envs = 1;
  schedsim::rl::Learner learner(tc, [&](int n) { return schedsim::rl::make_vector_batch_env(scenario, env, n, 1); });
  learner.load_checkpoint(out + "/checkpoint.pt");
  return learner.flat_parameters();
}

}  // namespace

TEST_CASE("Two ranks of two environments train like one process of four", "[rl][train][dist]") {
  if (skip_without_c10d()) return;
  TempDir dir;
  const std::string one = dir.path("one"), two = dir.path("two");
  REQUIRE(run({train_args(one), {}, dir.path("one.log")}) == 0);
  const int rc = run({train_args(two, {"--nproc", "2"}), {}, dir.path("two.log")});
  INFO(read_file(dir.path("two.log")));
  REQUIRE(rc == 0);

  // The learning curves: integers equal, every statistic (episode return and JCT, the
  // held-out evaluation, the losses) equal up to floating-point rounding.
  const auto a = csv_cells(one + "/learning_curve.csv"), b = csv_cells(two + "/learning_curve.csv");
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() >= 3);  // the header and an update per 4 whole episodes until 1,000 steps
  CHECK(a[0] == b[0]);
  int evaluations = 0;
  for (std::size_t r = 1; r < a.size(); ++r) {
    REQUIRE(a[r].size() == b[r].size());
    for (std::size_t c = 0; c < a[r].size(); ++c) {
      INFO("row " << r << " column " << a[0][c]);
      if (c < 3 || a[0][c] == "best_heuristic") {
        CHECK(a[r][c] == b[r][c]);  // step, update, episodes; the baseline's name
      } else if (a[r][c].empty()) {
        CHECK(b[r][c].empty());
      } else {
        CHECK(std::stod(b[r][c]) == Approx(std::stod(a[r][c])).epsilon(1e-5).margin(1e-7));
        evaluations += c == 5;
      }
    }
  }
  CHECK(evaluations == 2);  // after the update that crosses 500 steps and at the end

  const std::vector<float> pa = final_parameters(one), pb = final_parameters(two);
  REQUIRE(pa.size() == pb.size());
  double max_diff = 0.0;
  for (std::size_t i = 0; i < pa.size(); ++i) max_diff = std::max(max_diff, static_cast<double>(std::fabs(pa[i] - pb[i])));
  CHECK(max_diff < 1e-5);
  // The same files: the second rank added none (and wrote nothing of its own).
  std::vector<std::string> fa, fb;
  for (const auto& e : fs::directory_iterator(one)) fa.push_back(e.path().filename().string());
  for (const auto& e : fs::directory_iterator(two)) fb.push_back(e.path().filename().string());
  std::sort(fa.begin(), fa.end());
  std::sort(fb.begin(), fb.end());
  CHECK(fa == fb);
}

TEST_CASE("Ranks started by hand: only rank 0 writes, and a dead peer fails the run within the timeout", "[rl][train][dist]") {
  if (skip_without_c10d()) return;
  TempDir dir;
  const std::string out0 = dir.path("rank0"), out1 = dir.path("rank1");
  const std::string port = std::to_string(schedsim::rl::free_local_port());
  auto env = [&](int rank) {
    return std::map<std::string, std::string>{{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                              {"MASTER_PORT", port}, {"SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE", "1"}};
  };
  // Each rank gets its own --out: rank 1 must not create its folder.
  const pid_t r0 = start({train_args(out0, {"--set", "train.dist_timeout_s=5"}), env(0), dir.path("rank0.log")});
  const pid_t r1 = start({train_args(out1, {"--set", "train.dist_timeout_s=5"}), env(1), dir.path("rank1.log")});
  CHECK(wait_exit(r1) == 3);
  CHECK(wait_exit(r0) == 1);
  const std::string log0 = read_file(dir.path("rank0.log"));
  INFO(log0);
  CHECK_THAT(log0, Catch::Contains("rank 0 of 2:") && Catch::Contains("another rank has probably died") &&
                       Catch::Contains("train.dist_timeout_s = 5 s"));
  CHECK(fs::exists(out0 + "/learning_curve.csv"));
  CHECK_FALSE(fs::exists(out0 + "/policy.ts"));  // no complete-looking result
  CHECK_FALSE(fs::exists(out1));
}

TEST_CASE("A rank that dies under --nproc stops the others and names itself", "[rl][train][dist]") {
  if (skip_without_c10d()) return;
  TempDir dir;
  const std::string out = dir.path("out");
  const int rc = run({train_args(out, {"--nproc", "2"}), {{"SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE", "1"}}, dir.path("log")});
  const std::string log = read_file(dir.path("log"));
  INFO(log);
  CHECK(rc == 1);
  CHECK_THAT(log, Catch::Contains("schedsim train --nproc 2: rank 1 of 2 exited with status 3; the other ranks were stopped"));
  CHECK_FALSE(fs::exists(out + "/policy.ts"));
}

TEST_CASE("A rank whose peers never come fails after train.dist_timeout_s", "[rl][train][dist]") {
  if (skip_without_c10d()) return;
  TempDir dir;
  const std::string port = std::to_string(schedsim::rl::free_local_port());
  const int rc = run({train_args(dir.path("out"), {"--set", "train.dist_timeout_s=2"}),
                      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}},
                      dir.path("log")});
  const std::string log = read_file(dir.path("log"));
  INFO(log);
  CHECK(rc == 1);
  CHECK_THAT(log, Catch::Contains("rank 1 of 2: cannot join the process group at 127.0.0.1:" + port + " within train.dist_timeout_s = 2 s"));
  CHECK_FALSE(fs::exists(dir.path("out")));
}

TEST_CASE("The rank variables are read strictly, torchrun's first and Slurm's as a fallback", "[rl][train][dist]") {
  // In process: set the variables, read them, restore the environment.
  auto read = [](const std::map<std::string, std::string>& env) {
    std::map<std::string, std::optional<std::string>> saved;
    for (const auto& name : kDistVariables) {
      const char* v = std::getenv(name.c_str());
      saved[name] = v ? std::optional<std::string>(v) : std::nullopt;
      ::unsetenv(name.c_str());
    }
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::string error;
    schedsim::rl::DistConfig c;
    try {
      c = schedsim::rl::dist_config_from_environment();
    } catch (const std::exception& e) {
      error = e.what();
    }
    for (const auto& [k, v] : saved) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
    return std::make_pair(c, error);
  };
  const std::map<std::string, std::string> master = {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29400"}};
  auto with_master = [&](std::map<std::string, std::string> env) {
    env.insert(master.begin(), master.end());
    return env;
  };

  auto [none, e0] = read({});
  CHECK(e0.empty());
  CHECK((none.world_size == 1 && none.rank == 0 && !none.from_environment));
  auto [tr, e1] = read(with_master({{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"}, {"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "5"}}));
  CHECK(e1.empty());
  CHECK((tr.world_size == 4 && tr.rank == 3 && tr.local_rank == 1 && tr.master_addr == "10.0.0.1" && tr.master_port == 29400));
  auto [sl, e2] = read(with_master({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}}));
  CHECK(e2.empty());
  CHECK((sl.world_size == 8 && sl.rank == 5 && sl.local_rank == 1));
  // Slurm's variables alone (every task of an allocation has them) mean one process.
  auto [alone, e3] = read({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "5"}});
  CHECK(e3.empty());
  CHECK(alone.world_size == 1);

  CHECK_THAT(read({{"WORLD_SIZE", "2"}, {"RANK", "1"}}).second, Catch::Contains("WORLD_SIZE=2: a multi-process run needs MASTER_ADDR and MASTER_PORT"));
  CHECK_THAT(read(with_master({{"WORLD_SIZE", "2"}, {"RANK", "2"}})).second,
             Catch::Contains("environment variable RANK: is 2, must be below WORLD_SIZE (2)"));
  CHECK_THAT(read(with_master({{"WORLD_SIZE", "2"}})).second, Catch::Contains("environment variable RANK: is not set but WORLD_SIZE is 2"));
  CHECK_THAT(read({{"WORLD_SIZE", "two"}}).second, Catch::Contains("environment variable WORLD_SIZE: must be an integer in [1, 1048576], got 'two'"));
  CHECK_THAT(read({{"WORLD_SIZE", "0"}}).second, Catch::Contains("environment variable WORLD_SIZE: must be an integer"));
  CHECK_THAT(read(with_master({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "2"}})).second,
             Catch::Contains("environment variable SLURM_PROCID: is 2, must be below SLURM_NTASKS (2)"));
  CHECK_THAT(read({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}).second,
             Catch::Contains("environment variable MASTER_PORT: must be an integer in [1, 65535], got '70000'"));
}

TEST_CASE("schedsim train refuses bad multi-process settings before training", "[rl][train][dist]") {
  TempDir dir;
  const std::string out = dir.path("out");
  auto fails_with = [&](const std::vector<std::string>& extra, std::map<std::string, std::string> env, const std::string& message) {
    INFO(message);
    const int rc = run({train_args(out, extra), std::move(env), dir.path("log")});
    const std::string log = read_file(dir.path("log"));
    INFO(log);
    CHECK(rc == 1);
    CHECK_THAT(log, Catch::Contains(message));
  };
  fails_with({}, {{"WORLD_SIZE", "2"}, {"RANK", "1"}}, "schedsim: error: WORLD_SIZE=2: a multi-process run needs MASTER_ADDR and MASTER_PORT");
  fails_with({"--nproc", "3"}, {{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29999"}},
             "--nproc 3: conflicts with WORLD_SIZE=2");
  if (schedsim::rl::distributed_available())
    fails_with({"--nproc", "3"}, {}, "train.num_envs: is 4, not divisible by the 3 processes");
  CHECK_FALSE(fs::exists(out));
}
