// Ctrl-C (SIGINT) and SIGTERM during a run: the handler only records the signal; the
// simulation stops at the next event boundary (InterruptObserver throws Interrupted), the
// runner saves what it has under names that cannot pass for finished results and says
// where, and the CLI exits with 128 + the signal number. A second signal while stopping
// kills the process the default way.
#pragma once

#include <functional>
#include <string>

#include "base/error.hpp"
#include "sim/observer.hpp"

namespace schedsim {

// Installs the SIGINT and SIGTERM handlers for its lifetime (one per process at a time;
// the previous handlers come back on destruction).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// The signal received since the guard was installed, 0 when none.
int pending_interrupt();
const char* signal_name(int signal);

// A run stopped by a signal. what() says what was kept and where.
class Interrupted : public Error {
 public:
  Interrupted(int signal, const std::string& what) : Error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Interrupted ("interrupted by SIGTERM while <doing>; nothing was written") when a
// signal arrived: long loops before the simulation starts (reading a scenario with many
// datacenters or node groups) call it, so that Ctrl-C is honoured promptly there too.
void throw_if_interrupted(const std::string& doing);

// For TraceOptions::poll_interrupt: throws Interrupted when a signal came while the
// trace `path` was being read (before anything was simulated or written).
void throw_if_interrupted_reading(const std::string& path);

// Throws Interrupted after the first event that follows a signal; or, once
// defer_to(hook) was called (a run that takes snapshots), calls `hook` instead, once, so
// that the run stops at the end of the instant, after a last snapshot.
class InterruptObserver : public Observer {
 public:
  void after_event(const Simulator& sim) override;
  void defer_to(std::function<void()> hook) { deferred_ = std::move(hook); }

 private:
  std::function<void()> deferred_;
  bool deferred_called_ = false;
};

}  // namespace schedsim
