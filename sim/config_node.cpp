#include "sim/config_node.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/error.hpp"
#include "sim/text_checks.hpp"

namespace schedsim {
namespace {

std::string describe_value(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing (null)";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "'" + n.Scalar() + "'";
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::string source, std::string path, std::string base_dir)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)), base_dir_(std::move(base_dir)) {}

ConfigNode ConfigNode::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the config file (does it exist?)");
  std::stringstream buf;
  buf << in.rdbuf();
  ConfigNode root = load_string(buf.str(), path);
  const auto slash = path.find_last_of('/');
  root.base_dir_ = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return root;
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& source) {
  // yaml-cpp drops NUL bytes and passes invalid UTF-8 through: both would change what the
  // file says without a word.
  const auto line_of = [&](std::size_t at) { return source + ":" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')); };
  const auto line_start = [&](std::size_t at) { return text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1; };
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw InputError(line_of(nul), "the file contains a NUL byte (" + describe_byte(std::string_view(text).substr(line_start(nul)), nul - line_start(nul)) +
                                       "); is it a binary file? Scenarios are UTF-8 text");
  }
  if (const auto bad = invalid_utf8_at(text); bad != std::string::npos) {
    throw InputError(line_of(bad), "invalid UTF-8 (" + describe_byte(std::string_view(text).substr(line_start(bad)), bad - line_start(bad)) +
                                       "); save the file as UTF-8");
  }
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    return ConfigNode(root, source, "", "");
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1),
                     "lists and maps nested about 500 levels deep, more than the YAML reader allows; no scenario needs that: is this the right file?");
  } catch (const YAML::ParserException& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1), "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError(source, std::string("cannot read YAML: ") + e.what());
  }
}

ConfigNode& ConfigNode::operator=(const ConfigNode& other) {
  if (this != &other) {
    node_.reset(other.node_);
    source_ = other.source_;
    path_ = other.path_;
    base_dir_ = other.base_dir_;
  }
  return *this;
}

std::string ConfigNode::where() const {
  std::string w = source_;
  const YAML::Mark m = node_.IsDefined() ? node_.Mark() : YAML::Mark::null_mark();
  if (!m.is_null()) w += ":" + std::to_string(m.line + 1);
  if (!path_.empty()) w += ": " + path_;
  return w;
}

void ConfigNode::fail(const std::string& what) const { throw InputError(where(), what); }

ConfigNode ConfigNode::make_child(const YAML::Node& node, const std::string& child_path) const {
  return ConfigNode(node, source_, child_path, base_dir_);
}

std::string ConfigNode::as_path() const {
  std::string p = as_string();
  if (p.empty()) fail("expected a file path, got an empty string");
  const bool from_file = !node_.Mark().is_null();
  if (p[0] == '/' || !from_file || base_dir_.empty()) return p;
  return base_dir_ + p;
}

bool ConfigNode::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node& n = node_;
  return static_cast<bool>(n[std::string(key)]);
}

std::optional<ConfigNode> ConfigNode::maybe_child(std::string_view key) const {
  if (!node_.IsMap()) fail("expected a map, got " + describe_value(node_));
  const YAML::Node& n = node_;
  YAML::Node c = n[std::string(key)];
  if (!c) return std::nullopt;
  const std::string p = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  return make_child(c, p);
}

ConfigNode ConfigNode::child(std::string_view key) const {
  auto c = maybe_child(key);
  if (!c) fail("missing required key '" + std::string(key) + "'");
  return *c;
}

std::vector<std::string> ConfigNode::keys() const {
  if (!node_.IsMap()) fail("expected a map, got " + describe_value(node_));
  std::vector<std::string> out;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) fail("map keys must be plain names");
    out.push_back(kv.first.Scalar());
  }
  return out;
}

void ConfigNode::expect_map(std::initializer_list<std::string_view> allowed) const {
  expect_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::expect_keys(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("expected a map with keys " + join(allowed) + ", got " + describe_value(node_));
  for (const auto& kv : node_) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string msg = "unknown key '" + key + "'";
    std::string best;
    std::size_t best_d = 3;  // suggest only near misses
    for (const auto& a : allowed) {
      const std::size_t d = edit_distance(key, a);
      if (d < best_d) best_d = d, best = a;
    }
    if (!best.empty()) msg += " (did you mean '" + best + "'?)";
    msg += "; valid keys here: " + join(allowed);
    ConfigNode located(kv.first, source_, path_, base_dir_);
    located.fail(msg);
  }
}

std::size_t ConfigNode::size() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe_value(node_));
  return node_.size();
}

