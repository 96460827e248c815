// The settlement ledger: SHA-256 against the standard vectors, a run's ledger against its
// results.json, and every single-field edit caught by verification.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>

#include "experiments/ledger.hpp"
#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "experiments/sha256.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors", "[experiments][ledger]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1'000'000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Fed in pieces across block boundaries: the same digest.
  Sha256 s;
  const std::string text(200, 'x');
  for (std::size_t i = 0; i < text.size(); i += 7) s.update(std::string_view(text).substr(i, 7));
  const auto digest = s.finish();
  CHECK(static_cast<int>(digest[0]) == std::stoi(sha256_hex(text).substr(0, 2), nullptr, 16));
}

namespace {

// Two tenants on two providers' datacenters, with energy, price and carbon signals, and a
// spot offer that is reclaimed part of the time.
const char* kScenario = R"(seed: 3
datacenters:
  sites:
    - name: DE-LU
      provider: cloud-a
      nodes: [{count: 2, type: A100-80GB, devices_per_node: 4}]
      signals: {price: 80, carbon: 300}
    - name: SG
      provider: cloud-b
      pue: 1.3
      nodes: [{count: 1, type: V100, devices_per_node: 4}]
      signals: {price: 120, carbon: 500}
energy: {}
market:
  offers:
    - {datacenter: DE-LU, type: A100-80GB, on_demand_usd_h: 3.2, reserved: {devices: 2, usd_h: 2.0},
       spot: {devices: 4, usd_h: 1.1, availability: {model: on_off, mean_up_h: 1, mean_down_h: 0.5, fraction_reclaimed: 0.5}}}
    - {datacenter: SG, type: V100, on_demand_usd_h: 1.5}
workload: {trace: {path: jobs.csv, format: schedsim}}
policy: spatial
)";

std::string jobs_csv() {
  // Every eighth job takes half a device (gpu_milli 500).
  std::string s = "job_id,submit_time_s,num_gpus,duration_s,user,gpu_milli\n";
  for (int i = 0; i < 30; ++i) {
    s += "j" + std::to_string(i) + "," + std::to_string(i * 600) + "," + std::to_string(1 + i % 4) + "," + std::to_string(1800 + 300 * (i % 7)) + "," +
         (i % 3 == 0 ? "alice" : i % 3 == 1 ? "bob" : "\"carol,inc\"") + "," + (i % 8 == 0 ? "500" : "1000") + "\n";
  }
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("the ledger's totals equal results.json and every edited field fails verification", "[experiments][ledger][market]") {
  TempDir dir;
  dir.write("jobs.csv", jobs_csv());
  const std::string config = dir.write("run.yaml", kScenario);
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(config, {}, std::nullopt, reg);
  RunOptions options{dir.path("out")};
  options.check_invariants = true;
  run_scenario(s, reg, options);
  const auto results = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  const std::string ledger = read_file(dir.path("out/ledger.csv"));

  const LedgerCheck ok = verify_ledger(ledger, "ledger.csv");
  INFO(ok.problem);
  REQUIRE(ok.ok);
  const auto& m = results["market"];
  // 3 tenants x 2 providers, all used.
  CHECK(ok.totals.rows == 6);
  CHECK(m["ledger"]["rows"].get<std::size_t>() == ok.totals.rows);
  // Exactly: the rows are written with 17 digits and summed in the same order.
  CHECK(ok.totals.compute_usd == m["compute_usd"].get<double>());
  CHECK(ok.totals.device_h == m["device_hours"].get<double>());
  CHECK(ok.totals.compute_usd == m["ledger"]["compute_usd"].get<double>());
  CHECK(ok.totals.energy_kwh == m["ledger"]["energy_kwh"].get<double>());
  CHECK(ok.totals.electricity_usd == m["ledger"]["electricity_usd"].get<double>());
  CHECK(ok.totals.co2_kg == m["ledger"]["co2_kg"].get<double>());
  // The jobs' energy, electricity cost and emissions are the energy meter's (summed in
  // another order, so to rounding).
  const auto& jobs = results["energy"]["jobs"];
  CHECK(ok.totals.energy_kwh == Approx(jobs["energy_kwh"].get<double>()).epsilon(1e-12));
  CHECK(ok.totals.electricity_usd == Approx(jobs["cost_usd"].get<double>()).epsilon(1e-12));
  CHECK(ok.totals.co2_kg == Approx(jobs["co2_kg"].get<double>()).epsilon(1e-12));
  CHECK(ok.totals.energy_kwh > 0);
  // Compute cost adds up over kinds, providers and tenants.
  double kinds = 0, providers = 0, tenants = 0;
  for (const auto& [k, v] : m["by_kind"].items()) kinds += v["compute_usd"].get<double>();
  for (const auto& p : m["by_provider"]) providers += p["compute_usd"].get<double>();
  for (const auto& t : m["by_tenant"]) tenants += t["compute_usd"].get<double>();
  CHECK(kinds == Approx(ok.totals.compute_usd).epsilon(1e-12));
  CHECK(providers == Approx(ok.totals.compute_usd).epsilon(1e-12));
  CHECK(tenants == Approx(ok.totals.compute_usd).epsilon(1e-12));
  // Device-hours are the device-time jobs held, which the summary counts too.
  CHECK(m["device_hours"].get<double>() == Approx(results["summary"]["allocated_gpu_hours"].get<double>()).epsilon(1e-9));
  CHECK(m["spot_reclamations"].get<int>() > 0);
  CHECK(m["by_kind"]["spot"]["device_hours"].get<double>() > 0);
  // The seed of the chain is the resolved config's hash.
  const auto lines = lines_of(ledger);
  CHECK(lines[0].find("config_sha256=") != std::string::npos);

  // Every field of every row, edited alone, fails naming that row's line.
  for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string body = line.substr(0, line.size() - 130);
    // Field boundaries of the body (the tenant may be quoted and hold a comma).
    std::vector<std::pair<std::size_t, std::size_t>> fields;
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t k = 0; k <= body.size(); ++k) {
      if (k < body.size() && body[k] == '"') quoted = !quoted;
      if (k == body.size() || (body[k] == ',' && !quoted)) {
        fields.emplace_back(start, k);
        start = k + 1;
      }
    }
    REQUIRE(fields.size() == 7);
    for (const auto& [a, b] : fields) {
      std::vector<std::string> edited = lines;
      edited[i] = line.substr(0, a) + (b > a && line[a] == '9' ? "8" : "9") + line.substr(a + (b > a ? 1 : 0));
      const LedgerCheck bad = verify_ledger(join(edited), "ledger.csv");
      CHECK_FALSE(bad.ok);
      CHECK(bad.problem == "ledger.csv:" + std::to_string(i + 1) + ": row " + std::to_string(i - 1) + ": row_hash does not match the row's contents (the row was edited)");
    }
  }
  // A removed row breaks the chain at the next one (or the closing line after the last).
  std::vector<std::string> removed = lines;
  removed.erase(removed.begin() + 3);
  CHECK_THAT(verify_ledger(join(removed), "ledger.csv").problem, Catch::Contains("ledger.csv:4: row 2: prev_hash is not the previous row's row_hash"));
  std::vector<std::string> cut(lines.begin(), lines.end() - 2);
  CHECK_THAT(verify_ledger(join(cut), "ledger.csv").problem, Catch::Contains("the closing '# end; rows=N; last_hash=...' line is missing"));
  std::vector<std::string> header = lines;
  header[0].back() = header[0].back() == '0' ? '1' : '0';  // another config hash
  CHECK_THAT(verify_ledger(join(header), "ledger.csv").problem, Catch::Contains("ledger.csv:3: row 1: prev_hash is not the previous row's row_hash"));
}

