// The settlement ledger (docs/market.md#settlement-ledger): one CSV row per (tenant,
// provider) with device-hours, energy, electricity and compute cost and emissions, the rows
// hash-chained with SHA-256 so that `schedsim ledger verify` detects an edited, removed or
// reordered row. Layout:
//
//   # schedsim settlement ledger v1; config_sha256=<hex>
//   tenant,provider,device_hours,energy_kwh,electricity_usd,compute_usd,co2_kg,prev_hash,row_hash
//   <row>,<prev_hash>,<row_hash>        row_hash = SHA-256(prev_hash + "\n" + <row>)
//   ...
//   # end; rows=<n>; last_hash=<hex>; end_hash=<hex>   end_hash = SHA-256(last_hash + "\n# end; rows=<n>")
//
// The first row's prev_hash is SHA-256 of the two header lines (joined by "\n"), so the
// chain's seed covers the run's config hash. Keyed ledgers (a key given to the run) end
// the first line with "; mac=hmac-sha256" and use HMAC-SHA256 under the key wherever the
// unkeyed ones use SHA-256: only a holder of the key can recompute them. Numbers are written with 17 significant
// digits, so they read back to the same doubles and the totals are exact.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "world/market/market_meter.hpp"

namespace schedsim {

// The ledger text. Throws InputError when a tenant or provider name holds a line break
// (one row per line is what makes the chain checkable line by line).
// With `key`, the chain is HMAC-SHA256 under it (docs/market.md#settlement-ledger).
std::string ledger_csv(const std::vector<SettlementRow>& rows, const std::string& config_sha256, const std::optional<std::string>& key = std::nullopt);
// A secret key from a file (its bytes, less one final line break); throws InputError
// naming the file ("cannot open the <kind> key file ...") when it cannot be read or is
// empty. Shared by the ledger's and the snapshots' keys.
std::string read_key_file(const std::string& path, const std::string& kind);
// read_key_file(path, "ledger").
std::string read_ledger_key_file(const std::string& path);

struct LedgerTotals {
  std::size_t rows = 0;
  double device_h = 0.0, energy_kwh = 0.0, electricity_usd = 0.0, compute_usd = 0.0, co2_kg = 0.0;
};
// Totals over `rows`, summed in order: what the ledger's rows add up to.
LedgerTotals ledger_totals(const std::vector<SettlementRow>& rows);

struct LedgerCheck {
  bool ok = false;
  std::string problem;  // "" when ok; else "<name>:<line>: ..." naming the first bad row
  LedgerTotals totals;  // over the rows read (all of them when ok)
};
// Recomputes the chain of the ledger text `text`; `name` names it in messages.
// A keyed ledger verifies only with its key; a key given for an unkeyed ledger fails.
LedgerCheck verify_ledger(const std::string& text, const std::string& name, const std::optional<std::string>& key = std::nullopt);
// The same for a file; throws InputError when it cannot be read.
LedgerCheck verify_ledger_file(const std::string& path, const std::optional<std::string>& key = std::nullopt);

}  // namespace schedsim
