#include "app/cli_errors.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>

#include "base/config_node.hpp"
#include "base/text_checks.hpp"

namespace schedsim {
namespace {

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// "-5" and "-0.5" are values (negative numbers), not options.
bool looks_like_option(const std::string& a) {
  if (a.size() < 2 || a[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.');
}

// The name an argument gives an option: "--seed" for "--seed=5", "-j" for "-j4".
std::string option_name_of(const std::string& arg) {
  if (starts_with(arg, "--")) return arg.substr(0, arg.find('='));
  return arg.substr(0, 2);
}

const CLI::Option* find_option(const CLI::App& cmd, const std::string& typed) {
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_positional() && o->get_name() == typed) return o;
    if (starts_with(typed, "--")) {
      for (const auto& l : o->get_lnames())
        if ("--" + l == typed) return o;
    } else if (typed.size() == 2 && typed[0] == '-') {
      for (const auto& s : o->get_snames())
        if ("-" + s == typed) return o;
    }
    if (o->get_name() == typed) return o;  // the name CLI11's messages use
  }
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> positional_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options())
    if (o->get_positional()) names.push_back(o->get_name());
  return names;
}

// The leaf commands (those without subcommands) under `app`, with their names.
void leaf_commands(const CLI::App& app, const std::string& name, std::vector<std::pair<std::string, const CLI::App*>>& out) {
  const auto subs = subcommands_of(app);
  if (subs.empty()) out.emplace_back(name, &app);
  for (const CLI::App* s : subs) leaf_commands(*s, name + " " + s->get_name(), out);
}

std::string options_hint(const std::string& command) { return "run '" + command + " --help' for the options"; }
std::string commands_hint(const std::string& command) { return "run '" + command + " --help' for what each command does"; }

std::string what_a_type_is(const CLI::Option* o) {
  if (!o) return "a value of another type";
  const std::string type = o->get_type_name().substr(0, o->get_type_name().find(':'));
  if (type == "FLOAT") return "a number";
  if (type == "INT") return "an integer";
  if (type == "UINT") return "a whole number (0 or more)";
  return "a value of type " + type;
}

// The error for `arg`, an option that `cmd` does not have.
UsageError unknown_option(const CLI::App& app, const CLI::App& cmd, const std::string& command, const std::string& arg) {
  const std::string name = option_name_of(arg);
  // Long names only: any one-letter option is one edit from any other.
  std::vector<std::string> long_names;
  for (const auto& n : option_names(cmd))
    if (starts_with(n, "--")) long_names.push_back(n);
  std::string what = "'" + command + "' has no option '" + name + "'" + (starts_with(name, "--") ? did_you_mean(name, long_names) : "");
  if (what.back() == '\'') {  // no near miss here: is it another command's option?
    std::vector<std::pair<std::string, const CLI::App*>> leaves;
    leaf_commands(app, "schedsim", leaves);
    std::vector<std::string> owners;
    for (const auto& [leaf_name, leaf] : leaves)
      if (leaf != &cmd && find_option(*leaf, name) && name != "--help" && name != "-h") owners.push_back("'" + leaf_name + "'");
    if (!owners.empty() && owners.size() <= 3) what += " (it is an option of " + join(owners, " and ") + ")";
    for (const CLI::App* s : subcommands_of(cmd))  // "trace --formats" for "trace formats"
      if (starts_with(name, "--") && s->get_name() == name.substr(2)) what += " (did you mean the command '" + command + " " + s->get_name() + "'?)";
  }
  return UsageError("", what, options_hint(command));
}

}  // namespace

std::vector<const CLI::App*> command_chain(const CLI::App& app, const std::vector<std::string>& args, std::size_t* rest) {
  std::vector<const CLI::App*> chain{&app};
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto subs = subcommands_of(*chain.back());
    if (subs.empty() || a == "--") break;
    if (looks_like_option(a)) continue;  // a flag of a command with subcommands (--help, --version)
    const CLI::App* next = nullptr;
    for (const CLI::App* s : subs)
      if (s->get_name() == a) next = s;
    if (!next) break;
    chain.push_back(next);
  }
  if (rest) *rest = i;
  return chain;
}

std::string command_name(const std::vector<const CLI::App*>& chain) {
  std::string name = "schedsim";
  for (std::size_t i = 1; i < chain.size(); ++i) name += " " + chain[i]->get_name();
  return name;
}

void check_repeated_options(const CLI::App& app, const std::vector<std::string>& args, const std::vector<std::string>& repeatable) {
  std::size_t rest = 0;
  const auto chain = command_chain(app, args, &rest);
  const CLI::App& cmd = *chain.back();
  const std::string command = command_name(chain);
  for (std::size_t i = rest; i < args.size() && args[i] != "--"; ++i)
    if (option_name_of(args[i]) == "--help" || option_name_of(args[i]) == "-h") return;  // the help wins, whatever else is there
  std::map<const CLI::Option*, int> seen;
  for (std::size_t i = rest; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (!looks_like_option(a)) continue;
    const std::string name = option_name_of(a);
    const CLI::Option* o = find_option(cmd, name);
    if (!o || ++seen[o] < 2) continue;
    bool allowed = false;
    std::vector<std::string> may_repeat;
    for (const auto& r : repeatable) {
      // "--set" (every command that has it) or "compare --policy" (that command's only).
      const auto space = r.rfind(' ');
      const std::string r_name = space == std::string::npos ? r : r.substr(space + 1);
      if (space != std::string::npos && r.substr(0, space) != cmd.get_name()) continue;
      const CLI::Option* ro = find_option(cmd, r_name);
      if (!ro) continue;
      may_repeat.push_back(r_name);
      if (ro == o) allowed = true;
    }
    if (allowed) continue;
    const std::string canonical = o->get_lnames().empty() ? name : "--" + o->get_lnames().front();
    std::string what = "given more than once; give it once";
    if (!may_repeat.empty()) what += " (of the options of '" + command + "', only " + join(may_repeat, " and ") + " may be repeated)";
    throw UsageError(canonical, what, options_hint(command));
  }
}

