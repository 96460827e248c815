#include "base/text_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "base/config_node.hpp"

namespace schedsim {

std::size_t invalid_utf8_at(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07u, min = 0x10000;
    } else {
      return i;  // a continuation byte without a lead, or 0xF8..0xFF
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string describe_byte(std::string_view line, std::size_t offset) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "byte 0x%02X at column %zu", static_cast<unsigned>(static_cast<unsigned char>(line[offset])), offset + 1);
  return buf;
}

namespace {

// The code point of the (valid) UTF-8 sequence at `s` when it is an invisible format
// character that can make text read differently from what it is: the bidirectional
// embeddings, overrides and isolates U+202A..U+202E, U+2066..U+2069, the marks U+200E,
// U+200F, U+061C, and U+FEFF (a byte-order mark or zero-width no-break space); else 0.
// A right-to-left override in a job id would show "exe.txt" for "txt.exe".
unsigned invisible_format_character(const unsigned char* s, std::size_t len) {
  if (len == 2) return s[0] == 0xD8 && s[1] == 0x9C ? 0x061C : 0;
  if (len != 3) return 0;
  const unsigned cp = ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
  const bool bidi = cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
  return bidi || cp == 0xFEFF ? cp : 0;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  // Fast path: most messages hold nothing to escape.
  while (i < n && s[i] >= 0x20 && s[i] < 0x7F) ++i;
  if (i == n) return std::string(text);
  std::string out(text.substr(0, i));
  char buf[8];
  while (i < n) {
    const unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n", ++i;
    } else if (c == '\r') {
      out += "\\r", ++i;
    } else if (c == '\t') {
      out += "\\t", ++i;
    } else if (c < 0x80) {  // the other C0 controls and DEL
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf, ++i;
    } else {
      const std::size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
      if (i + len > n || invalid_utf8_at(text.substr(i, len)) != std::string_view::npos) {  // not UTF-8: show the byte
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
        out += buf, ++i;
      } else if (c == 0xC2 && s[i + 1] < 0xA0) {  // U+0080..U+009F, the C1 controls (CSI is U+009B)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(s[i + 1]));
        out += buf, i += 2;
      } else if (const unsigned cp = invisible_format_character(s + i, len)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        out += buf, i += len;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
    }
  }
  return out;
}

namespace {

// Length of the longest common subsequence.
std::size_t common_subsequence(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1, 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = 0;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = a[i - 1] == b[j - 1] ? diag + 1 : std::max(row[j], row[j - 1]);
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3, best_common = 0;  // suggest only near misses
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    // Among equally near ones, the one keeping more of what was typed: a dropped letter
    // is a likelier typo than a changed one ("--sed" is "--seed" more than "--set").
    const std::size_t common = d < 3 ? common_subsequence(name, c) : 0;
    if (d < best_d || (d == best_d && d < 3 && common > best_common)) best_d = d, best = c, best_common = common;
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(name, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

}  // namespace schedsim
