#include "world/physics/catalogue_names.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "base/config_node.hpp"

namespace schedsim {

std::string normalize_catalogue_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<std::size_t> CatalogueNameIndex::find(std::string_view name) const {
  const auto it = entry_of_.find(normalize_catalogue_name(name));
  if (it == entry_of_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> CatalogueNameIndex::add(std::string_view name, std::size_t entry) {
  const std::string key = normalize_catalogue_name(name);
  const auto it = entry_of_.find(key);
  if (it != entry_of_.end()) {
    if (it->second != entry) return it->second;
    return std::nullopt;
  }
  entry_of_.emplace(key, entry);
  written_.emplace_back(std::string(name), entry);
  return std::nullopt;
}

std::string CatalogueNameIndex::closest(std::string_view name) const {
  const std::string key = normalize_catalogue_name(name);
  std::string best;
  std::size_t best_d = 3;  // suggest only near misses
  for (const auto& [written, entry] : written_) {
    const std::size_t d = edit_distance(key, normalize_catalogue_name(written));
    if (d < best_d) best_d = d, best = written;
  }
  return best;
}

std::vector<std::string> CatalogueNameIndex::names_of(std::size_t entry) const {
  std::vector<std::string> out;
  for (const auto& [written, e] : written_) {
    if (e == entry) out.push_back(written);
  }
  return out;
}

std::string unknown_name_message(std::string_view what, std::string_view name, const CatalogueNameIndex& index,
                                 const std::vector<std::string>& known) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  const std::string near = index.closest(name);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  if (known.empty()) return msg + "; the catalogue has no " + std::string(what) + "s yet";
  msg += "; known " + std::string(what) + "s: ";
  for (std::size_t i = 0; i < known.size(); ++i) msg += (i ? ", " : "") + known[i];
  msg += "; names match ignoring case, '-', '_' and spaces, and aliases work too";
  return msg;
}

namespace detail {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void require_fields_for_new_entry(const ConfigNode& entry, std::string_view what, std::string_view name,
                                  const CatalogueNameIndex& index, const std::vector<std::string>& fields,
                                  const std::vector<std::string>& optional) {
  std::vector<std::string> required;
  std::vector<std::string> missing;
  for (const auto& f : fields) {
    if (std::find(optional.begin(), optional.end(), f) != optional.end()) continue;
    required.push_back(f);
    if (!entry.has(f)) missing.push_back(f);
  }
  if (missing.empty()) return;
  std::string msg = "new " + std::string(what) + " '" + std::string(name) + "' is missing " + join(missing) + "; a new " +
                    std::string(what) + " needs all of: " + join(required);
  const std::string near = index.closest(name);
  if (!near.empty()) msg += " (or did you mean to override '" + near + "'?)";
  entry.fail(msg);
}

void register_aliases(const ConfigNode& entry, std::string_view what, std::size_t slot, CatalogueNameIndex& index,
                      const std::function<const std::string&(std::size_t)>& name_of) {
  const auto aliases = entry.maybe_child("aliases");
  if (!aliases) return;
  std::vector<ConfigNode> items;
  if (aliases->is_sequence()) {
    for (std::size_t i = 0; i < aliases->size(); ++i) items.push_back(aliases->at(i));
  } else if (aliases->is_scalar()) {
    items.push_back(*aliases);
  } else {
    aliases->fail("expected a name or a list of names");
  }
  for (const ConfigNode& item : items) {
    const std::string alias = item.as_string();
    if (normalize_catalogue_name(alias).empty()) item.fail("an alias must contain a letter or a digit");
    if (const auto other = index.add(alias, slot)) {
      item.fail("alias '" + alias + "' already names " + std::string(what) + " '" + name_of(*other) +
                "'; choose another alias");
    }
  }
}

std::string format_number(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

}  // namespace detail
}  // namespace schedsim
