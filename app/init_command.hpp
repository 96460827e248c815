// `schedsim init [DIR]`: commented starter scenarios and a sweep grid for the common cases,
// so that a first study starts from a short file that says what each key means instead of
// `default-config`'s full dump. Every file loads as written (tests/experiments/test_uxcli.cpp).
#pragma once

#include <string>
#include <vector>

namespace schedsim {

struct StarterFile {
  std::string name;  // file name inside DIR, e.g. "synthetic.yaml"
  std::string text;  // the YAML, with a comment on every key
};

// The starter files. `data_dir_from_files` is the shared data folder as a path relative
// to the folder the files are written to (or absolute); trace.yaml reads from it.
std::vector<StarterFile> starter_files(const std::string& data_dir_from_files);

struct InitOutcome {
  std::vector<std::string> written;  // paths, in the order of starter_files()
  std::string next_command;          // what to run next, e.g. "schedsim run DIR/synthetic.yaml ..."
};

// Writes the starter files into `dir` (created if needed). `data_dir` is the shared data
// folder as the user gives it (relative to the current folder, or absolute). Refuses,
// before writing anything, when any of the files already exists (InputError naming it).
InitOutcome write_starter_files(const std::string& dir, const std::string& data_dir);

}  // namespace schedsim
