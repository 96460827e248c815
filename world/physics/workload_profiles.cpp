#include "world/physics/workload_profiles.hpp"

#include <utility>

#include "world/physics/catalogue_data.hpp"  // generated from sim/data/*.yaml
#include "base/error.hpp"

namespace schedsim {
namespace {

struct NumericField {
  const char* key;
  double WorkloadProfile::*member;
  double to_si;
  bool zero_allowed;
};

const std::vector<NumericField>& numeric_fields() {
  static const std::vector<NumericField> fields = {
      {"flops_per_iteration", &WorkloadProfile::flops_per_iteration, 1.0, false},
      {"memory_bytes_per_iteration", &WorkloadProfile::memory_bytes_per_iteration, 1.0, true},
      {"gradient_bytes", &WorkloadProfile::gradient_bytes, 1.0, true},
      {"params", &WorkloadProfile::params, 1.0, false},
      {"memory_per_device_gb", &WorkloadProfile::memory_per_device_bytes, 1e9, false},
      {"efficiency", &WorkloadProfile::efficiency, 1.0, false},
  };
  return fields;
}

}  // namespace

const char* to_string(Precision precision) { return precision == Precision::fp32 ? "fp32" : "bf16"; }

const std::vector<std::string>& WorkloadProfileCatalogue::field_names() {
  static const std::vector<std::string> names = {"batch_size", "flops_per_iteration", "memory_bytes_per_iteration",
                                                 "gradient_bytes", "params", "memory_per_device_gb", "efficiency",
                                                 "precision", "aliases"};
  return names;
}

WorkloadProfileCatalogue WorkloadProfileCatalogue::builtin() {
  const ConfigNode root =
      ConfigNode::load_builtin(kBuiltinWorkloadProfilesYaml, "sim/data/workload_profiles.yaml (built in)");
  root.expect_map({"workload_profiles"});
  WorkloadProfileCatalogue catalogue;
  catalogue.merge(root.child("workload_profiles"));
  return catalogue;
}

void WorkloadProfileCatalogue::merge(const ConfigNode& profiles) {
  if (profiles.is_null()) return;
  WorkloadProfileCatalogue next = *this;  // commit only when every entry is valid
  for (const std::string& name : profiles.keys()) {
    const ConfigNode entry = profiles.child(name);
    entry.expect_keys(field_names());
    if (normalize_catalogue_name(name).empty()) entry.fail("a workload profile name must contain a letter or a digit");
    const std::optional<std::size_t> existing = next.index_.find(name);
    if (!existing) {
      detail::require_fields_for_new_entry(entry, "workload profile", name, next.index_, field_names(),
                                           {"precision", "aliases"});
    }
    WorkloadProfile profile = existing ? next.profiles_[*existing] : WorkloadProfile{};
    if (!existing) profile.name = name;
    if (const auto batch = entry.maybe_child("batch_size")) profile.batch_size = batch->as_positive_int();
    for (const NumericField& f : numeric_fields()) {
      if (const auto value = entry.maybe_child(f.key)) {
        profile.*f.member = (f.zero_allowed ? value->as_nonnegative_double() : value->as_positive_double()) * f.to_si;
      }
    }
    if (const auto eff = entry.maybe_child("efficiency"); eff && profile.efficiency > 1.0) {
      eff->fail("must be a fraction of peak in (0, 1], got " + detail::format_number(profile.efficiency));
    }
    if (const auto precision = entry.maybe_child("precision")) {
      profile.precision = precision->as_choice({"bf16", "fp32"}) == "fp32" ? Precision::fp32 : Precision::bf16;
    }
    std::size_t slot = 0;
    if (existing) {
      slot = *existing;
      next.profiles_[slot] = std::move(profile);
    } else {
      slot = next.profiles_.size();
      next.profiles_.push_back(std::move(profile));
      next.index_.add(name, slot);
    }
    detail::register_aliases(entry, "workload profile", slot, next.index_,
                             [&next](std::size_t i) -> const std::string& { return next.profiles_[i].name; });
  }
  *this = std::move(next);
}

const WorkloadProfile* WorkloadProfileCatalogue::find(std::string_view name) const {
  const auto i = index_.find(name);
  return i ? &profiles_[*i] : nullptr;
}

const WorkloadProfile& WorkloadProfileCatalogue::get(std::string_view name) const {
  if (const WorkloadProfile* p = find(name)) return *p;
  throw InputError("workload profile catalogue", unknown_name_message("workload profile", name, index_, names()));
}

const WorkloadProfile& WorkloadProfileCatalogue::get(const ConfigNode& name_node) const {
  const std::string name = name_node.as_string();
  if (const WorkloadProfile* p = find(name)) return *p;
  name_node.fail(unknown_name_message("workload profile", name, index_, names()));
}

std::string WorkloadProfileCatalogue::unknown_message(std::string_view name) const {
  return unknown_name_message("workload profile", name, index_, names());
}

std::string WorkloadProfileCatalogue::closest_name(std::string_view name) const {
  const std::string near = index_.closest(name);
  const WorkloadProfile* p = near.empty() ? nullptr : find(near);
  return p ? p->name : std::string();
}

std::vector<std::string> WorkloadProfileCatalogue::names() const {
  std::vector<std::string> out;
  out.reserve(profiles_.size());
  for (const auto& p : profiles_) out.push_back(p.name);
  return out;
}

std::vector<std::string> WorkloadProfileCatalogue::aliases_of(std::string_view name) const {
  const auto i = index_.find(name);
  if (!i) throw InputError("workload profile catalogue", unknown_name_message("workload profile", name, index_, names()));
  return index_.names_of(*i);
}

}  // namespace schedsim
