// Training killed mid-run (SIGKILL, no chance to clean up) and resumed with --resume gives
// the same learning curve and the same exported policy as an uninterrupted run
// (single-threaded): the checkpoint holds the network, optimizer, RNG and progress, and
// the resumed run drops the curve rows written after the checkpoint.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/test_support.hpp"

namespace fs = std::filesystem;
using schedsim::test::TempDir;

namespace {

pid_t start_training(const std::string& out, bool resume) {
  const std::string config = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/rl_train.yaml";
  std::vector<std::string> args = {SCHEDSIM_EXE, "train", config, "--quiet", "--out", out};
  for (const char* s : {"workload.synthetic.num_jobs=30", "train.total_steps=600", "train.num_envs=2", "train.eval_episodes=2", "train.eval_every=0",
                        "train.minibatch=64", "train.hidden=[16]", "train.checkpoint_every=100", "train.threads=1", "train.input_baseline=0"}) {
    args.emplace_back("--set");
    args.emplace_back(s);
  }
  if (resume) args.emplace_back("--resume");
  return schedsim::test::spawn_process(args);
}

int wait_exit(pid_t pid) { return schedsim::test::wait_process(pid); }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("training killed after a checkpoint resumes to the uninterrupted run's results", "[rl][train][resume]") {
  TempDir dir;
  const std::string whole = dir.path("whole"), killed = dir.path("killed");
  REQUIRE(wait_exit(start_training(whole, false)) == 0);

  const pid_t pid = start_training(killed, false);
  bool checkpointed = false;
  for (int i = 0; i < 3000 && !checkpointed; ++i) {
    checkpointed = fs::exists(killed + "/checkpoint.pt");
    if (!checkpointed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(checkpointed);
  REQUIRE(WIFSIGNALED(status));                      // killed mid-run,
  REQUIRE_FALSE(fs::exists(killed + "/policy.ts"));  // before the end
  const std::string at_kill = slurp(killed + "/learning_curve.csv");
  const std::string expected = slurp(whole + "/learning_curve.csv");
  CHECK(at_kill.size() < expected.size());

  REQUIRE(wait_exit(start_training(killed, true)) == 0);
  CHECK(slurp(killed + "/learning_curve.csv") == expected);
  CHECK(slurp(killed + "/learning_curve.jsonl") == slurp(whole + "/learning_curve.jsonl"));
  CHECK(slurp(killed + "/policy.ts") == slurp(whole + "/policy.ts"));
}
