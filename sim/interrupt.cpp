#include "sim/interrupt.hpp"

#include <csignal>

#include "sim/simulator.hpp"

namespace schedsim {
namespace {

// A signal handler can only talk to the program through a static of this type.
volatile std::sig_atomic_t g_signal = 0;

extern "C" void record_signal(int signal) { g_signal = signal; }

struct sigaction g_previous_int, g_previous_term;

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal takes the default action (terminate)
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int pending_interrupt() { return g_signal; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT (Ctrl-C)";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

void throw_if_interrupted(const std::string& doing) {
  if (const int s = pending_interrupt()) throw Interrupted(s, std::string("interrupted by ") + signal_name(s) + " while " + doing + "; nothing was written");
}

void throw_if_interrupted_reading(const std::string& path) {
  if (const int s = pending_interrupt()) {
    throw Interrupted(s, std::string("interrupted by ") + signal_name(s) + " while reading the trace " + path +
                             "; nothing was simulated and no results were written");
  }
}

void InterruptObserver::after_event(const Simulator& sim) {
  if (const int s = pending_interrupt()) {
    if (deferred_) {
      if (!deferred_called_) deferred_();
      deferred_called_ = true;
      return;
    }
    throw Interrupted(s, std::string("interrupted by ") + signal_name(s) + " at simulated time " + format_seconds(sim.now()) + " s");
  }
}

}  // namespace schedsim
