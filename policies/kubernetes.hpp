// The Kubernetes default scheduler (kube-scheduler, default profile), as it places the
// pods of distributed training jobs: one pod per scheduling cycle, no gang. A job of n
// GPUs is ceil(n / gpus_per_pod) pods; each pod is filtered (NodeResourcesFit: a node
// with enough free GPUs, of the job's device type) and scored (LeastAllocated: the node
// left with the largest free fraction wins, i.e. spreading), then bound. Bound pods hold
// their GPUs idle until the job's last pod binds (ActionBatch::bind); then it runs.
// Unschedulable pods back off (1 s doubling to 10 s) and are retried when a cluster event
// (GPUs freed) moves them back, as the scheduling queue does. Two large jobs can hold
// each other's missing GPUs forever; `pending_timeout_s` restarts a job that is not fully
// bound in time (docs/policies.md#kubernetes-default-scheduler-kubernetes).
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

struct KubernetesOptions {
  int gpus_per_pod = 0;             // 0 = one pod per node: the node size of the job's device type
  double initial_backoff_s = 1.0;   // podInitialBackoffSeconds
  double max_backoff_s = 10.0;      // podMaxBackoffSeconds
  double pending_timeout_s = 300.0; // restart a job whose pods are not all bound after this; 0 = never
  double restart_backoff_s = 60.0;  // a restarted job's new pods wait this long (>= max_backoff_s)
};

PolicyInfo kubernetes_policy_info();

}  // namespace schedsim
