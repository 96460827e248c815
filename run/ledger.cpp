#include "run/ledger.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/sha256.hpp"
#include "base/error.hpp"
#include "base/file_checks.hpp"
#include "traces/csv.hpp"

namespace schedsim {
namespace {

constexpr const char* kColumns = "tenant,provider,device_hours,energy_kwh,electricity_usd,compute_usd,co2_kg,prev_hash,row_hash";
constexpr const char* kFirstLinePrefix = "# schedsim settlement ledger v1; config_sha256=";
constexpr std::size_t kHashChars = 64;
constexpr int kNumbers = 5;  // the numeric columns, last before the hashes

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string row_text(const SettlementRow& r) {
  for (const std::string* s : {&r.tenant, &r.provider}) {
    if (s->find_first_of("\r\n") != std::string::npos) throw InputError("ledger.csv", "the name '" + *s + "' holds a line break; a ledger row must fit one line");
  }
  std::ostringstream out;
  write_csv_field(out, r.tenant);
  out << ',';
  write_csv_field(out, r.provider);
  out << ',' << number(r.device_h) << ',' << number(r.energy_kwh) << ',' << (r.electricity_usd ? number(*r.electricity_usd) : "") << ','
      << number(r.compute_usd) << ',' << (r.co2_kg ? number(*r.co2_kg) : "");
  return out.str();
}

// The chain's hash: SHA-256, or HMAC-SHA256 under the ledger key (keyed ledgers).
class ChainHash {
 public:
  explicit ChainHash(const std::optional<std::string>& key) : key_(key) {}
  std::string operator()(const std::string& text) const { return key_ ? hmac_sha256_hex(*key_, text) : sha256_hex(text); }
  bool keyed() const { return key_.has_value(); }

