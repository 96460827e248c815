// Command-line errors in the house style. CLI11 reports a malformed command line in
// its own words ("Could not convert: --seed = abc", exit 104..114); schedsim says
// `schedsim: error: --seed: expected ...` plus a hint line, exits with
// exit_status::kUsageError (2), and suggests the nearest command or option for a typo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/error.hpp"

namespace schedsim {

// The command the arguments name, outermost first: {app, trace, inspect} for
// "schedsim trace inspect x.csv". `args` are argv[1..]; `*rest` (when given) is the
// index of the first argument after the command names.
std::vector<const CLI::App*> command_chain(const CLI::App& app, const std::vector<std::string>& args, std::size_t* rest = nullptr);

// "schedsim trace inspect" for that chain.
std::string command_name(const std::vector<const CLI::App*>& chain);

// Throws UsageError for an option given more than once, unless it is in `repeatable`
// (long names such as "--set"). CLI11 would take the last value of a flag or a list
// option silently, and reports a repeated value option in its own words.
void check_repeated_options(const CLI::App& app, const std::vector<std::string>& args, const std::vector<std::string>& repeatable);

// The house-style UsageError for a CLI11 parse error (not for --help / --version).
UsageError usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args);

// Validators with house-style messages; their descriptions are what CLI11's own
// (IsMember, NonNegativeNumber, Range) show in --help, so the help texts do not change.
// "'fo' is not allowed; choose one of: error, skip" (with a did-you-mean).
CLI::Validator one_of(const std::vector<std::string>& allowed);
// Decimal digits only, within [min, max]: CLI11 would wrap "-5" and clamp
// "99999999999999999999" into an unsigned option. `help` is the --help text ("" = none).
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max, const std::string& help = "");

// Integer options of `app` and all its subcommands follow the config's rule for integers
// (sim/config_node.hpp, parse_decimal_int): no leading zeros and no 0x/0o/0b prefixes.
// CLI11 itself reads "010" as octal 8. Adds a validator without a description, so the
// --help texts do not change; call it once every option is defined.
void reject_leading_zeros(CLI::App& app);

}  // namespace schedsim
