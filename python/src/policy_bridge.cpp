#include "policy_bridge.hpp"

#include <cmath>
#include <sstream>

#include <pybind11/stl.h>

#include "policies/queue_order.hpp"
#include "base/error.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim::python {

namespace {

std::string seconds_text(Tick t) {
  std::ostringstream s;
  s << t.seconds();
  return s.str();
}

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

// A job argument: a Job from the view, or its slot number.
JobSlot slot_of(const py::object& job) {
  if (py::isinstance<JobInfo>(job)) return job.cast<const JobInfo&>().slot;
  if (py::isinstance<py::int_>(job) && !py::isinstance<py::bool_>(job)) return job.cast<JobSlot>();
  throw py::type_error("job: expected a schedsim Job (from view.pending or view.running) or its slot (int), got " + type_name(job));
}

std::vector<DeviceId> devices_of(const py::object& devices) {
  if (py::isinstance<py::str>(devices) || !py::hasattr(devices, "__iter__"))
    throw py::type_error("devices: expected a sequence of device ids (int), got " + type_name(devices));
  std::vector<DeviceId> out;
  for (auto d : devices) {
    if (!py::hasattr(d, "__index__") || py::isinstance<py::bool_>(d))
      throw py::type_error("devices: expected device ids (int), got an item of type " + type_name(d));
    out.push_back(py::int_(py::reinterpret_borrow<py::object>(d)).cast<DeviceId>());
  }
  return out;
}

}  // namespace

const SchedulerView& PolicyView::get() const {
  if (!view_) throw std::runtime_error("this schedsim View belongs to a decision point that is over; use it only inside the policy call");
  return *view_;
}

JobInfo job_info(const SchedulerView& view, JobSlot slot, const InformationModel& information) {
  const JobView& j = view.job(slot);
  JobInfo info;
  info.slot = slot;
  info.id = j.id();
  info.submit_s = j.submit().seconds();
  info.attained_work_s = attained_work_s(view, j);
  if (information.is_oracle()) {  // the clairvoyant view of old
    info.duration_s = information.total_work_s(j);  // oracle: the true duration
    info.estimate_s = j.estimate_s();
    info.remaining_work_s = information.remaining_work_s(view, j);  // oracle: the kernel's remaining work
  } else {
    // Only what the level provides: an estimate (the column, or the noisy draw) and the
    // remaining time derived from it, never the true duration.
    const double nan = std::nan("");
    const bool known = information.level() == InformationLevel::kEstimates &&
                       (information.source() == EstimateSource::kNoisy || j.has_estimate());
    info.duration_s = nan;
    info.estimate_s = known ? information.estimated_total_s(j) : nan;
    info.remaining_work_s = known ? information.estimated_remaining_s(view, j) : nan;
  }
  info.deadline_s = j.deadline_s();
  info.priority = j.priority();
  info.start_s = j.status() == JobStatus::kPending && j.preemptions() == 0 ? std::nan("") : j.start().seconds();
  info.num_gpus = j.num_gpus();
  info.min_gpus = j.min_gpus();
  info.max_gpus = j.max_gpus();
  info.user = j.user();
  info.group = j.group();
  info.model = j.model();
  info.gpu_type = j.gpu_type();
  info.status = to_string(j.status());
  info.arrival_seq = j.arrival_seq();
  info.preemptions = j.preemptions();
  info.devices = j.devices();
  return info;
}

PythonPolicy::PythonPolicy(py::object object, InformationModel information) : object_(std::move(object)), information_(std::move(information)) {
  if (!py::hasattr(object_, "decide") || !PyCallable_Check(object_.attr("decide").ptr()))
    throw py::type_error("policy: expected a policy name (str), a config dict or an object with a decide(view) method, got " +
                         type_name(object_));
  decide_ = object_.attr("decide");
  if (py::hasattr(object_, "on_job_queued")) on_queued_ = object_.attr("on_job_queued");
  if (py::hasattr(object_, "on_job_finished")) on_finished_ = object_.attr("on_job_finished");
  py::object n = py::getattr(object_, "name", py::none());
  name_ = py::isinstance<py::str>(n) && !n.cast<std::string>().empty() ? n.cast<std::string>() : type_name(object_);
}

