// Error types at the simulator's boundaries. Every message names where the problem is
// (file and line, config key, policy and action) and, where there is one, the fix.
#pragma once

#include <stdexcept>
#include <string>

namespace schedsim {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: a config key, a trace row, a missing file.
class InputError : public Error {
 public:
  using Error::Error;
  // "where: what", e.g. "jobs.csv:17: duration_s: must be > 0, got -3".
  InputError(const std::string& where, const std::string& what) : Error(where + ": " + what) {}
};

// A policy asked for something the kernel cannot do (double-booking, unknown job...).
class PolicyError : public Error {
 public:
  using Error::Error;
};

// A kernel invariant was violated: always a bug in schedsim, never the user's input.
class InvariantError : public Error {
 public:
  using Error::Error;
};

}  // namespace schedsim