 private:
  const std::optional<std::string>& key_;
};

std::string chain(const ChainHash& h, const std::string& prev, const std::string& row) { return h(prev + "\n" + row); }

// The closing line binds the row count to the last row's hash: dropping the last rows and
// copying a row's hash into it no longer verifies without computing a hash (or, keyed,
// without the key).
std::string closing_line(const ChainHash& h, std::size_t rows, const std::string& last_hash) {
  const std::string count = "# end; rows=" + std::to_string(rows);
  return count + "; last_hash=" + last_hash + "; end_hash=" + h(last_hash + "\n" + count);
}

constexpr const char* kKeyedSuffix = "; mac=hmac-sha256";

bool is_hex_hash(std::string_view s) {
  if (s.size() != kHashChars) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string ledger_csv(const std::vector<SettlementRow>& rows, const std::string& config_sha256, const std::optional<std::string>& key) {
  const ChainHash h(key);
  const std::string head = std::string(kFirstLinePrefix) + config_sha256 + (key ? kKeyedSuffix : "") + "\n" + kColumns;
  std::string out = head + "\n";
  std::string prev = h(head);
  for (const SettlementRow& r : rows) {
    const std::string text = row_text(r);
    const std::string hash = chain(h, prev, text);
    out += text + "," + prev + "," + hash + "\n";
    prev = hash;
  }
  out += closing_line(h, rows.size(), prev) + "\n";
  return out;
}

std::string read_ledger_key_file(const std::string& path) { return read_key_file(path, "ledger"); }

std::string read_key_file(const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the " + kind + " key file (does it exist?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "read failed");
  std::string key = text.str();
  // One line break at the end is the editor's, not the key's.
  if (!key.empty() && key.back() == '\n') key.pop_back();
  if (!key.empty() && key.back() == '\r') key.pop_back();
  if (key.empty()) throw InputError(path, "the " + kind + " key file is empty; put the secret key (any bytes, 32 or more recommended) in it");
  return key;
}

LedgerTotals ledger_totals(const std::vector<SettlementRow>& rows) {
  LedgerTotals t;
  for (const SettlementRow& r : rows) {
    ++t.rows;
    t.device_h += r.device_h;
    t.energy_kwh += r.energy_kwh;
    t.electricity_usd += r.electricity_usd.value_or(0.0);
    t.compute_usd += r.compute_usd;
    t.co2_kg += r.co2_kg.value_or(0.0);
  }
  return t;
}

LedgerCheck verify_ledger(const std::string& text, const std::string& name, const std::optional<std::string>& key) {
  const ChainHash h(key);
  LedgerCheck c;
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  auto fail = [&](std::size_t line_index, const std::string& what) {
    c.ok = false;
    c.problem = name + ":" + std::to_string(line_index + 1) + ": " + what;
    return c;
  };
  if (lines.size() < 3 || lines[0].rfind(kFirstLinePrefix, 0) != 0) {
    return fail(0, "not a schedsim settlement ledger (the first line must start with '" + std::string(kFirstLinePrefix) + "')");
  }
  {
    const std::size_t hash_at = std::string(kFirstLinePrefix).size();
    const std::string rest = lines[0].size() >= hash_at + kHashChars ? lines[0].substr(hash_at + kHashChars) : "";
    if (lines[0].size() < hash_at + kHashChars || !is_hex_hash(std::string_view(lines[0]).substr(hash_at, kHashChars)) ||
        (!rest.empty() && rest != kKeyedSuffix)) {
      return fail(0, "the first line must be '" + std::string(kFirstLinePrefix) + "<64 hex digits>', optionally followed by '" + kKeyedSuffix + "'");
    }
    const bool keyed = rest == kKeyedSuffix;
    if (keyed && !key) return fail(0, "the ledger is keyed (HMAC-SHA256): verify it with its key (--key-file FILE or SCHEDSIM_LEDGER_KEY)");
    if (!keyed && key) {
      return fail(0, "a key was given but the ledger is not keyed: it was not written with a key, or its keyed chain was replaced by an unkeyed one");
    }
  }
  if (lines[1] != kColumns) return fail(1, std::string("the header must be ") + kColumns);
  std::string prev = h(lines[0] + "\n" + lines[1]);
  std::size_t i = 2;
  for (; i < lines.size() && lines[i].rfind("# end;", 0) != 0; ++i) {
    const std::string& line = lines[i];
    const std::string row = "row " + std::to_string(i - 1);
    if (line.size() < 2 * (kHashChars + 1) || line[line.size() - kHashChars - 1] != ',' || line[line.size() - 2 * kHashChars - 2] != ',') {
      return fail(i, row + " does not end in ,prev_hash,row_hash");
    }
    const std::string body = line.substr(0, line.size() - 2 * kHashChars - 2);
    const std::string given_prev = line.substr(line.size() - 2 * kHashChars - 1, kHashChars);
    const std::string given_hash = line.substr(line.size() - kHashChars);
    if (!is_hex_hash(given_prev) || !is_hex_hash(given_hash)) return fail(i, row + ": the hashes must be 64 lower-case hex digits");
    if (given_prev != prev) return fail(i, row + ": prev_hash is not the previous row's row_hash (a row was removed, added or reordered)");
    if (chain(h, prev, body) != given_hash) return fail(i, row + ": row_hash does not match the row's contents (the row was edited)");
    // The numeric columns are the last five of the body (numbers hold no commas).
    double v[kNumbers] = {0, 0, 0, 0, 0};
    std::size_t end = body.size();
    for (int k = kNumbers - 1; k >= 0; --k) {
      const std::size_t comma = end == 0 ? std::string::npos : body.rfind(',', end - 1);
      if (comma == std::string::npos) return fail(i, row + " has fewer than " + std::to_string(kNumbers + 2) + " columns");
      const std::string_view field(body.data() + comma + 1, end - comma - 1);
      if (!field.empty() && !parse_double(field, v[k])) return fail(i, row + ": '" + std::string(field) + "' is not a number");
      end = comma;
    }
    ++c.totals.rows;
    c.totals.device_h += v[0];
    c.totals.energy_kwh += v[1];
    c.totals.electricity_usd += v[2];
    c.totals.compute_usd += v[3];
    c.totals.co2_kg += v[4];
    prev = given_hash;
  }
  if (i == lines.size()) return fail(i - 1, "the closing '# end; rows=N; last_hash=...; end_hash=...' line is missing (the ledger was cut short)");
  // The expected end_hash is not printed: with a key, it would hand out a valid MAC for
  // a cut ledger.
  if (lines[i] != closing_line(h, c.totals.rows, prev)) {
    return fail(i, "the closing line does not match the rows: it must read '# end; rows=" + std::to_string(c.totals.rows) + "; last_hash=" + prev +
                       "; end_hash=...' with end_hash over both (rows were removed at the end, or the line was edited)");
  }
  if (i + 1 != lines.size()) return fail(i + 1, "lines after the closing line");
  c.ok = true;
  return c;
}

LedgerCheck verify_ledger_file(const std::string& path, const std::optional<std::string>& key) {
  // A folder would read as an empty ledger; EACCES is not "does it exist?".
  if (const std::string problem = file_open_problem(path, "ledger"); !problem.empty()) throw InputError(path, problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the ledger (does it exist?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "read failed");
  return verify_ledger(text.str(), path, key);
}

}  // namespace schedsim
