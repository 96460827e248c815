#include "base/config_node.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "base/error.hpp"
#include "base/file_checks.hpp"
#include "base/text_checks.hpp"

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

namespace {

// Config files are small text: a scenario with 100,000 node groups is about 5 MiB.
constexpr std::streamoff kMaxConfigBytes = 256LL * 1024 * 1024;
// Values a document may have once its aliases are expanded (docs/config.md#limits).
constexpr std::uint64_t kMaxExpandedValues = 10'000'000;

std::string line_at(const std::string& source, const YAML::Mark& m) {
  return m.is_null() ? source : source + ":" + std::to_string(m.line + 1);
}

// "a NUL character (\0) at character 5; ..." for the first control character of `v`
// (tab allowed), "" when there is none. A "\0" escape would cut a path short where the C
// library reads it; other control characters in a name, a path or a key are a typo or an
// attack, never meant.
std::string control_character_problem(const std::string& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02X", c);
      const std::string what = c == 0 ? "a NUL character (\\0)" : c == '\n' ? "a line break (\\n)" : c == '\r' ? "a carriage return (\\r)"
                                                                                          : std::string("the control character ") + code;
      return what + " at character " + std::to_string(i + 1) + "; control characters are not allowed in names and paths";
    }
  }
  return "";
}

// What a map key that is not a plain name is, for messages ('?' says nothing).
std::string describe_key(const YAML::Node& key) {
  if (!key.IsDefined() || key.IsNull()) return "a null key (~, null or nothing before the colon)";
  if (key.IsSequence()) return "a list used as a key";
  if (key.IsMap()) return "a map used as a key";
  return "key '" + key.Scalar() + "'";
}

// Rejects a key given twice in one map: yaml-cpp keeps both and lookups find the first,
// so `policy: fifo` then `policy: sjf` would run fifo without a word. `seen` holds the
// positions of the maps and lists already checked: an alias (*name) refers to its anchor's
// node, which is checked once however often it is used.
void check_unique_keys(const YAML::Node& n, const std::string& source, bool with_lines, const std::string& path, std::unordered_set<std::size_t>& seen) {
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!n.Mark().is_null() && !seen.insert(static_cast<std::size_t>(n.Mark().pos)).second) return;
  if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : n) check_unique_keys(item, source, with_lines, path + "[" + std::to_string(i++) + "]", seen);
    return;
  }
  std::unordered_map<std::string, YAML::Mark> first;
  for (const auto& kv : n) {
    if (kv.first.IsScalar()) {
      const auto [at, fresh] = first.emplace(kv.first.Scalar(), kv.first.Mark());
      if (!fresh) {
        const std::string earlier = !with_lines || at->second.is_null() ? "" : " (first given on line " + std::to_string(at->second.line + 1) + ")";
        throw InputError((with_lines ? line_at(source, kv.first.Mark()) : source) + (path.empty() ? "" : ": " + path),
                         "duplicate key '" + kv.first.Scalar() + "'" + earlier + "; a key may appear only once in a map");
      }
    }
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    check_unique_keys(kv.second, source, with_lines, path.empty() ? key : path + "." + key, seen);
  }
}

// Values in the tree with every alias (*name) expanded, saturating at `cap`; memoized by
// position, so that the count costs the document's size. A node being counted counts as
// `cap`: an alias to an enclosing node (&a [*a]) is a cycle.
std::uint64_t expanded_values(const YAML::Node& n, std::unordered_map<std::size_t, std::uint64_t>& memo, std::uint64_t cap) {
  if (!n.IsMap() && !n.IsSequence()) return 1;
  const bool keyed = !n.Mark().is_null();
  const auto pos = static_cast<std::size_t>(n.Mark().pos);
  if (keyed) {
    if (const auto it = memo.find(pos); it != memo.end()) return it->second;
    memo[pos] = cap;
  }
  std::uint64_t total = 1;
  for (const auto& item : n) {
    if (total >= cap) break;
    // A key counts as one value (keys are read as names, never expanded); a key list may
    // also start where its map does, which would read as a cycle.
    if (n.IsMap()) total += 1 + expanded_values(item.second, memo, cap);
    else total += expanded_values(item, memo, cap);
  }
  total = std::min(total, cap);
  if (keyed) memo[pos] = total;
  return total;
}

