// Checks that input files are text: schedsim reads UTF-8 (configs, CSV traces) and
// rejects what is not, naming the line, rather than passing bytes through that later
// become replacement characters or break a reader of its outputs. And the other way
// round: user text shown in a message or a terminal table is made safe to print.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace schedsim {

// Offset of the first byte of the first invalid UTF-8 sequence (bad lead or continuation
// byte, overlong form, surrogate, above U+10FFFF, or cut short), npos when valid.
std::size_t invalid_utf8_at(std::string_view text);

// "byte 0xFF at column 7" for the byte at `offset` of `line` (columns count bytes from 1).
std::string describe_byte(std::string_view line, std::size_t offset);

// `text` with every byte that could move the cursor, clear the screen or start an escape
// sequence in a terminal written out visibly: CR, LF and TAB as \r, \n, \t, the other C0
// controls, DEL and bytes that are not UTF-8 as \xHH (\x1b for ESC, \x00 for NUL), the C1
// controls U+0080..U+009F as \u0080..\u009f, and the invisible bidirectional and format
// characters (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C, U+FEFF) as \u202e
// etc., which would otherwise show text in another order than it is. Printable text (ASCII and UTF-8) and
// backslashes are kept as they are, so ordinary text is unchanged and applying it twice
// is the same as once. Used for every message and terminal table that shows user input
// (a job id or policy name holding ESC must not rewrite the terminal).
std::string terminal_safe(std::string_view text);

// The candidate closest to `name` by edit distance when it is a near miss (at most 2
// edits, the same rule as the config keys' suggestions), else "". Ties go to the first.
std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'X'?)" for closest_match(name, candidates), or "" when nothing is near.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace schedsim