UsageError usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  std::size_t rest = 0;
  const auto chain = command_chain(app, args, &rest);
  const CLI::App& cmd = *chain.back();
  const std::string command = command_name(chain);
  const std::string msg = e.what();
  const auto subs = subcommands_of(cmd);

  if (!subs.empty()) {  // a command that needs a subcommand did not get a known one
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    const std::string prefix = chain.size() > 1 ? command.substr(9) + " " : "";  // "trace " under schedsim trace
    for (std::size_t i = 0; i < args.size() && rest >= args.size(); ++i) {
      if (args[i] == "--") break;
      if (looks_like_option(args[i]) && !find_option(cmd, option_name_of(args[i]))) return unknown_option(app, cmd, command, args[i]);
    }
    if (rest < args.size() && args[rest] != "--") {
      const std::string near = closest_match(args[rest], names);
      return UsageError("",
                        "unknown command '" + prefix + args[rest] + "'" + (near.empty() ? "" : " (did you mean '" + prefix + near + "'?)") +
                            "; the " + prefix + "commands are: " + join(names),
                        commands_hint(command));
    }
    return UsageError("", "'" + command + "' needs a command: " + join(names), commands_hint(command));
  }

  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::string one = "The following argument was not expected: ", many = "The following arguments were not expected: ";
    std::string extra;
    if (starts_with(msg, one)) extra = msg.substr(one.size());
    else if (starts_with(msg, many)) extra = msg.substr(many.size(), msg.find(' ', many.size()) - many.size());
    if (!extra.empty()) {
      if (looks_like_option(extra)) return unknown_option(app, cmd, command, extra);
      const auto positionals = positional_names(cmd);
      if (positionals.empty()) return UsageError("", "'" + command + "' takes no arguments, got '" + extra + "'", options_hint(command));
      return UsageError("", "unexpected argument '" + extra + "' ('" + command + "' takes only: " + join(positionals) + ")",
                        options_hint(command));
    }
  } else if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    const std::string suffix = " is required";
    if (msg.size() > suffix.size() && msg.compare(msg.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string name = msg.substr(0, msg.size() - suffix.size());
      if (const CLI::Option* o = find_option(cmd, name)) {
        if (o->get_positional())
          return UsageError("", "'" + command + "' needs its " + name + " argument (" + o->get_description() + ")", options_hint(command));
        return UsageError("", "'" + command + "' needs " + name + " (" + o->get_description() + ")", options_hint(command));
      }
    }
  } else if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    const std::string prefix = "Could not convert: ";
    const auto eq = msg.find(" = ");
    if (starts_with(msg, prefix) && eq != std::string::npos) {
      const std::string name = msg.substr(prefix.size(), eq - prefix.size());
      return UsageError(name, "expected " + what_a_type_is(find_option(cmd, name)) + ", got '" + msg.substr(eq + 3) + "'", options_hint(command));
    }
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const auto colon = msg.find(": ");
    if (colon != std::string::npos) {
      const std::string name = msg.substr(0, colon), detail = msg.substr(colon + 2);
      const CLI::Option* o = find_option(cmd, name);
      if (detail.find("required") != std::string::npos && detail.size() > 8 && detail.compare(detail.size() - 8, 8, " missing") == 0)
        return UsageError(name, "needs a value" + (o ? " (" + o->get_description() + ")" : std::string()), options_hint(command));
      if (starts_with(detail, "At Most")) return UsageError(name, "given more than once; give it once", options_hint(command));
    }
  }
  // ValidationError (our validators write house-style text: "--on-bad-row: 'x' is not
  // allowed; ...") and anything else CLI11 says: its words, our frame.
  return UsageError("", msg, options_hint(command));
}

CLI::Validator one_of(const std::vector<std::string>& allowed) {
  return CLI::Validator(
      [allowed](std::string& value) -> std::string {
        for (const auto& a : allowed)
          if (a == value) return "";
        return "'" + value + "' is not allowed" + did_you_mean(value, allowed) + "; choose one of: " + join(allowed);
      },
      "{" + join(allowed, ",") + "}");
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max, const std::string& help) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        bool ok = !value.empty() && value.size() <= 20 && value.find_first_not_of("0123456789") == std::string::npos;
        if (ok) {
          errno = 0;
          const unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
          ok = errno == 0 && v >= min && v <= max;
        }
        if (ok) return "";
        return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + value + "'";
      },
      help);
}

void reject_leading_zeros(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    if (type.rfind("INT", 0) != 0 && type.rfind("UINT", 0) != 0) continue;
    o->check(CLI::Validator(
        [](std::string& text) -> std::string {
          const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
          if (text.size() < sign + 2 || text[sign] != '0') return "";  // "0", "7", "-3": decimal already
          std::int64_t value = 0;
          return parse_decimal_int(text, value);
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) reject_leading_zeros(*sub);
}

}  // namespace schedsim
