// `schedsim completion bash|zsh`: a shell completion script generated from the CLI11
// app's own subcommands and options, so that it cannot drift from the command line.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace schedsim {

// The script for `shell` ("bash" or "zsh"); install notes are in its first lines and in
// README.md. Subcommands complete at every level; options after a '-'; else file names.
std::string completion_script(const CLI::App& app, const std::string& shell);

}  // namespace schedsim
