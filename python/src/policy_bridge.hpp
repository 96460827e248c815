// Policies written in Python, run inside the C++ simulator. At each decision point the
// kernel calls PythonPolicy::decide with the GIL released everywhere else; the bridge
// takes the GIL, hands the Python object a read-only View (valid only during the call)
// and turns the actions it returns (Start, Preempt, Move) into an ActionBatch, which the
// kernel validates like any other policy's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "policies/information.hpp"
#include "sim/policy.hpp"

namespace schedsim::python {

// One job as the Python policy sees it: a copy, safe to keep after decide() returns.
struct JobInfo {
  JobSlot slot = kNoJob;
  std::string id;
  // duration_s, estimate_s and remaining_work_s are what the scenario's information model
  // lets a scheduler know (NaN for what it hides); attained_work_s is always known.
  double submit_s = 0, duration_s = 0, estimate_s = 0, remaining_work_s = 0, attained_work_s = 0, deadline_s = 0, priority = 0, start_s = 0;
  int num_gpus = 0, min_gpus = 0, max_gpus = 0;
  std::string user, group, model, gpu_type, status;
  std::uint64_t arrival_seq = 0;
  std::uint32_t preemptions = 0;
  std::vector<DeviceId> devices;
};

struct StartAction {
  JobSlot job = kNoJob;
  std::vector<DeviceId> devices;
};
struct PreemptAction {
  JobSlot job = kNoJob;
};
struct MoveAction {
  JobSlot job = kNoJob;
  std::vector<DeviceId> devices;
};
struct SetCoolingAction {
  int datacenter = 0;
  double setpoint_c = 0.0;
};

// The decision point as Python sees it. Reads through to the kernel's view, so it is
// invalid (every access raises) once decide() has returned.
class PolicyView {
 public:
  PolicyView(const SchedulerView* view, const InformationModel* information) : view_(view), information_(information) {}
  void invalidate() { view_ = nullptr; }
  const SchedulerView& get() const;
  const InformationModel& information() const { return *information_; }

 private:
  const SchedulerView* view_;
  const InformationModel* information_;
};

class PythonPolicy : public Policy {
 public:
  // `object` has a decide(view) method; on_job_queued(view, job) and
  // on_job_finished(view, job) are called only when it defines them.
  // `information`: the scenario's (policy_context), which decides what Job shows.
  explicit PythonPolicy(py::object object, InformationModel information = {});
  ~PythonPolicy() override;
  std::string name() const override { return name_; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void on_job_finished(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;

 private:
  void call(const char* what, const py::object& method, const SchedulerView& view, const py::object* job, py::object* result);
  py::object object_, decide_, on_queued_, on_finished_;
  std::string name_;
  InformationModel information_;
  std::vector<DeviceId> devices_;
};

JobInfo job_info(const SchedulerView& view, JobSlot slot, const InformationModel& information);

}  // namespace schedsim::python
