// What `schedsim` prints for the exception that ends a command, and its exit status:
// one place for the classes of errors, their prefixes and exit statuses
// (docs/errors.md#exit-statuses). Every message is made terminal-safe here.
#pragma once

#include <exception>
#include <string>

namespace schedsim {

struct ErrorReport {
  std::string text;  // the lines for stderr, each ending in '\n'
  int status = 0;    // one of exit_status::*
};

// `error` is the exception caught at the top of main; `phase` says what the command was
// doing ("loading the scenario"), for the errors whose message does not say it (out of
// memory, a std::sto* conversion, a JSON library error).
ErrorReport report_error(std::exception_ptr error, const std::string& phase);

// nlohmann::json's message without its "[json.exception.parse_error.101] " tag, e.g.
// "parse error at line 1, column 2: syntax error ...", for messages that quote it.
std::string without_json_prefix(const std::string& what);

}  // namespace schedsim