ConfigNode ConfigNode::at(std::size_t index) const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe_value(node_));
  return make_child(node_[index], path_ + "[" + std::to_string(index) + "]");
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe_value(node_));
  return node_.Scalar();
}

double ConfigNode::as_double() const {
  if (!node_.IsScalar()) fail("expected a number, got " + describe_value(node_));
  double v = 0;
  if (!YAML::convert<double>::decode(node_, v)) fail("expected a number, got " + describe_value(node_));
  if (!std::isfinite(v)) fail("expected a finite number, got " + describe_value(node_));
  return v;
}

double ConfigNode::as_positive_double() const {
  const double v = as_double();
  if (!(v > 0)) fail("must be > 0, got " + describe_value(node_));
  return v;
}

double ConfigNode::as_nonnegative_double() const {
  const double v = as_double();
  if (v < 0) fail("must be >= 0, got " + describe_value(node_));
  return v;
}

std::int64_t ConfigNode::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer, got " + describe_value(node_));
  long long v = 0;
  if (!YAML::convert<long long>::decode(node_, v)) fail("expected an integer, got " + describe_value(node_));
  return v;
}

std::int64_t ConfigNode::as_positive_int() const {
  const std::int64_t v = as_int();
  if (v <= 0) fail("must be a positive integer, got " + describe_value(node_));
  return v;
}

bool ConfigNode::as_bool() const {
  bool v = false;
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, v)) fail("expected true or false, got " + describe_value(node_));
  return v;
}

std::string ConfigNode::as_choice(std::initializer_list<std::string_view> choices) const {
  const std::string v = as_string();
  for (auto c : choices) {
    if (v == c) return v;
  }
  fail("'" + v + "' is not allowed; choose one of: " + join(std::vector<std::string>(choices.begin(), choices.end())));
}

namespace {

// A copy without positions: an override's value was parsed from its own one-line
// document, so its line number would point into the wrong file.
YAML::Node without_marks(const YAML::Node& n) {
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : n) out.push_back(without_marks(item));
    return out;
  }
  if (n.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : n) out[kv.first.Scalar()] = without_marks(kv.second);
    return out;
  }
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + assignment, "expected KEY.PATH=VALUE, e.g. --set workload.synthetic.num_jobs=500");
  }
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = without_marks(YAML::Load(assignment.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    throw InputError("--set " + assignment, "the value is not valid YAML: " + e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw InputError("--set " + assignment, "empty component in key path '" + key + "'");
    parts.push_back(part);
  }
  // yaml-cpp nodes are handles: reassigning a handle variable would overwrite the node it
  // refers to, so walk with a vector of handles instead.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    const std::string& p = parts[i];
    if (cur.IsSequence()) {
      const bool numeric = !p.empty() && std::all_of(p.begin(), p.end(), ::isdigit);
      if (!numeric || std::stoul(p) >= cur.size()) {
        throw InputError("--set " + assignment, "'" + p + "' is not a valid index into a list of " + std::to_string(cur.size()));
      }
      chain.push_back(cur[std::stoul(p)]);
    } else {
      if (!cur.IsMap() && !cur.IsNull() && cur.IsDefined()) {
        throw InputError("--set " + assignment, "cannot set a key below '" + (i > 0 ? parts[i - 1] : p) + "', which is not a map");
      }
      const YAML::Node existing = cur[p];
      if (!existing.IsDefined() || existing.IsNull()) cur[p] = YAML::Node(YAML::NodeType::Map);
      chain.push_back(cur[p]);
    }
  }
  YAML::Node parent = chain.back();
  const std::string& last = parts.back();
  if (parent.IsSequence()) {
    const bool numeric = std::all_of(last.begin(), last.end(), ::isdigit);
    if (!numeric || std::stoul(last) >= parent.size()) {
      throw InputError("--set " + assignment, "'" + last + "' is not a valid index into a list of " + std::to_string(parent.size()));
    }
    parent[std::stoul(last)] = value;
  } else if (parent.IsMap() || parent.IsNull() || !parent.IsDefined()) {
    parent[last] = value;
  } else {
    const std::string above = parts.size() > 1 ? parts[parts.size() - 2] : "the document";
    throw InputError("--set " + assignment, "cannot set '" + last + "' below '" + above + "', which is a single value (" +
                                                parent.Scalar() + "), not a map; set the whole value instead, e.g. --set '" +
                                                (parts.size() > 1 ? key.substr(0, key.rfind('.')) : key) + "={name: " + parent.Scalar() + ", " +
                                                last + ": ...}'");
  }
}

}  // namespace schedsim