// Events of a document, ignored: what a second document looks like is not needed, only
// whether there is one and where it starts.
class DocumentStart : public YAML::EventHandler {
 public:
  YAML::Mark mark = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& m) override { mark = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// YAML::Load with schedsim's checks: one document, no key twice in a map. `source` names
// the text in messages; `with_lines` = false for one-line texts (--set values).
YAML::Node load_checked(const std::string& text, const std::string& source, bool with_lines) {
  YAML::Node root = YAML::Load(text);
  // A second document: the parser asked for exactly one more (YAML::LoadAll would keep
  // asking, and on some malformed texts it never stops producing empty documents).
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStart first, second;
  if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second)) {
    // The line of the '---' that starts the second document (its node may be empty).
    const std::size_t at = second.mark.is_null() ? text.size() : std::min(text.size(), static_cast<std::size_t>(second.mark.pos));
    std::size_t marker = text.rfind("\n---", at == 0 ? 0 : at - 1);
    const bool dashes = marker != std::string::npos || text.rfind("---", 0) == 0;
    marker = marker == std::string::npos ? 0 : marker + 1;
    if (!dashes) marker = std::min(text.size(), at);  // no '---': the parser ended the document early
    const std::string line = std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(marker), '\n'));
    throw InputError(with_lines ? source + ":" + line : source,
                     dashes ? "a second YAML document starts here ('---'); schedsim reads one document per file and would ignore the rest: "
                              "remove the '---' line or split the file"
                            : "the YAML document ends before this line and more text follows, which schedsim would ignore; "
                              "check the indentation and brackets above");
  }
  // Aliases can make a small text a huge (or cyclic) tree, which copies and emitters
  // would expand without end ("billion laughs"): a scenario has far fewer values.
  std::unordered_map<std::size_t, std::uint64_t> memo;
  if (expanded_values(root, memo, kMaxExpandedValues) >= kMaxExpandedValues) {
    throw InputError(source, "the document has more than 10,000,000 values once its aliases (*name) are expanded, or an alias refers to a "
                             "node that contains it (docs/config.md#limits); write the values out");
  }
  std::unordered_set<std::size_t> seen;
  check_unique_keys(root, source, with_lines, "", seen);
  return root;
}

}  // namespace

ConfigNode ConfigNode::load_file(const std::string& path) {
  if (const std::string problem = file_open_problem(path, "config file"); !problem.empty()) throw InputError(path, problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the config file");
  // The YAML tree takes many times the text's size: refuse what is not a config before
  // reading it (docs/config.md#limits).
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > kMaxConfigBytes) {
    throw InputError(path, "the config file is " + std::to_string(size / (1024 * 1024)) + " MiB, more than the " + std::to_string(kMaxConfigBytes / (1024 * 1024)) +
                               " MiB schedsim reads (docs/config.md#limits); is this a scenario?");
  }
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError(path, "read error while reading the config file");
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
    YAML::Node root = load_checked(text, source, true);
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    return ConfigNode(root, source, "", "");
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1),
                     "lists and maps nested about 500 levels deep, more than the YAML reader allows; no scenario needs that: is this the right file?");
  } catch (const YAML::ParserException& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1), "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError(source, std::string("cannot read YAML: ") + e.what());
  } catch (const std::bad_alloc&) {
    throw InputError(source, "out of memory while reading the YAML (" + std::to_string(text.size()) + " bytes of text); is this a scenario?");
  }
}

ConfigNode ConfigNode::load_builtin(const std::string& text, const std::string& source) {
  YAML::Node root = YAML::Load(text);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  return ConfigNode(root, source, "", "");
}

ConfigNode ConfigNode::with_overrides(std::vector<Override> overrides) const {
  ConfigNode c(*this);
  c.overrides_ = std::make_shared<const std::vector<Override>>(std::move(overrides));
  return c;
}

ConfigNode& ConfigNode::operator=(const ConfigNode& other) {
  if (this != &other) {
    node_.reset(other.node_);
    source_ = other.source_;
    path_ = other.path_;
    base_dir_ = other.base_dir_;
    overrides_ = other.overrides_;
    is_override_ = other.is_override_;
  }
  return *this;
}

std::string ConfigNode::where() const {
  if (is_override_) return source_;  // "--set KEY=VALUE" names both the key and the value
  std::string w = source_;
  const YAML::Mark m = node_.IsDefined() ? node_.Mark() : YAML::Mark::null_mark();
  if (!m.is_null()) w += ":" + std::to_string(m.line + 1);
  if (!path_.empty()) w += ": " + path_;
  return w;
}

void ConfigNode::fail(const std::string& what) const { throw InputError(where(), what); }

