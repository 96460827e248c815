// nlohmann::json's error messages in schedsim's words. The library says
// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while
// parsing value - invalid literal; last read: 'x'"; a reader reports
// "m.json:1:2: not valid JSON: invalid literal 'x'; expected a value (an object, ...)":
// without the library's tag, with the place in the file's own line:column form and what
// was expected. Used by the readers of JSON files (Philly traces, the throughput matrix).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace schedsim {

struct JsonErrorDescription {
  std::int64_t line = 0;    // 1-based line in the parsed text; 0 when unknown
  std::int64_t column = 0;  // 1-based byte column in that line; 0 when unknown
  std::string what;         // what was found and what was expected
};

// `what` is the message of a nlohmann::json exception thrown while parsing `text`. Parse
// errors give their place and a sentence; a number too large for a double
// (out_of_range.406, which nlohmann reports without a place) is looked up in `text`;
// any other message is returned without its "[json.exception...] " tag.
JsonErrorDescription describe_json_error(std::string_view what, std::string_view text);

// "PATH:LINE:COLUMN" (or "PATH" when the description has no place), for messages.
std::string json_error_place(const std::string& path, const JsonErrorDescription& d);

}  // namespace schedsim