PythonPolicy::~PythonPolicy() {
  py::gil_scoped_acquire gil;  // the Python references are dropped under the GIL
  object_ = py::object();
  decide_ = py::object();
  on_queued_ = py::object();
  on_finished_ = py::object();
}

void PythonPolicy::call(const char* what, const py::object& method, const SchedulerView& view, const py::object* job, py::object* result) {
  auto pv = std::make_shared<PolicyView>(&view, &information_);
  py::object pyview = py::cast(pv);
  try {
    py::object r = job ? method(pyview, *job) : method(pyview);
    if (result) *result = std::move(r);
  } catch (py::error_already_set& e) {
    pv->invalidate();
    // The original exception goes on up, with the decision point named on it.
    const std::string note = "in schedsim policy '" + name_ + "' " + what + " at t=" + seconds_text(view.now()) + " s";
    if (py::hasattr(e.value(), "add_note")) e.value().attr("add_note")(note);
    throw;
  }
  pv->invalidate();
}

void PythonPolicy::on_job_queued(const SchedulerView& view, JobSlot job) {
  if (!on_queued_) return;
  py::gil_scoped_acquire gil;
  py::object j = py::cast(job_info(view, job, information_));
  call("on_job_queued()", on_queued_, view, &j, nullptr);
}

void PythonPolicy::on_job_finished(const SchedulerView& view, JobSlot job) {
  if (!on_finished_) return;
  py::gil_scoped_acquire gil;
  py::object j = py::cast(job_info(view, job, information_));
  call("on_job_finished()", on_finished_, view, &j, nullptr);
}

void PythonPolicy::decide(const SchedulerView& view, ActionBatch& out) {
  py::gil_scoped_acquire gil;
  py::object result;
  call("decide()", decide_, view, nullptr, &result);
  if (result.is_none()) return;
  const auto bad = [&](const std::string& what) {
    return py::type_error("policy '" + name_ + "' at t=" + seconds_text(view.now()) + " s: decide() must return a list of schedsim.Start, "
                          "schedsim.Preempt, schedsim.Move or schedsim.SetCooling (or None), got " + what);
  };
  if (!py::hasattr(result, "__iter__") || py::isinstance<py::str>(result) || py::isinstance<py::dict>(result))
    throw bad("a " + type_name(result));
  std::size_t i = 0;
  for (auto item : result) {
    if (py::isinstance<StartAction>(item)) {
      const auto& a = item.cast<const StartAction&>();
      out.start(a.job, Span<DeviceId>(a.devices.data(), a.devices.size()));
    } else if (py::isinstance<PreemptAction>(item)) {
      out.preempt(item.cast<const PreemptAction&>().job);
    } else if (py::isinstance<MoveAction>(item)) {
      const auto& a = item.cast<const MoveAction&>();
      out.move(a.job, Span<DeviceId>(a.devices.data(), a.devices.size()));
    } else if (py::isinstance<SetCoolingAction>(item)) {
      const auto& a = item.cast<const SetCoolingAction&>();
      out.set_cooling_setpoint(a.datacenter, a.setpoint_c);
    } else {
      throw bad("item " + std::to_string(i) + " of type " + type_name(item));
    }
    ++i;
  }
}

