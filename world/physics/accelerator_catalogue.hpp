// The accelerator catalogue: peak compute, memory, power and intra-node link bandwidth per
// device type. The built-in entries come from sim/data/accelerators.yaml (vendor datasheets,
// each value with its source), embedded at build time; users add types or override single
// fields of existing ones from YAML. Units in the YAML carry their names (tflops, gb, gbps,
// w); inside the program everything is SI: FLOP/s, bytes, bytes/s, watts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "world/physics/catalogue_names.hpp"
#include "base/config_node.hpp"

namespace schedsim {

struct AcceleratorSpec {
  std::string name;                        // canonical name, e.g. "H100-SXM"
  double peak_dense_bf16_flops = 0;        // FLOP/s, dense bf16 tensor peak (fp16 where no bf16)
  double peak_fp32_flops = 0;              // FLOP/s, non-tensor fp32
  double memory_bytes = 0;                 // device memory
  double memory_bandwidth_bytes_per_s = 0;
  double tdp_w = 0;
  double idle_w = 0;                       // estimate; see the data file
  double intra_node_link_bytes_per_s = 0;  // per device, per direction, summed over its links
};

class AcceleratorCatalogue {
 public:
  // An empty catalogue; builtin() is the one with the shipped types.
  AcceleratorCatalogue() = default;

  // The types of sim/data/accelerators.yaml. Messages about it name that file and line.
  static AcceleratorCatalogue builtin();

  // Adds or overrides types from a map of `type name -> fields` (the value of a
  // scenario's `accelerators:` key; a null node changes nothing). A name that matches an
  // existing type or alias overrides only the fields it gives; a new name needs every
  // numeric field. Unknown fields, bad values, idle_w > tdp_w and aliases that already
  // name another type throw InputError naming the file, line and key. On error the
  // catalogue is left unchanged.
  void merge(const ConfigNode& types);

  // The type called `name` (or an alias), ignoring case, '-', '_' and spaces. Throws
  // InputError listing the known types (and the closest one) when there is none.
  const AcceleratorSpec& get(std::string_view name) const;
  // The same, with a message located at `name_node` (a type name in a config file).
  const AcceleratorSpec& get(const ConfigNode& name_node) const;
  // nullptr when unknown. References and pointers from get()/find() stay valid until the
  // catalogue is merged into, assigned or destroyed: copy the spec to keep it longer.
  const AcceleratorSpec* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  // Canonical names, in the order the types were added.
  std::vector<std::string> names() const;
  // Every name that selects `name`'s type: its canonical name first, then its aliases.
  std::vector<std::string> aliases_of(std::string_view name) const;
  std::size_t size() const { return specs_.size(); }

  // The YAML field names accepted per type, in documentation order.
  static const std::vector<std::string>& field_names();

 private:
  std::vector<AcceleratorSpec> specs_;
  CatalogueNameIndex index_;
};

}  // namespace schedsim
