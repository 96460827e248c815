// Strict, located access to a YAML configuration tree. Every accessor either returns a
// value of the requested type or throws InputError naming the file, the line and the key
// path ("run.yaml:7: workload.synthetic.num_jobs: expected a positive integer, got -3").
// Maps are checked for unknown keys, which are rejected with the list of valid ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace schedsim {

// The deepest nesting of lists and maps a scenario may have whatever its source: the YAML
// reader refuses deeper text (yaml-cpp's depth guard, about 500), and a tree built another
// way (schedsim.load_config(dict), the config-dict fuzz target) is held to the same limit.
inline constexpr std::size_t kMaxConfigNesting = 500;

// The node a string value of a tree built outside YAML becomes (a Python str): a string
// even when its text reads as a number or a boolean, as quoted YAML text is.
inline YAML::Node string_scalar(const std::string& text) {
  YAML::Node n(text);
  n.SetTag("!");
  return n;
}

// The folder of the shared data sets (docs/config.md#data-folder): a path in a config
// that starts with `$SCHEDSIM_DATA/` is resolved under it. The folder is the
// SCHEDSIM_DATA environment variable (which `--data-dir DIR` sets), else
// <source checkout>/../shared/data, where the data sets have always been.
struct DataFolder {
  static constexpr const char* kPrefix = "$SCHEDSIM_DATA/";
  std::string path;
  std::string origin;  // where the folder came from, for messages
  static DataFolder from_environment();
};

class ConfigNode {
 public:
  // `source` names the document in messages: a file path, "--set", "built-in default".
  // `base_dir` is where relative paths in the document are resolved ("" = working dir).
  ConfigNode(YAML::Node node, std::string source, std::string path = "", std::string base_dir = "");
  ConfigNode(const ConfigNode&) = default;
  // Rebinds the handle. (Assigning one YAML::Node to another would overwrite the node
  // it refers to inside the document, which is never what a copy means here.)
  ConfigNode& operator=(const ConfigNode& other);

  // Loads a YAML file; throws InputError for a missing or unreadable file (saying which:
  // missing, a directory, permission denied), a syntax error (with line), a key given
  // twice in one map, or a second YAML document ('---') after the first.
  static ConfigNode load_file(const std::string& path);
  // Parses YAML text with the same checks; `source` names it in messages.
  static ConfigNode load_string(const std::string& text, const std::string& source);
  // Text compiled into schedsim (sim/data/*.yaml): parsed once, without load_string's
  // checks against hostile input (a second document, NUL bytes, UTF-8, aliases, repeated
  // keys), which tests/sim/test_catalogue.cpp runs on each built-in text instead. The
  // checks parse the text a second time: about 1 ms of every run's start-up (issue 28).
  static ConfigNode load_builtin(const std::string& text, const std::string& source);

  // A value put into the document by a command-line override (--set KEY=VALUE): errors
  // about it, or about anything below it, name the override, not the file.
  struct Override {
    YAML::Node value;  // the node apply_override inserted
    std::string text;  // "KEY=VALUE" as given
  };
  // This node, with `overrides` remembered for the nodes reached from it.
  ConfigNode with_overrides(std::vector<Override> overrides) const;

  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }
  const YAML::Node& yaml() const { return node_; }
  // "file:line: key.path" (or "file: key.path" when the node has no position).
  std::string where() const;
  [[noreturn]] void fail(const std::string& what) const;
  // A path given as this node's string value, made usable from the working directory:
  // relative paths in a config file are relative to that file's folder; values that
  // came from the command line (--set) or from Python have no position in a file and
  // stay relative to the working directory. A value starting with `$SCHEDSIM_DATA/` is
  // under the data folder (DataFolder); the folder and the file must exist.
  std::string as_path() const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }

  // Map access.
  bool has(std::string_view key) const;
  ConfigNode child(std::string_view key) const;  // throws when the key is absent
  std::optional<ConfigNode> maybe_child(std::string_view key) const;
  std::vector<std::string> keys() const;  // in document order; requires a map
  // Throws unless this is a map whose keys are all in `allowed`. The message lists the
  // valid keys and suggests the closest one.
  void expect_map(std::initializer_list<std::string_view> allowed) const;
  void expect_keys(const std::vector<std::string>& allowed) const;

  // Sequence access.
  std::size_t size() const;
  ConfigNode at(std::size_t index) const;

  // Scalars. The checks name what is allowed ("a positive number", ...).
  // Strings are names, paths and column names: control characters (a NUL written as
  // "\0", line breaks, ...) are rejected; a tab is allowed (a CSV delimiter).
  std::string as_string() const;
  double as_double() const;            // finite
  double as_positive_double() const;   // finite and > 0
  double as_nonnegative_double() const;
  // Decimal integers only: a leading zero (0100, octal in YAML 1.1) or a 0x/0o/0b prefix
  // is an error that says what to write instead.
  std::int64_t as_int() const;
  std::int64_t as_positive_int() const;
  bool as_bool() const;
  // A random seed: an integer in 0 .. kMaxSeed.
  std::uint64_t as_seed() const;
  // One of `choices`; otherwise an error listing them.
  std::string as_choice(std::initializer_list<std::string_view> choices) const;

 private:
  ConfigNode make_child(const YAML::Node& node, const std::string& child_path) const;
  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::string base_dir_;
  std::shared_ptr<const std::vector<Override>> overrides_;
  bool is_override_ = false;  // this node is an override's value: where() is "--set KEY=VALUE"
};

// Reads `text` as a decimal integer the way configs are read: an optional sign, digits,
// no leading zero, within int64. Returns "" and sets `value`, or the problem, e.g.
// "'0100' has a leading zero (octal in YAML 1.1); write 100".
std::string parse_decimal_int(std::string_view text, std::int64_t& value);

// Seeds are 0 .. 2^63-1 wherever they are given (a scenario's seed:, --seed, a sweep's
// seeds, Python's seed=): every recorded seed then fits a signed 64-bit integer (JSON
// readers, numpy's int64) and can be given again to rerun the same run.
constexpr std::uint64_t kMaxSeed = 9223372036854775807ULL;
// "" when `text` is a seed in that range (sets `seed`); otherwise the problem, e.g.
// "must be an integer in 0..9223372036854775807 (2^63-1), got '-1'".
std::string parse_seed(std::string_view text, std::uint64_t& seed);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Applies a command-line override "a.b.c=value" (value parsed as YAML; list elements by
// index, "cluster.nodes.0.count=8") to `root`, creating maps on the way. Throws
// InputError for a malformed override. Returns the value node inserted (for
// ConfigNode::with_overrides).
YAML::Node apply_override(YAML::Node& root, const std::string& assignment);

}  // namespace schedsim
