// Checks that input files are text: schedsim reads UTF-8 (configs, CSV traces) and
// rejects what is not, naming the line, rather than passing bytes through that later
// become replacement characters or break a reader of its outputs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace schedsim {

// Offset of the first byte of the first invalid UTF-8 sequence (bad lead or continuation
// byte, overlong form, surrogate, above U+10FFFF, or cut short), npos when valid.
std::size_t invalid_utf8_at(std::string_view text);

// "byte 0xFF at column 7" for the byte at `offset` of `line` (columns count bytes from 1).
std::string describe_byte(std::string_view line, std::size_t offset);

}  // namespace schedsim
