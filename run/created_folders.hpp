// The output folders a command creates (the deepest first): a command that then fails
// removes those still empty, so that a failure leaves no folder behind that the user did
// not have before. A folder that existed, or holds any file, stays. Used by `run` (and
// compare, sweep) and `serve`.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace schedsim {

struct CreatedFolders {
  std::vector<std::filesystem::path> paths;
  bool keep = false;
  explicit CreatedFolders(const std::string& dir) {
    std::error_code ec;
    for (std::filesystem::path p = std::filesystem::path(dir).lexically_normal(); !p.empty() && !std::filesystem::exists(p, ec) && !ec;
         p = p.parent_path()) {
      paths.push_back(p);
      if (p == p.parent_path()) break;
    }
  }
  ~CreatedFolders() {
    if (keep) return;
    for (const std::filesystem::path& p : paths) {
      std::error_code ec;
      if (!std::filesystem::is_directory(std::filesystem::symlink_status(p, ec)) || !std::filesystem::is_empty(p, ec) || ec) break;
      std::filesystem::remove(p, ec);  // rmdir: fails, harmlessly, if a file appeared meanwhile
      if (ec) break;
    }
  }
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
};

}  // namespace schedsim
