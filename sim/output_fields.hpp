// One field list per output record: the columns of a jobs.csv row (and, the same way,
// other records) as a table of {name, unit, writer}. The list drives the CSV header and
// every row, so a column is one line in the table of whoever owns its value (the kernel's
// job record, a meter); readers take the names from the same list. Order in the list is
// the order in the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/job.hpp"

namespace schedsim {

template <typename Record>
struct OutputField {
  std::string name;  // the CSV column / JSON key
  std::string unit;  // "s", "kWh", "USD", "kg", "" (a count or a name); for docs and readers
  // Writes the field's text for one record (already CSV-escaped; nothing for an empty cell).
  std::function<void(std::ostream&, const Record&)> write;
};

template <typename Record>
class OutputFieldList {
 public:
  using Writer = std::function<void(std::ostream&, const Record&)>;

  void add(std::string name, std::string unit, Writer write) { fields_.push_back({std::move(name), std::move(unit), std::move(write)}); }
  const std::vector<OutputField<Record>>& fields() const { return fields_; }
  std::size_t size() const { return fields_.size(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(fields_.size());
    for (const auto& f : fields_) out.push_back(f.name);
    return out;
  }
  // "a,b,c\n"
  void write_csv_header(std::ostream& out) const {
    for (std::size_t i = 0; i < fields_.size(); ++i) out << (i ? "," : "") << fields_[i].name;
    out << '\n';
  }
  void write_csv_row(std::ostream& out, const Record& r) const {
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      if (i) out << ',';
      fields_[i].write(out, r);
    }
    out << '\n';
  }

 private:
  std::vector<OutputField<Record>> fields_;
};

// A jobs.csv row is written from the kernel's record of the ending job (on_job_end).
using JobFieldList = OutputFieldList<JobState>;

// A number of a summary record (results.json "summary", comparison.csv): its value is a
// count (written as an integer) or a real (null when unset), and `present` says whether
// the record has the field at all (null = always; e.g. bound-idle time only under
// policies that may bind devices). JSON writers and CSV readers take both from the table.
template <typename Record>
struct ValueField {
  enum class Kind : std::uint8_t { kCount, kReal };
  std::string name;
  std::string unit;
  Kind kind = Kind::kReal;
  std::function<std::optional<double>(const Record&)> value;
  std::function<bool(const Record&)> present;  // null: always present
  bool in(const Record& r) const { return !present || present(r); }
};

// The field named `name` in `fields` (null if there is none).
template <typename Record>
const ValueField<Record>* find_field(const std::vector<ValueField<Record>>& fields, const std::string& name) {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// A double as the output files write it: "%.9g" (readers of the text get this value).
inline std::string format_g9(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace schedsim
