// The settlement ledger: SHA-256 against the standard vectors, a run's ledger against its
// results.json, and every single-field edit caught by verification.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run/ledger.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/sha256.hpp"
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

TEST_CASE("HMAC-SHA256 matches the RFC 4231 test vectors", "[experiments][ledger]") {
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4 += static_cast<char>(i);
  CHECK(hmac_sha256_hex(key4, std::string(50, '\xcd')) == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Keys longer than a block are hashed first (test cases 6 and 7).
  const std::string long_key(131, '\xaa');
  CHECK(hmac_sha256_hex(long_key, "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(hmac_sha256_hex(long_key,
                        "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before "
                        "being used by the HMAC algorithm.") == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
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
information: oracle
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
  CHECK_THAT(verify_ledger(join(cut), "ledger.csv").problem, Catch::Contains("the closing '# end; rows=N; last_hash=...; end_hash=...' line is missing"));
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

namespace {

std::vector<SettlementRow> three_rows() {
  std::vector<SettlementRow> rows(3);
  const char* tenants[] = {"alice", "bob", "carol"};
  for (int i = 0; i < 3; ++i) {
    rows[i].tenant = tenants[i];
    rows[i].provider = "cloud-a";
    rows[i].device_h = 10.0 * (i + 1);
    rows[i].compute_usd = 32.0 * (i + 1);
  }
  return rows;
}

// The ledger with its last `drop` rows removed and the closing line naively patched: the
// count lowered and the last kept row's hash copied in (no hash computed).
std::string drop_last_rows(const std::string& ledger, std::size_t drop) {
  auto lines = lines_of(ledger);
  const std::string closing = lines.back();
  lines.erase(lines.end() - 1 - static_cast<std::ptrdiff_t>(drop), lines.end());
  const std::size_t rows = lines.size() - 2;
  const std::string last = lines.back().substr(lines.back().size() - 64);
  const std::string tail = closing.substr(closing.find("; end_hash="));
  lines.push_back("# end; rows=" + std::to_string(rows) + "; last_hash=" + last + tail);
  return join(lines);
}

}  // namespace

TEST_CASE("dropping the last rows and copying a row's hash into the closing line fails verification", "[experiments][ledger]") {
  const std::string ledger = ledger_csv(three_rows(), std::string(64, 'a'));
  REQUIRE(verify_ledger(ledger, "l.csv").ok);
  const auto lines = lines_of(ledger);
  REQUIRE(lines.size() == 6);
  CHECK_THAT(lines.back(), Catch::StartsWith("# end; rows=3; last_hash=" + lines[4].substr(lines[4].size() - 64) + "; end_hash="));
  const std::string cut = drop_last_rows(ledger, 1);
  const LedgerCheck c = verify_ledger(cut, "l.csv");
  CHECK_FALSE(c.ok);
  const std::string kept_hash = lines[3].substr(lines[3].size() - 64);
  CHECK(c.problem == "l.csv:5: the closing line does not match the rows: it must read '# end; rows=2; last_hash=" + kept_hash +
                         "; end_hash=...' with end_hash over both (rows were removed at the end, or the line was edited)");
  // The old format's closing line (no end_hash) is refused too.
  std::vector<std::string> old = lines_of(cut);
  old.back() = old.back().substr(0, old.back().find("; end_hash="));
  CHECK_THAT(verify_ledger(join(old), "l.csv").problem, Catch::StartsWith("l.csv:5: the closing line does not match the rows"));
  CHECK_FALSE(verify_ledger(drop_last_rows(ledger, 3), "l.csv").ok);
}

TEST_CASE("a keyed ledger verifies only with its key, and an unkeyed chain recomputed over it fails", "[experiments][ledger]") {
  const std::string key = "correct horse battery staple, 32+ bytes of secret";
  const std::string keyed = ledger_csv(three_rows(), std::string(64, 'a'), key);
  const auto lines = lines_of(keyed);
  CHECK(lines[0] == "# schedsim settlement ledger v1; config_sha256=" + std::string(64, 'a') + "; mac=hmac-sha256");
  const LedgerCheck ok = verify_ledger(keyed, "k.csv", key);
  INFO(ok.problem);
  CHECK(ok.ok);
  CHECK(ok.totals.rows == 3);
  CHECK(ok.totals.compute_usd == 192.0);
  CHECK(verify_ledger(keyed, "k.csv").problem == "k.csv:1: the ledger is keyed (HMAC-SHA256): verify it with its key (--key-file FILE or SCHEDSIM_LEDGER_KEY)");
  CHECK(verify_ledger(keyed, "k.csv", std::string("another key")).problem ==
        "k.csv:3: row 1: prev_hash is not the previous row's row_hash (a row was removed, added or reordered)");
  // Someone without the key edits a row and recomputes the whole chain unkeyed: an
  // unkeyed ledger, which the key refuses.
  std::vector<SettlementRow> forged = three_rows();
  forged[1].compute_usd = 1.0;
  const std::string unkeyed = ledger_csv(forged, std::string(64, 'a'));
  REQUIRE(verify_ledger(unkeyed, "f.csv").ok);
  CHECK(verify_ledger(unkeyed, "f.csv", key).problem ==
        "f.csv:1: a key was given but the ledger is not keyed: it was not written with a key, or its keyed chain was replaced by an unkeyed one");
  // ... or keeps the keyed header and recomputes the rows with SHA-256: the first row fails.
  std::vector<std::string> mixed = lines_of(unkeyed);
  mixed[0] = lines[0];
  CHECK(verify_ledger(join(mixed), "f.csv", key).problem == "f.csv:3: row 1: prev_hash is not the previous row's row_hash (a row was removed, added or reordered)");
  // Dropped rows in a keyed ledger: the closing line needs the key.
  CHECK_THAT(verify_ledger(drop_last_rows(keyed, 1), "k.csv", key).problem, Catch::StartsWith("k.csv:5: the closing line does not match the rows"));
  // Keys from a file: one final line break is not part of the key; an empty file is refused.
  TempDir dir;
  CHECK(read_ledger_key_file(dir.write("key", key + "\n")) == key);
  CHECK(read_ledger_key_file(dir.write("key2", key + "\r\n")) == key);
  CHECK_THROWS_WITH(read_ledger_key_file(dir.write("empty", "\n")),
                    dir.path("empty") + ": the ledger key file is empty; put the secret key (any bytes, 32 or more recommended) in it");
  CHECK_THROWS_WITH(read_ledger_key_file(dir.path("none")), dir.path("none") + ": cannot open the ledger key file (does it exist?)");
}

TEST_CASE("the CLI keys the ledger from a key file or SCHEDSIM_LEDGER_KEY and verifies it only with the key", "[experiments][ledger][cli]") {
  TempDir dir;
  dir.write("jobs.csv", jobs_csv());
  const std::string config = dir.write("run.yaml", kScenario);
  const std::string key = dir.write("ledger.key", "0123456789abcdef0123456789abcdef\n");
  const std::string exe = SCHEDSIM_EXE;
  const auto sh = [&](const std::string& command) {
    const int status = std::system((command + " > " + dir.path("out.txt") + " 2>&1").c_str());
    return std::make_pair(WEXITSTATUS(status), read_file(dir.path("out.txt")));
  };
  REQUIRE(sh("unset SCHEDSIM_LEDGER_KEY; " + exe + " run " + config + " --quiet --ledger-key-file " + key + " --out " + dir.path("k")).first == 0);
  const std::string ledger = dir.path("k/ledger.csv");
  CHECK_THAT(read_file(ledger), Catch::StartsWith("# schedsim settlement ledger v1; config_sha256=") && Catch::Contains("; mac=hmac-sha256\n"));
  CHECK(sh(exe + " ledger verify " + ledger + " --key-file " + key).second.rfind("OK: 6 rows; ", 0) == 0);
  CHECK(sh("SCHEDSIM_LEDGER_KEY=0123456789abcdef0123456789abcdef " + exe + " ledger verify " + ledger).first == 0);
  const auto no_key = sh("unset SCHEDSIM_LEDGER_KEY; " + exe + " ledger verify " + ledger);
  CHECK(no_key.first == 1);
  CHECK(no_key.second == "schedsim: ledger verification failed: " + ledger +
                             ":1: the ledger is keyed (HMAC-SHA256): verify it with its key (--key-file FILE or SCHEDSIM_LEDGER_KEY)\n");
  const auto wrong = sh("SCHEDSIM_LEDGER_KEY=wrong " + exe + " ledger verify " + ledger);
  CHECK(wrong.first == 1);
  CHECK_THAT(wrong.second, Catch::Contains(":3: row 1: prev_hash is not the previous row's row_hash"));
  // The key changes neither the results nor the config hash.
  REQUIRE(sh("unset SCHEDSIM_LEDGER_KEY; " + exe + " run " + config + " --quiet --out " + dir.path("u")).first == 0);
  CHECK(read_file(dir.path("k/results.json")) == read_file(dir.path("u/results.json")));
  CHECK(lines_of(read_file(ledger))[0] == lines_of(read_file(dir.path("u/ledger.csv")))[0] + "; mac=hmac-sha256");
  const auto missing = sh(exe + " ledger verify " + ledger + " --key-file " + dir.path("nokey"));
  CHECK(missing.first != 0);
  CHECK_THAT(missing.second, Catch::Contains(dir.path("nokey") + ": cannot open the ledger key file (does it exist?)"));
}
