#include <catch2/catch.hpp>

#include "policies/registry.hpp"
#include "base/error.hpp"

using namespace schedsim;

TEST_CASE("the registry lists every builtin policy with a description", "[policies]") {
  const PolicyRegistry r = builtin_policies();
  CHECK(r.names() == std::vector<std::string>{"fifo", "sjf", "srtf", "las", "edf", "priority", "compose", "slurm-easy", "tiresias", "volcano-binpack", "gittins", "fair-share", "themis", "elastic-goodput", "gandiva", "carbon-aware", "price-aware", "spatial", "spatio-temporal", "inference", "fgd", "gavel", "thermal-aware", "tiresias-dlas", "tiresias-dlas-gpu", "tiresias-fifo-yarn", "round_fifo", "gavel-fifo-perf", "gavel-las", "rounds", "slurm", "pai-reservation", "singularity", "kubernetes", "queue-tree", "volcano", "yunikorn"});
  for (const auto& p : r.all()) CHECK_FALSE(p.description.empty());
}

TEST_CASE("policies are built from a name or a map, options checked", "[policies]") {
  const PolicyRegistry r = builtin_policies();
  PolicyInstance sjf = r.create(ConfigNode::load_string("{name: sjf, by: duration}", "p.yaml"));
  CHECK(sjf.policy->name() == "sjf");
  CHECK(sjf.resolved["by"].as<std::string>() == "duration");
  CHECK(r.create("sjf").resolved["by"].as<std::string>() == "auto");  // default filled in
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: sjf, by: size}", "p.yaml")),
                    "p.yaml:1: by: 'size' is not allowed; choose one of: auto, duration, estimate");
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fifo, by: duration}", "p.yaml")),
                    Catch::Contains("unknown key 'by'; valid keys here: name"));
  CHECK_THROWS_WITH(r.create("lottery"), Catch::Contains("unknown policy 'lottery'; registered policies: fifo, sjf, srtf, las, edf, priority, compose, slurm-easy, tiresias, volcano-binpack, gittins, fair-share, themis"));
}