void bind_policy_bridge(py::module_& m) {
  py::class_<JobInfo>(m, "Job", "A job at a decision point (a copy: safe to keep).")
      .def_readonly("slot", &JobInfo::slot, "the kernel's handle for the job while it is in the system")
      .def_readonly("id", &JobInfo::id)
      .def_readonly("submit_s", &JobInfo::submit_s)
      .def_readonly("num_gpus", &JobInfo::num_gpus)
      .def_readonly("min_gpus", &JobInfo::min_gpus, "elastic jobs: fewest devices (0 = rigid)")
      .def_readonly("max_gpus", &JobInfo::max_gpus, "elastic jobs: most devices (0 = rigid)")
      .def_readonly("duration_s", &JobInfo::duration_s, "work at full speed (rate 1), seconds; NaN unless the scenario declares information: oracle")
      .def_readonly("estimate_s", &JobInfo::estimate_s, "the job's estimate as the scenario's information: gives it, NaN when unknown")
      .def_readonly("remaining_work_s", &JobInfo::remaining_work_s, "work left now, seconds at rate 1 (under estimates: max(estimate - attained, floor x estimate); NaN when unknown)")
      .def_readonly("attained_work_s", &JobInfo::attained_work_s, "work done so far, seconds at rate 1 (known at every information level)")
      .def_readonly("deadline_s", &JobInfo::deadline_s, "absolute, NaN when none")
      .def_readonly("priority", &JobInfo::priority)
      .def_readonly("start_s", &JobInfo::start_s, "first start, NaN when never started")
      .def_readonly("user", &JobInfo::user)
      .def_readonly("group", &JobInfo::group)
      .def_readonly("model", &JobInfo::model)
      .def_readonly("gpu_type", &JobInfo::gpu_type)
      .def_readonly("status", &JobInfo::status, "pending, running or stopping")
      .def_readonly("arrival_seq", &JobInfo::arrival_seq)
      .def_readonly("preemptions", &JobInfo::preemptions)
      .def_readonly("devices", &JobInfo::devices, "devices held (running or stopping jobs)")
      .def("__repr__", [](const JobInfo& j) {
        return "Job(id=" + j.id + ", slot=" + std::to_string(j.slot) + ", num_gpus=" + std::to_string(j.num_gpus) + ", status=" + j.status + ")";
      });

  py::class_<StartAction>(m, "Start", "Start a pending job on exactly these free devices (gang: all or nothing).")
      .def(py::init([](const py::object& job, const py::object& devices) { return StartAction{slot_of(job), devices_of(devices)}; }),
           py::arg("job"), py::arg("devices"))
      .def_readonly("job", &StartAction::job)
      .def_readonly("devices", &StartAction::devices)
      .def("__repr__", [](const StartAction& a) { return "Start(job=" + std::to_string(a.job) + ", devices=" + std::to_string(a.devices.size()) + " devices)"; });
  py::class_<PreemptAction>(m, "Preempt", "Stop a running job: it saves a checkpoint and returns to the queue.")
      .def(py::init([](const py::object& job) { return PreemptAction{slot_of(job)}; }), py::arg("job"))
      .def_readonly("job", &PreemptAction::job)
      .def("__repr__", [](const PreemptAction& a) { return "Preempt(job=" + std::to_string(a.job) + ")"; });
  py::class_<MoveAction>(m, "Move", "Migrate or resize a running job to a new device set (may overlap the old).")
      .def(py::init([](const py::object& job, const py::object& devices) { return MoveAction{slot_of(job), devices_of(devices)}; }),
           py::arg("job"), py::arg("devices"))
      .def_readonly("job", &MoveAction::job)
      .def_readonly("devices", &MoveAction::devices);
  py::class_<SetCoolingAction>(m, "SetCooling", "Set a datacenter's cooling set-point (°C); needs a thermal model (docs/energy.md).")
      .def(py::init([](int datacenter, double setpoint_c) { return SetCoolingAction{datacenter, setpoint_c}; }), py::arg("datacenter"),
           py::arg("setpoint_c"))
      .def_readonly("datacenter", &SetCoolingAction::datacenter)
      .def_readonly("setpoint_c", &SetCoolingAction::setpoint_c)
      .def("__repr__", [](const SetCoolingAction& a) {
        return "SetCooling(datacenter=" + std::to_string(a.datacenter) + ", setpoint_c=" + std::to_string(a.setpoint_c) + ")";
      });

  py::class_<PolicyView, std::shared_ptr<PolicyView>>(m, "View", "The simulator at a decision point (read-only, valid during the call).")
      .def_property_readonly("now", [](const PolicyView& v) { return v.get().now().seconds(); }, "simulated time, seconds")
      .def_property_readonly("pending", [](const PolicyView& v) {
        const SchedulerView& view = v.get();
        py::list out;
        for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) out.append(job_info(view, s, v.information()));
        return out;
      }, "pending jobs in queue order (arrival, or return after a preemption)")
      .def_property_readonly("running", [](const PolicyView& v) {
        const SchedulerView& view = v.get();
        py::list out;
        for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) out.append(job_info(view, s, v.information()));
        return out;
      }, "running and stopping jobs in the order they were placed")
      .def_property_readonly("thermal", [](const PolicyView& v) {
        py::list out;
        if (const ThermalModel* t = v.get().thermal()) {
          for (int s = 0; s < t->num_sites(); ++s) {
            py::dict d;
            d["name"] = t->site(s).name;
            d["outside_c"] = t->outside_c(s);
            d["setpoint_c"] = t->setpoint_c(s);
            d["supply_c"] = t->supply_c(s);
            d["pue"] = t->pue(s);
            d["min_setpoint_c"] = t->site(s).min_setpoint_c;
            d["max_setpoint_c"] = t->site(s).max_setpoint_c;
            out.append(d);
          }
        }
        return out;
      }, "per datacenter (one for a cluster): name, outside_c, setpoint_c, supply_c, pue, min/max_setpoint_c; empty without a thermal model")
      .def_property_readonly("num_pending", [](const PolicyView& v) { return v.get().num_pending(); })
      .def_property_readonly("num_running", [](const PolicyView& v) { return v.get().num_running(); })
      .def_property_readonly("free_devices", [](const PolicyView& v) {
        const ClusterState& c = v.get().cluster_state();
        std::vector<DeviceId> out;
        out.reserve(static_cast<std::size_t>(c.free_devices()));
        for (DeviceId d = c.next_free(0); d >= 0; d = c.next_free(d + 1)) out.push_back(d);
        return out;
      }, "free device ids, ascending")
      .def_property_readonly("num_free", [](const PolicyView& v) { return v.get().cluster_state().free_devices(); })
      .def_property_readonly("num_devices", [](const PolicyView& v) { return v.get().cluster().num_devices(); })
      .def_property_readonly("num_nodes", [](const PolicyView& v) { return v.get().cluster().num_nodes(); })
      .def_property_readonly("device_types", [](const PolicyView& v) { return v.get().cluster().device_types(); })
      .def_property_readonly("free_per_node", [](const PolicyView& v) {
        const SchedulerView& view = v.get();
        std::vector<int> out;
        for (int n = 0; n < view.cluster().num_nodes(); ++n) out.push_back(view.cluster_state().free_on_node(n));
        return out;
      })
      .def("node_of", [](const PolicyView& v, DeviceId d) {
        const ClusterSpec& c = v.get().cluster();
        if (d < 0 || d >= c.num_devices()) throw py::value_error("device: expected 0.." + std::to_string(c.num_devices() - 1) + ", got " + std::to_string(d));
        return c.node_of(d);
      }, py::arg("device"))
      .def("device_type", [](const PolicyView& v, DeviceId d) {
        const ClusterSpec& c = v.get().cluster();
        if (d < 0 || d >= c.num_devices()) throw py::value_error("device: expected 0.." + std::to_string(c.num_devices() - 1) + ", got " + std::to_string(d));
        return c.device_type_of(d);
      }, py::arg("device"))
      .def("node_devices", [](const PolicyView& v, int n) {
        const ClusterSpec& c = v.get().cluster();
        if (n < 0 || n >= c.num_nodes()) throw py::value_error("node: expected 0.." + std::to_string(c.num_nodes() - 1) + ", got " + std::to_string(n));
        const NodeSpec& node = c.node(n);
        std::vector<DeviceId> out;
        for (int i = 0; i < node.num_devices; ++i) out.push_back(node.first_device + i);
        return out;
      }, py::arg("node"), "the device ids of node `node`");
}

}  // namespace schedsim::python
