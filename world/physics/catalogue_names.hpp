// Name lookup shared by the data catalogues (accelerators, workload profiles): entries are
// found by their name or an alias, ignoring case, '-', '_' and spaces, so "v100", "K80",
// "h100_sxm" and "Tpu v4" all resolve. Unknown names get a suggestion and the known list.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_node.hpp"

namespace schedsim {

// Lower case with '-', '_' and ' ' removed: "H100-SXM" -> "h100sxm".
std::string normalize_catalogue_name(std::string_view name);

class CatalogueNameIndex {
 public:
  // The entry registered under `name` (or anything that normalizes like it).
  std::optional<std::size_t> find(std::string_view name) const;
  // Registers `name` for `entry`; returns the other entry it already names, if any (the
  // caller turns that into a located error). Registering a name twice for the same entry
  // is allowed and changes nothing.
  std::optional<std::size_t> add(std::string_view name, std::size_t entry);
  // The registered name closest to `name` (edit distance <= 2 after normalizing), as it
  // was written when registered; "" when none is close.
  std::string closest(std::string_view name) const;
  // Registered names (as written) that point to `entry`, in registration order.
  std::vector<std::string> names_of(std::size_t entry) const;

 private:
  std::map<std::string, std::size_t> entry_of_;     // normalized name -> entry
  std::vector<std::pair<std::string, std::size_t>> written_;  // as written, in order
};

// "unknown <what> 'name' (did you mean 'X'?); known <what>s: A, B, C; names match ignoring
// case, '-', '_' and spaces, and aliases work too"
std::string unknown_name_message(std::string_view what, std::string_view name, const CatalogueNameIndex& index,
                                 const std::vector<std::string>& known);

// Pieces of the catalogues' YAML merge, shared so that both report problems alike.
namespace detail {

// Throws at `entry` unless it has every field of `fields` except those in `optional`:
// "new accelerator type 'X' is missing tdp_w, idle_w; a new accelerator type needs all
// of: ... (or did you mean to override 'Y'?)".
void require_fields_for_new_entry(const ConfigNode& entry, std::string_view what, std::string_view name,
                                  const CatalogueNameIndex& index, const std::vector<std::string>& fields,
                                  const std::vector<std::string>& optional);

// Registers the names under `entry`'s optional `aliases` key (a name or a list of names)
// for entry `slot`; throws at the alias when it already names another entry.
void register_aliases(const ConfigNode& entry, std::string_view what, std::size_t slot, CatalogueNameIndex& index,
                      const std::function<const std::string&(std::size_t)>& name_of);

// A number as people write it: "400", "0.35", "1.5e+12".
std::string format_number(double value);

}  // namespace detail
}  // namespace schedsim
