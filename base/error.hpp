// Error types at the simulator's boundaries. Every message names where the problem is
// (file and line, config key, policy and action) and, where there is one, the fix.
// The exit statuses of the `schedsim` command line for each class are below
// (docs/errors.md has the table).
#pragma once

#include <stdexcept>
#include <string>

#include "base/text_checks.hpp"

namespace schedsim {

// The exit statuses of `schedsim`, one per class of error (docs/errors.md#exit-statuses).
namespace exit_status {
constexpr int kSuccess = 0;
constexpr int kInputError = 1;     // InputError: a config, trace, file or option value
constexpr int kUsageError = 2;     // UsageError and CLI11's parse errors: the command line
constexpr int kPolicyError = 1;    // PolicyError: a policy asked for something illegal
constexpr int kInternalError = 3;  // InvariantError and anything unexpected: a schedsim bug
constexpr int kSignalBase = 128;   // stopped by signal N: 128 + N (130 Ctrl-C, 143 SIGTERM)
}  // namespace exit_status

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: a config key, a trace row, a missing file. The message usually holds
// user text (paths, keys, values), so control characters in it are escaped
// (terminal_safe): a message can never rewrite the terminal it is printed on.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(terminal_safe(message)) {}
  // "where: what", e.g. "jobs.csv:17: duration_s: must be > 0, got -3".
  InputError(const std::string& where, const std::string& what) : Error(terminal_safe(where + ": " + what)) {}
};

// A malformed command line: an unknown command or option, an option given twice, a
// missing argument, options that do not go together. `hint` is the next step, e.g.
// "run 'schedsim run --help' for the options"; the CLI prints it on a second line.
class UsageError : public InputError {
 public:
  // `where` may be empty when `what` names the command itself ("unknown command 'rnu'").
  UsageError(const std::string& where, const std::string& what, const std::string& hint)
      : InputError(where.empty() ? what : where + ": " + what), hint_(terminal_safe(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// A policy asked for something the kernel cannot do (double-booking, unknown job...).
// Job ids and policy names in the message are user text: escaped like InputError's.
class PolicyError : public Error {
 public:
  explicit PolicyError(const std::string& message) : Error(terminal_safe(message)) {}
};

// A kernel invariant was violated: always a bug in schedsim, never the user's input.
// The message may span lines (the last events before the violation); the CLI escapes
// control characters in each line when it prints it.
class InvariantError : public Error {
 public:
  using Error::Error;
};

}  // namespace schedsim