ConfigNode ConfigNode::make_child(const YAML::Node& node, const std::string& child_path) const {
  ConfigNode c(node, source_, child_path, base_dir_);
  c.overrides_ = overrides_;
  if (overrides_ && node.IsDefined()) {
    // The latest override of a node wins, as it does in the document.
    for (auto o = overrides_->rbegin(); o != overrides_->rend(); ++o) {
      if (o->value.IsDefined() && node.is(o->value)) {
        c.source_ = "--set " + o->text;
        c.is_override_ = true;
        break;
      }
    }
  }
  return c;
}

DataFolder DataFolder::from_environment() {
  if (const char* env = std::getenv("SCHEDSIM_DATA")) {
    if (*env == '\0') throw InputError("SCHEDSIM_DATA", "is set but empty; set it (or --data-dir DIR) to the folder holding the shared data, or unset it for the default");
    return {env, "from SCHEDSIM_DATA or --data-dir"};
  }
  return {SCHEDSIM_DEFAULT_DATA_DIR, "the default; set SCHEDSIM_DATA or --data-dir DIR to change it"};
}

std::string ConfigNode::as_path() const {
  std::string p = as_string();
  if (p.empty()) fail("expected a file path, got an empty string");
  if (const auto tab = p.find('\t'); tab != std::string::npos) {
    fail("the path contains a tab at character " + std::to_string(tab + 1) + "; control characters are not allowed in paths");
  }
  if (p.rfind(DataFolder::kPrefix, 0) == 0) {
    const DataFolder data = DataFolder::from_environment();
    std::error_code ec;
    if (!std::filesystem::is_directory(data.path, ec)) {
      fail(p + ": the data folder " + data.path + " (" + data.origin + ") does not exist or is not a folder");
    }
    const std::string full = data.path + (data.path.back() == '/' ? "" : "/") + p.substr(std::string(DataFolder::kPrefix).size());
    if (!std::filesystem::exists(full, ec)) fail(p + ": " + full + " does not exist (data folder " + data.path + ", " + data.origin + ")");
    return full;
  }
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
    if (!kv.first.IsScalar()) ConfigNode(kv.first, source_, path_, base_dir_).fail("map keys must be plain names, got " + describe_key(kv.first));
    if (const std::string problem = control_character_problem(kv.first.Scalar()); !problem.empty()) {
      ConfigNode(kv.first, source_, path_, base_dir_).fail("a key contains " + problem);
    }
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
    // A key that a --set created (no place in the file; its value is the override's) is
    // reported as that option.
    const ConfigNode value = make_child(kv.second, path_);
    const bool from_set = value.is_override_ && kv.first.Mark().is_null();
    ConfigNode located(kv.first, from_set ? value.source_ : source_, path_, base_dir_);
    if (!kv.first.IsScalar()) located.fail("map keys must be plain names, got " + describe_key(kv.first) + "; valid keys here: " + join(allowed));
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (const std::string problem = control_character_problem(key); !problem.empty()) located.fail("a key contains " + problem);
    std::string msg = "unknown key '" + key + "'";
    std::string best;
    std::size_t best_d = 3;  // suggest only near misses
    for (const auto& a : allowed) {
      const std::size_t d = edit_distance(key, a);
      if (d < best_d) best_d = d, best = a;
    }
    if (!best.empty()) msg += " (did you mean '" + best + "'?)";
    msg += "; valid keys here: " + join(allowed);
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
  const std::string& v = node_.Scalar();
  if (const std::string problem = control_character_problem(v); !problem.empty()) fail("the value contains " + problem);
  return v;
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

std::string parse_decimal_int(std::string_view text, std::int64_t& value) {
  const std::string shown = "'" + std::string(text) + "'";
  std::size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  const bool negative = i == 1 && text[0] == '-';
  const std::string_view digits = text.substr(i);
  if (digits.size() > 1 && digits[0] == '0') {
    // YAML 1.1 (yaml-cpp) reads 0100 as octal 64 and 0x10 as 16: say what to write instead.
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
    if (p == 'x' || p == 'o' || p == 'b') {
      const int base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      const std::string body(digits.substr(2));
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = body.empty() ? 0 : std::strtoull(body.c_str(), &end, base);
      const bool ok = !body.empty() && std::isalnum(static_cast<unsigned char>(body[0])) && end && *end == '\0' && errno == 0 && v <= 9223372036854775807ULL;
      return shown + " is not a decimal integer (" + (base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary") +
             " prefixes are not read)" + (ok ? "; write " + std::string(negative ? "-" : "") + std::to_string(v) : "; write the number in decimal");
    }
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const std::size_t nz = digits.find_first_not_of('0');
      const std::string fixed = nz == std::string_view::npos ? "0" : std::string(negative ? "-" : "") + std::string(digits.substr(nz));
      return shown + " has a leading zero (octal in YAML 1.1); write " + fixed;
    }
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return "expected an integer, got " + shown;
  std::uint64_t magnitude = 0;
  for (char c : digits) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (9223372036854775808ULL - d) / 10) return "expected an integer, got " + shown;  // beyond int64
    magnitude = magnitude * 10 + d;
  }
  if (!negative && magnitude > 9223372036854775807ULL) return "expected an integer, got " + shown;
  value = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return "";
}

