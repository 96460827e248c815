// Workload profiles: what one training iteration of a model costs (FLOPs, memory traffic,
// gradient bytes, memory footprint) and how close to peak it runs. The built-in profiles
// come from sim/data/workload_profiles.yaml (each number with its source or derivation),
// embedded at build time; users add or override profiles from YAML. SI units inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "world/physics/catalogue_names.hpp"
#include "base/config_node.hpp"

namespace schedsim {

// The arithmetic a profile runs in: picks the device peak the speed model uses.
enum class Precision {
  bf16,  // mixed precision on bf16 (or fp16) tensor units: AcceleratorSpec::peak_dense_bf16_flops
  fp32,  // full fp32 on the vector units: AcceleratorSpec::peak_fp32_flops
};
const char* to_string(Precision precision);

struct WorkloadProfile {
  std::string name;                         // canonical name, e.g. "ResNet-50"
  std::int64_t batch_size = 0;              // global batch, samples
  double flops_per_iteration = 0;           // forward + backward over the global batch
  double memory_bytes_per_iteration = 0;    // estimated device-memory traffic, global batch
  double gradient_bytes = 0;                // all-reduced per iteration by data parallelism
  double params = 0;                        // trainable parameters
  double memory_per_device_bytes = 0;       // footprint of one unsharded replica
  double efficiency = 0;                    // fraction of peak reached, in (0, 1]
  Precision precision = Precision::bf16;
};

class WorkloadProfileCatalogue {
 public:
  // An empty catalogue; builtin() is the one with the shipped profiles.
  WorkloadProfileCatalogue() = default;

  // The profiles of sim/data/workload_profiles.yaml.
  static WorkloadProfileCatalogue builtin();

  // Adds or overrides profiles from a map of `profile name -> fields` (the value of a
  // scenario's `workload_profiles:` key; a null node changes nothing). A name that matches
  // an existing profile or alias overrides only the fields it gives; a new name needs
  // every field except `precision` (default bf16) and `aliases`. Unknown fields, bad
  // values (efficiency outside (0, 1], non-positive sizes) and aliases that already name
  // another profile throw InputError naming the file, line and key. On error the
  // catalogue is left unchanged.
  void merge(const ConfigNode& profiles);

  // The profile called `name` (or an alias), ignoring case, '-', '_' and spaces. Throws
  // InputError listing the known profiles (and the closest one) when there is none.
  const WorkloadProfile& get(std::string_view name) const;
  // The same, with a message located at `name_node`.
  const WorkloadProfile& get(const ConfigNode& name_node) const;
  // nullptr when unknown. References and pointers from get()/find() stay valid until the
  // catalogue is merged into, assigned or destroyed: copy the spec to keep it longer.
  const WorkloadProfile* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  // "unknown workload profile 'NAME' (did you mean ...?); known workload profiles: ...":
  // the text get() throws, for callers that locate the error themselves.
  std::string unknown_message(std::string_view name) const;
  // The canonical name of the profile whose name or alias is closest to `name` (a
  // misspelling), "" when none is near.
  std::string closest_name(std::string_view name) const;

  // Canonical names, in the order the profiles were added.
  std::vector<std::string> names() const;
  // Every name that selects `name`'s profile: its canonical name first, then its aliases.
  std::vector<std::string> aliases_of(std::string_view name) const;
  std::size_t size() const { return profiles_.size(); }

  // The YAML field names accepted per profile, in documentation order.
  static const std::vector<std::string>& field_names();

 private:
  std::vector<WorkloadProfile> profiles_;
  CatalogueNameIndex index_;
};

}  // namespace schedsim