TEST_CASE("the same seed gives a byte-identical ledger and another seed another one", "[experiments][ledger][market][determinism]") {
  TempDir dir;
  dir.write("jobs.csv", jobs_csv());
  const std::string config = dir.write("run.yaml", kScenario);
  const PolicyRegistry reg = builtin_policies();
  for (const char* out : {"a", "b"}) run_scenario(load_scenario(config, {}, std::nullopt, reg), reg, RunOptions{dir.path(out)});
  run_scenario(load_scenario(config, {}, std::uint64_t{4}, reg), reg, RunOptions{dir.path("c")});
  CHECK(read_file(dir.path("a/ledger.csv")) == read_file(dir.path("b/ledger.csv")));
  CHECK(read_file(dir.path("a/results.json")) == read_file(dir.path("b/results.json")));
  // Another seed: other spot periods (and another config hash, the chain's seed).
  CHECK(read_file(dir.path("a/ledger.csv")) != read_file(dir.path("c/ledger.csv")));
}

TEST_CASE("no market, no ledger; the outputs are those of before", "[experiments][ledger][market]") {
  TempDir dir;
  dir.write("jobs.csv", jobs_csv());
  std::string scenario = kScenario;
  scenario = scenario.substr(0, scenario.find("market:")) + scenario.substr(scenario.find("workload:"));
  const std::string config = dir.write("run.yaml", scenario);
  const PolicyRegistry reg = builtin_policies();
  run_scenario(load_scenario(config, {}, std::nullopt, reg), reg, RunOptions{dir.path("out")});
  CHECK(dir.files() == std::vector<std::string>{"jobs.csv", "out/jobs.csv", "out/results.json", "run.yaml"});
  const auto results = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  CHECK_FALSE(results.contains("market"));
  CHECK(results["config"]["datacenters"]["sites"][0]["provider"] == "cloud-a");
  CHECK(results["config"]["datacenters"]["sites"][1]["provider"] == "cloud-b");
}

TEST_CASE("a ledger file that is not one is rejected with the reason", "[experiments][ledger]") {
  CHECK_THAT(verify_ledger("a,b\n1,2\n", "x.csv").problem, Catch::Contains("x.csv:1: not a schedsim settlement ledger"));
  TempDir dir;
  CHECK_THROWS_WITH(verify_ledger_file(dir.path("nothere.csv")), Catch::Contains("cannot open the ledger"));
  CHECK_THROWS_WITH(verify_ledger_file(dir.path()), dir.path() + ": is a directory, not a ledger");  // not "an empty ledger"
  const std::string empty = ledger_csv({}, std::string(64, '0'));
  const LedgerCheck c = verify_ledger(empty, "empty.csv");
  CHECK(c.ok);
  CHECK(c.totals.rows == 0);
  SettlementRow bad;
  bad.tenant = "a\nb";
  CHECK_THROWS_WITH(ledger_csv({bad}, std::string(64, '0')), Catch::Contains("holds a line break"));
}