std::int64_t ConfigNode::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer, got " + describe_value(node_));
  std::int64_t v = 0;
  if (const std::string problem = parse_decimal_int(node_.Scalar(), v); !problem.empty()) fail(problem);
  return v;
}

std::int64_t ConfigNode::as_positive_int() const {
  const std::int64_t v = as_int();
  if (v <= 0) fail("must be a positive integer, got " + describe_value(node_));
  return v;
}

std::string parse_seed(std::string_view text, std::uint64_t& seed) {
  const std::string range = "must be an integer in 0..9223372036854775807 (2^63-1), got '" + std::string(text) + "'";
  std::int64_t v = 0;
  const std::string problem = parse_decimal_int(text, v);
  if (!problem.empty()) {
    // A plain (too long) number is out of range; a leading zero or a word says so itself.
    const bool digits = !text.empty() && std::all_of(text.begin() + (text[0] == '-' || text[0] == '+'), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits && problem.rfind("expected an integer", 0) == 0 ? range : problem;
  }
  if (v < 0) return range;
  seed = static_cast<std::uint64_t>(v);
  return "";
}

std::uint64_t ConfigNode::as_seed() const {
  if (!node_.IsScalar()) fail("expected a seed (an integer in 0..9223372036854775807), got " + describe_value(node_));
  std::uint64_t v = 0;
  if (const std::string problem = parse_seed(node_.Scalar(), v); !problem.empty()) fail(problem);
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

// A list index in an override's key path: digits only, below `size`.
std::optional<std::size_t> list_index(const std::string& part, std::size_t size) {
  if (part.empty() || part.size() > 18 || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  const std::size_t i = static_cast<std::size_t>(std::strtoull(part.c_str(), nullptr, 10));
  if (i >= size) return std::nullopt;
  return i;
}

}  // namespace

YAML::Node apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + assignment, "expected KEY.PATH=VALUE, e.g. --set workload.synthetic.num_jobs=500");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    if (text.find('\0') != std::string::npos) throw InputError("--set " + key + "=...", "the value contains a NUL byte");
    value = without_marks(load_checked(text, "--set " + assignment, false));
  } catch (const YAML::Exception& e) {
    throw InputError("--set " + assignment, "the value is not valid YAML: " + e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw InputError("--set " + assignment, "empty component in key path '" + key + "'");
    parts.push_back(part);
  }
  if (key.back() == '.') throw InputError("--set " + assignment, "empty component in key path '" + key + "'");
  // yaml-cpp nodes are handles: reassigning a handle variable would overwrite the node it
  // refers to, so walk with a vector of handles instead.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    const std::string& p = parts[i];
    if (cur.IsSequence()) {
      const auto index = list_index(p, cur.size());
      if (!index) throw InputError("--set " + assignment, "'" + p + "' is not a valid index into a list of " + std::to_string(cur.size()));
      chain.push_back(cur[*index]);
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
    const auto index = list_index(last, parent.size());
    if (!index) throw InputError("--set " + assignment, "'" + last + "' is not a valid index into a list of " + std::to_string(parent.size()));
    parent[*index] = value;
  } else if (parent.IsMap() || parent.IsNull() || !parent.IsDefined()) {
    parent[last] = value;
  } else {
    const std::string above = parts.size() > 1 ? parts[parts.size() - 2] : "the document";
    throw InputError("--set " + assignment, "cannot set '" + last + "' below '" + above + "', which is a single value (" +
                                                parent.Scalar() + "), not a map; set the whole value instead, e.g. --set '" +
                                                (parts.size() > 1 ? key.substr(0, key.rfind('.')) : key) + "={name: " + parent.Scalar() + ", " +
                                                last + ": ...}'");
  }
  return value;
}

}  // namespace schedsim
