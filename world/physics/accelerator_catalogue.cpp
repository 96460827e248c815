#include "world/physics/accelerator_catalogue.hpp"

#include <algorithm>
#include <utility>

#include "world/physics/catalogue_data.hpp"  // generated from sim/data/*.yaml
#include "base/error.hpp"

namespace schedsim {
namespace {

// YAML field -> member, unit factor to SI, and whether zero is allowed.
struct NumericField {
  const char* key;
  double AcceleratorSpec::*member;
  double to_si;
  bool zero_allowed;
};

const std::vector<NumericField>& numeric_fields() {
  static const std::vector<NumericField> fields = {
      {"peak_dense_bf16_tflops", &AcceleratorSpec::peak_dense_bf16_flops, 1e12, false},
      {"peak_fp32_tflops", &AcceleratorSpec::peak_fp32_flops, 1e12, false},
      {"memory_gb", &AcceleratorSpec::memory_bytes, 1e9, false},
      {"memory_bandwidth_gbps", &AcceleratorSpec::memory_bandwidth_bytes_per_s, 1e9, false},
      {"tdp_w", &AcceleratorSpec::tdp_w, 1.0, false},
      {"idle_w", &AcceleratorSpec::idle_w, 1.0, true},
      {"intra_node_link_gbps", &AcceleratorSpec::intra_node_link_bytes_per_s, 1e9, false},
  };
  return fields;
}

}  // namespace

const std::vector<std::string>& AcceleratorCatalogue::field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : numeric_fields()) out.emplace_back(f.key);
    out.emplace_back("aliases");
    return out;
  }();
  return names;
}

AcceleratorCatalogue AcceleratorCatalogue::builtin() {
  const ConfigNode root = ConfigNode::load_builtin(kBuiltinAcceleratorsYaml, "sim/data/accelerators.yaml (built in)");
  root.expect_map({"accelerators"});
  AcceleratorCatalogue catalogue;
  catalogue.merge(root.child("accelerators"));
  return catalogue;
}

void AcceleratorCatalogue::merge(const ConfigNode& types) {
  if (types.is_null()) return;
  AcceleratorCatalogue next = *this;  // commit only when every entry is valid
  for (const std::string& name : types.keys()) {
    const ConfigNode entry = types.child(name);
    entry.expect_keys(field_names());
    if (normalize_catalogue_name(name).empty()) entry.fail("an accelerator type name must contain a letter or a digit");
    const std::optional<std::size_t> existing = next.index_.find(name);
    if (!existing) {
      detail::require_fields_for_new_entry(entry, "accelerator type", name, next.index_, field_names(), {"aliases"});
    }
    AcceleratorSpec spec = existing ? next.specs_[*existing] : AcceleratorSpec{};
    if (!existing) spec.name = name;
    for (const NumericField& f : numeric_fields()) {
      if (const auto value = entry.maybe_child(f.key)) {
        spec.*f.member = (f.zero_allowed ? value->as_nonnegative_double() : value->as_positive_double()) * f.to_si;
      }
    }
    if (spec.idle_w > spec.tdp_w) {
      const ConfigNode at = entry.has("idle_w") ? entry.child("idle_w") : entry.child("tdp_w");
      at.fail("idle_w (" + detail::format_number(spec.idle_w) + " W) must not exceed tdp_w (" +
              detail::format_number(spec.tdp_w) + " W) for accelerator type '" + spec.name + "'");
    }
    std::size_t slot = 0;
    if (existing) {
      slot = *existing;
      next.specs_[slot] = std::move(spec);
    } else {
      slot = next.specs_.size();
      next.specs_.push_back(std::move(spec));
      next.index_.add(name, slot);
    }
    detail::register_aliases(entry, "accelerator type", slot, next.index_,
                             [&next](std::size_t i) -> const std::string& { return next.specs_[i].name; });
  }
  *this = std::move(next);
}

const AcceleratorSpec* AcceleratorCatalogue::find(std::string_view name) const {
  const auto i = index_.find(name);
  return i ? &specs_[*i] : nullptr;
}

const AcceleratorSpec& AcceleratorCatalogue::get(std::string_view name) const {
  if (const AcceleratorSpec* spec = find(name)) return *spec;
  throw InputError("accelerator catalogue", unknown_name_message("accelerator type", name, index_, names()));
}

const AcceleratorSpec& AcceleratorCatalogue::get(const ConfigNode& name_node) const {
  const std::string name = name_node.as_string();
  if (const AcceleratorSpec* spec = find(name)) return *spec;
  name_node.fail(unknown_name_message("accelerator type", name, index_, names()));
}

std::vector<std::string> AcceleratorCatalogue::names() const {
  std::vector<std::string> out;
  out.reserve(specs_.size());
  for (const auto& s : specs_) out.push_back(s.name);
  return out;
}

std::vector<std::string> AcceleratorCatalogue::aliases_of(std::string_view name) const {
  const auto i = index_.find(name);
  if (!i) throw InputError("accelerator catalogue", unknown_name_message("accelerator type", name, index_, names()));
  return index_.names_of(*i);
}

}  // namespace schedsim
