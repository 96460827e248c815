#include "app/error_report.hpp"

#include <filesystem>
#include <new>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/interrupt.hpp"
#include "base/error.hpp"
#include "base/text_checks.hpp"

namespace schedsim {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// terminal_safe for each line of a message that spans lines on purpose.
std::string terminal_safe_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) out += terminal_safe(text.substr(start, end - start)) + "\n";
  return out + terminal_safe(text.substr(start));
}

// "out: cannot create directories: Permission denied" for libstdc++'s
// "filesystem error: cannot create directories: Permission denied [out]".
std::string describe_filesystem_error(const std::filesystem::filesystem_error& e) {
  std::string what = e.what();
  const std::string prefix = "filesystem error: ";
  if (starts_with(what, prefix)) what = what.substr(prefix.size());
  if (!e.path1().empty()) {
    const auto bracket = what.find(" [" + e.path1().string() + "]");
    if (bracket != std::string::npos) what = what.substr(0, bracket);
  }
  std::string where = e.path1().string();
  if (!e.path2().empty()) where += " -> " + e.path2().string();
  return where.empty() ? what : where + ": " + what;
}

// std::stoul and friends throw with only their name as the message.
std::string describe_conversion_error(const std::string& what) {
  if (starts_with(what, "sto") && what.find(' ') == std::string::npos)
    return "a number in the input is malformed or out of range (std::" + what + "); please report which input led here";
  return what;
}

ErrorReport line(const std::string& prefix, const std::string& message, int status) {
  return {"schedsim: " + prefix + terminal_safe(message) + "\n", status};
}

}  // namespace

std::string without_json_prefix(const std::string& what) {
  const auto close = what.find("] ");
  return starts_with(what, "[json.exception.") && close != std::string::npos ? what.substr(close + 2) : what;
}

ErrorReport report_error(std::exception_ptr error, const std::string& phase) {
  try {
    std::rethrow_exception(error);
  } catch (const Interrupted& e) {
    return line("", e.what(), exit_status::kSignalBase + e.signal());
  } catch (const UsageError& e) {
    ErrorReport r = line("error: ", e.what(), exit_status::kUsageError);
    if (!e.hint().empty()) r.text += "schedsim: hint: " + terminal_safe(e.hint()) + "\n";
    return r;
  } catch (const InputError& e) {
    return line("error: ", e.what(), exit_status::kInputError);
  } catch (const PolicyError& e) {
    return line("policy error: ", e.what(), exit_status::kPolicyError);
  } catch (const InvariantError& e) {
    return {"schedsim: internal error (please report it): " + terminal_safe_lines(e.what()) + "\n", exit_status::kInternalError};
  } catch (const std::bad_alloc&) {
    return line("error: ",
                "out of memory while " + phase +
                    ": the scenario needs more memory than this machine has; try fewer jobs, a smaller cluster or a part of the trace (schedsim trace sample)",
                exit_status::kInputError);
  } catch (const std::filesystem::filesystem_error& e) {
    return line("error: ", describe_filesystem_error(e), exit_status::kInputError);
  } catch (const nlohmann::json::exception& e) {
    return line("error: ", "while " + phase + ": unexpected JSON: " + without_json_prefix(e.what()), exit_status::kInputError);
  } catch (const std::invalid_argument& e) {
    return line("error: ", "while " + phase + ": " + describe_conversion_error(e.what()), exit_status::kInputError);
  } catch (const std::out_of_range& e) {
    return line("error: ", "while " + phase + ": " + describe_conversion_error(e.what()), exit_status::kInputError);
  } catch (const std::exception& e) {
    return line("error: ", e.what(), exit_status::kInputError);
  } catch (...) {
    return line("internal error (please report it): ", "an exception of unknown type while " + phase, exit_status::kInternalError);
  }
}

}  // namespace schedsim
