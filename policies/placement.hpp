// Device placement helpers for policies. A decision is a batch applied after the policy
// returns, so while it builds the batch a policy must not hand out a device twice:
// FreeDevices is the cluster's free set minus what this decision already claimed.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "policies/fragmentation.hpp"
#include "sim/cluster_state.hpp"
#include "base/rng.hpp"
#include "sim/summary_bitset.hpp"

namespace schedsim {

// The switches above the nodes, for the topology_tree placement (Slurm's topology/tree):
// each node hangs off one leaf switch (a rack), each leaf off one pod switch, and all
// pods (or, without pods, all leaves) off one top switch.
struct SwitchTree {
  std::vector<int> leaf_of_node;  // by node; empty: every node under one leaf
  std::vector<int> pod_of_leaf;   // by leaf; empty: no pod level
};

class FreeDevices {
 public:
  // Starts a new decision: forgets earlier claims. O(claims of the previous decision).
  void reset(const ClusterState& state);
  int count() const { return free_; }
  // The owner promises to report, through touch(), the devices of every job that
  // releases devices between decisions (ends, or stops after a preemption); the index
  // then follows the cluster state by revisiting only those nodes (and the nodes this
  // object's claims went to) instead of comparing every node's count. A mismatch of the
  // total free count still falls back to the full comparison.
  void use_change_hints() { hints_ = true; }
  // Off: first_fit, first_fit_among, random and packed return devices without claiming
  // them, so every query sees the free set as reset() left it: for a caller comparing
  // alternative placements of one decision (the RL environment's candidate rows), which
  // then needs no reset() between queries. spread, share and fgd rely on their own
  // claims and throw an InvariantError while it is off. On by default.
  void set_claiming(bool on) { claiming_ = on; }
  // Devices claimed since construction (a diagnostic: 0 while claiming is off).
  std::uint64_t claims() const { return claims_; }
  void touch(const std::vector<DeviceId>& devices);
  // First fit: the `n` lowest-numbered free devices, appended to `out` and claimed.
  // Returns false (claiming nothing) when fewer than `n` are free. `only_type` >= 0: of
  // that device type only (index into ClusterSpec::device_types()), as for packed().
  bool first_fit(int n, std::vector<DeviceId>& out, int only_type = -1);
  // First fit from the free devices, then the rest from `released` (devices this decision
  // freed, e.g. by a preemption with a free checkpoint), taken from its back. Returns
  // false, taking nothing, when both together hold fewer than `n`.
  bool first_fit_then(int n, std::vector<DeviceId>& released, std::vector<DeviceId>& out);
  // `n` free devices drawn uniformly at random (of type `only_type` when >= 0; when that
  // type has fewer than `n` free, false without drawing).
  bool random(int n, Rng& rng, std::vector<DeviceId>& out, int only_type = -1);
  // Consolidated: as few nodes as possible, and inside one locality group (rack) when
  // `node_group` (node -> group, may be null) allows. A job that fits a node goes to the
  // fullest node that still fits it (best fit); larger jobs take the emptiest nodes of
  // the best-fitting group first. Uses an index of nodes by free count kept between
  // decisions: O(nodes) integer compares per decision to follow the cluster state, then
  // O(log nodes) per node whose count changes and per single-node fit, O(groups + nodes
  // of the chosen group) for a job that needs several nodes.
  // `only_type` >= 0 restricts the placement to devices of that type (index into
  // ClusterSpec::device_types()).
  bool packed(int n, const std::vector<int>* node_group, std::vector<DeviceId>& out, int only_type = -1);
  // Strict per-node consolidation (Microsoft YARN's rule, Tiresias' `yarn` scheme): a job
  // no larger than the largest node goes whole onto one node, the lowest-numbered with
  // enough free devices; a larger job takes whole idle nodes in node order (each no larger
  // than what is left of the job) and the remainder on the lowest-numbered other node with
  // room for it. Never splits a job otherwise: false when no such set is free, even if
  // enough devices are. O(nodes) per call.
  bool node_strict(int n, std::vector<DeviceId>& out, int only_type = -1);
  // One device per node in turn, emptiest nodes first: spreads a job out (over the nodes
  // of type `only_type` when >= 0).
  bool spread(int n, std::vector<DeviceId>& out, int only_type = -1);
  // Slurm's topology/tree selection over `tree`: the lowest level that holds the job on
  // one unit (a node, then a leaf switch, then a pod, then the top switch), best fit at
  // that level (the unit with the fewest free devices that still holds it, lowest index
  // among equals). Inside the chosen switch, leaf switches are taken by best fit in
  // turn: the leaf with the fewest free devices that holds what is left, else the one
  // with the most; inside a leaf, nodes by the same rule; inside a node, lowest ids.
  // `only_type` as for packed(). O(nodes + leaves^2) per call.
  bool tree(int n, const SwitchTree& tree, std::vector<DeviceId>& out, int only_type = -1);
  // The `n` lowest-numbered free devices among `candidates` (ascending ids), appended to
  // `out` and claimed; false, claiming nothing, when fewer than `n` of them are free.
  // O(candidates). For placements restricted to a set, e.g. a market's spot devices.
  bool first_fit_among(int n, const std::vector<DeviceId>& candidates, std::vector<DeviceId>& out);

