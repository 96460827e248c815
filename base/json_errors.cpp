#include "base/json_errors.hpp"

#include <algorithm>

namespace schedsim {
namespace {

constexpr std::string_view kValue = "a value (an object, array, string, number, true, false or null)";

bool consume(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool consume_number(std::string_view& s, std::int64_t& out) {
  std::size_t i = 0;
  out = 0;
  while (i < s.size() && i < 18 && s[i] >= '0' && s[i] <= '9') out = out * 10 + (s[i++] - '0');
  if (i == 0) return false;
  s.remove_prefix(i);
  return true;
}

// Line and column (1-based) of the byte at `offset` of `text`.
void place_of(std::string_view text, std::size_t offset, JsonErrorDescription& d) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  d.line = 1;
  for (char c : before) d.line += c == '\n' ? 1 : 0;
  const std::size_t nl = before.rfind('\n');
  d.column = static_cast<std::int64_t>(nl == std::string_view::npos ? offset + 1 : offset - nl);
}

// At most 40 bytes of what the lexer had read, cut before a UTF-8 continuation byte.
std::string shortened(std::string_view token) {
  if (token.size() <= 40) return std::string(token);
  std::size_t n = 40;
  while (n > 0 && (static_cast<unsigned char>(token[n]) & 0xC0) == 0x80) --n;
  return std::string(token.substr(0, n)) + "...";
}

// What the parser wanted, from nlohmann's token name and the construct it was in.
std::string expected(std::string_view token, std::string_view context) {
  if (token.empty()) {
    if (context == "object key") return "a string in double quotes (the key)";
    if (context == "object separator") return "':'";
    if (context == "object") return "',' or '}'";
    if (context == "array") return "',' or ']'";
    return std::string(kValue);
  }
  if (token == "'[', '{', or a literal") return std::string(kValue);
  if (token == "string literal") return context == "object key" ? "a string in double quotes (the key)" : "a string in double quotes";
  if (token == "end of input") return "nothing more after the value";
  if (token == "']'" && context == "array") return "',' or ']'";
  if (token == "'}'" && context == "object") return "',' or '}'";
  return std::string(token);
}

// "syntax error while parsing CONTEXT - DETAIL[; last read: 'TOKEN'][; expected WHAT]".
std::string described_syntax_error(std::string_view s) {
  if (!consume(s, "syntax error ")) return std::string(s);
  std::string_view context;
  if (consume(s, "while parsing ")) {
    const std::size_t dash = s.find(" - ");
    if (dash == std::string_view::npos) return std::string(s);
    context = s.substr(0, dash);
    s.remove_prefix(dash + 3);
  } else if (!consume(s, "- ")) {
    return std::string(s);
  }
  // "; expected" of the parser comes last; a lexer message may hold its own "; expected".
  std::string_view want;
  const std::size_t last_read = s.find("; last read: '");
  const std::size_t exp = s.rfind("; expected ");
  if (exp != std::string_view::npos && (last_read == std::string_view::npos || exp > last_read)) {
    want = s.substr(exp + 11);
    s = s.substr(0, exp);
  }
  std::string found;
  bool says_what_is_wrong = false;  // a lexer message such as "invalid string: missing closing quote"
  if (last_read != std::string_view::npos) {
    std::string_view token = s.substr(last_read + 14);
    if (!token.empty() && token.back() == '\'') token.remove_suffix(1);
    const std::string_view lexer = s.substr(0, last_read);
    if (lexer == "invalid literal") {
      // What nlohmann "last read" may reach back over earlier tokens ('"a": tru}'): the
      // word that ends with the byte it stopped at.
      const std::size_t cut = token.size() > 1 ? token.substr(0, token.size() - 1).find_last_of(" \t\r\n:,[{") : std::string_view::npos;
      if (cut != std::string_view::npos) token.remove_prefix(cut + 1);
      found = "invalid literal '" + shortened(token) + "'";
    } else {
      found = std::string(lexer) + " (at '" + shortened(token) + "')";
      says_what_is_wrong = true;
    }
  } else {
    found = std::string(s);
  }
  std::string where;
  if (context == "object" || context == "object key" || context == "object separator") where = " in an object";
  if (context == "array") where = " in an array";
  if (says_what_is_wrong) return found + where;  // the parser's "expected" would repeat it
  return found + where + "; expected " + expected(want, context);
}

}  // namespace

JsonErrorDescription describe_json_error(std::string_view what, std::string_view text) {
  JsonErrorDescription d;
  std::string_view s = what;
  if (consume(s, "[json.exception.")) {
    const std::size_t close = s.find("] ");
    s = close == std::string_view::npos ? what : s.substr(close + 2);
  }
  std::int64_t line = 0, column = 0, byte = 0;
  std::string_view rest = s;
  if (consume(rest, "parse error at line ") && consume_number(rest, line) && consume(rest, ", column ") && consume_number(rest, column) &&
      consume(rest, ": ")) {
    d.line = line;
    d.column = column;
    d.what = described_syntax_error(rest);
    return d;
  }
  rest = s;
  if (consume(rest, "parse error at byte ") && consume_number(rest, byte) && consume(rest, ": ")) {
    place_of(text, static_cast<std::size_t>(byte > 0 ? byte - 1 : 0), d);
    d.what = described_syntax_error(rest);
    return d;
  }
  rest = s;
  if (consume(rest, "parse error: ")) {
    d.what = described_syntax_error(rest);
    return d;
  }
  rest = s;
  if (consume(rest, "number overflow parsing '") && !rest.empty() && rest.back() == '\'') {
    const std::string_view number = rest.substr(0, rest.size() - 1);
    const std::size_t at = number.empty() ? std::string_view::npos : text.find(number);
    if (at != std::string_view::npos) place_of(text, at, d);
    d.what = "the number " + shortened(number) + " is too large (beyond a double's range, about 1.8e308)";
    return d;
  }
  d.what = std::string(s);
  return d;
}

std::string json_error_place(const std::string& path, const JsonErrorDescription& d) {
  if (d.line <= 0) return path;
  return path + ":" + std::to_string(d.line) + (d.column > 0 ? ":" + std::to_string(d.column) : "");
}

}  // namespace schedsim