  // Fractional requests: one device with at least `milli` free (counting this decision's
  // claims), appended to `out` and its share claimed. A device that gets a share is no
  // longer free for whole-device placements. `only_type` as for packed(). O(devices).
  enum class ShareRule {
    kFirst,   // lowest-numbered device that fits
    kBest,    // least free capacity that still fits (best fit), ties by lowest id
    kWorst,   // most free capacity (spreads shares out)
    kRandom,  // uniformly among the devices that fit
  };
  bool share(int milli, ShareRule rule, std::vector<DeviceId>& out, int only_type = -1, Rng* rng = nullptr);
  // Fragmentation gradient descent (FGD): the placement that raises the expected
  // fragmentation under `mix` the least (fragmentation.hpp). A fractional job takes one
  // device; a whole-GPU job of n devices takes n free devices of one node (falling back
  // to packed() when no node has room). Ties go to the fuller device, then the lower id.
  bool fgd(int n, int milli, const TaskMix& mix, std::vector<DeviceId>& out, int only_type = -1);
  // Free milli of device d after this decision's claims.
  int free_milli(DeviceId d) const;

 private:
  bool claimed(DeviceId d) const { return (claimed_bits_[static_cast<std::size_t>(d) >> 6] >> (d & 63)) & 1U; }
  void claim(DeviceId d);
  void require_claiming(const char* what) const;
  bool is_of_type(DeviceId d, int only_type) const;  // true for every device when only_type < 0
  // Free, unclaimed devices per node, kept up to date with the index below from the first
  // use in a decision (brought in step with the cluster state by comparing counts).
  const std::vector<int>& node_free();
  void take_from_node(int node, int n, std::vector<DeviceId>& out);
  void claim_share(DeviceId d, int milli);
  // The node index: node_free_[node] changes to `value`.
  void set_node_free(int node, int value);
  void build_index();
  void touch_node(int node);
  // The index for `only_type` (-1 = every type).
  int filter_of(int only_type) const { return only_type < 0 || num_types_ == 1 ? 0 : 1 + only_type; }
  void set_groups(const std::vector<int>* node_group);
  // The old full scan, for a job that no single group can hold (rare).
  bool packed_across_groups(int n, int only_type, std::vector<DeviceId>& out);

  const ClusterState* state_ = nullptr;
  bool claiming_ = true;
  std::uint64_t claims_ = 0;
  std::vector<std::uint64_t> claimed_bits_;
  std::vector<DeviceId> claimed_list_;
  int free_ = 0;
  std::vector<int> node_free_;
  bool node_free_valid_ = false;  // in step with the state for this decision
  bool index_built_ = false;      // node_free_ and the index describe some earlier state
  // The index, per filter (0: all nodes, 1 + t: nodes of type t when there are several
  // types): nodes by free count (buckets[f][c] = nodes with c free, ascending), free
  // devices in total and per locality group. A bucket is a bitset of nodes: moving a node
  // between buckets (every claim of a candidate placement does) allocates nothing.
  int num_types_ = 1;
  int max_per_node_ = 0;
  std::vector<std::vector<SummaryBitset>> buckets_;
  std::vector<int> filter_free_;
  const std::vector<int>* groups_of_ = nullptr;  // the node -> group map group_free_ follows
  int num_groups_ = 1;
  std::vector<std::vector<int>> group_free_;   // [filter][group]
  std::vector<std::vector<int>> group_nodes_;  // [group]: its nodes, ascending
  std::vector<int> order_;                     // scratch
  bool hints_ = false;
  std::vector<int> dirty_nodes_;  // nodes to revisit at the next sync (hints_)
  std::vector<char> node_dirty_;
  std::vector<DeviceId> pool_;
  std::vector<int> claimed_milli_;         // shares claimed in this decision, by device
  std::vector<DeviceId> share_claims_;     // devices with claimed_milli_ > 0
  std::vector<int> node_milli_;            // scratch for fgd
};

// The placement strategies a queue policy can use, by config name.
// Fractional jobs (gpu_milli < 1000): first_fit, random and spread use the ShareRule of
// the same idea; packed, best_fit and fastest_type use best fit; fgd uses FGD.
// best_fit equals packed for whole-GPU jobs.
// yarn: strict per-node consolidation (FreeDevices::node_strict); fractional jobs as packed.
// topology_tree: Slurm's topology/tree selection (FreeDevices::tree) over the scenario's
// racks and pods; fractional jobs as packed.
enum class Placement { kFirstFit, kRandom, kPacked, kSpread, kFastestType, kBestFit, kFgd, kYarn, kTopologyTree };
Placement parse_placement(const std::string& name);  // throws std::invalid_argument
const char* to_string(Placement p);
inline constexpr const char* kPlacementNames = "first_fit, random, packed, spread, fastest_type, best_fit, fgd, yarn, topology_tree";

// Whole-device placement over an explicit free set, by topology (the queue-tree engine's:
// its free set leaves out the devices this decision already gave away). `free` by device
// (non-zero: may be taken), `node_ok` by node (zero: not a candidate, e.g. another
// datacenter or device type). Appends `n` devices to
// `out` (lowest ids first within a node) and returns true, or returns false, appending
// nothing, when the candidates hold fewer than `n`. O(devices + nodes log nodes).
//   kFirstFit: the lowest-numbered free devices.
//   kBinpack:  Volcano's binpack: the fullest node that still holds the whole job, else
//              the fullest nodes first (fewest free devices, ties by lower id).
//   kNvlink:   Volcano's network-topology-aware idea on schedsim's topology: one node if
//              it fits (binpack), else one NVLink domain (the fullest that holds the job,
//              binpack inside), else the fewest racks (most free first), within them the
//              emptiest NVLink domains first (fewest domains), binpack inside each.
enum class TopologyPick : std::uint8_t { kFirstFit, kBinpack, kNvlink };
struct TopologyLayout {
  std::vector<int> domain_of_node;  // NVLink domain per node; empty: each node its own
  std::vector<int> rack_of_node;    // rack per node; empty: one rack
};
bool pick_devices(const ClusterSpec& spec, const std::vector<char>& free, const std::vector<char>& node_ok, int n, TopologyPick rule,
                  const TopologyLayout& layout, std::vector<DeviceId>& out);

}  // namespace schedsim
