// Temporary files that a killed process cannot clean up after itself: they carry the
// writer's process id in their name, and the next process that uses the same place
// removes the ones whose writer is gone. Also the copy of a trace that can be read only
// once (a pipe), so that the readers can read it as often as they need.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace schedsim {

// True when a process with this id exists (kill(pid, 0); EPERM counts as alive).
bool process_is_alive(long pid);

// Removes the files in `dir` for which `pid_of(name)` gives the id of a process that no
// longer exists; returns how many. Files of live processes (this one included) and
// names that `pid_of` does not recognise stay. Errors (a folder that cannot be listed,
// a file already gone) are ignored: this is housekeeping.
std::size_t remove_files_of_dead_processes(const std::string& dir, const std::function<std::optional<long>(const std::string& name)>& pid_of);

// The id in "<prefix><digits>" or "<prefix><digits>-<anything>"; nullopt otherwise.
std::optional<long> pid_after_prefix(const std::string& name, const std::string& prefix);

// The folder for schedsim's temporary files: TMPDIR, else /tmp.
std::string temp_folder();

// A trace given as a named pipe (FIFO), a pipe (`/dev/fd/N` from process substitution,
// /dev/stdin) or another non-regular file can be read only once, but a trace is read up
// to three times (format detection, validation, the run), and so are the files read
// with it (pai-tasks' job table, gavel's throughput matrix). Such an input is copied once
// into temp_folder()/schedsim-spool-PID-N, which is removed on destruction (and, after a
// kill, by the next spool). A regular file is read where it is.
class InputSpool {
 public:
  // Throws InputError naming `path` when it cannot be read or the copy cannot be
  // written; `poll_interrupt` (may be empty) is called between chunks and may throw.
  // `kind` names the file in messages ("cannot open the trace file: ...").
  InputSpool(const std::string& path, const std::function<void(const std::string&)>& poll_interrupt,
             const std::string& kind = "trace file");
  ~InputSpool();
  InputSpool(const InputSpool&) = delete;
  InputSpool& operator=(const InputSpool&) = delete;

  // The file to open: the copy, or the original path.
  const std::string& path() const { return copy_.empty() ? original_ : copy_; }
  bool spooled() const { return !copy_.empty(); }
  // `message` with the copy's path replaced by the original's, so that errors name the
  // file the user gave.
  std::string renamed(std::string message) const;

 private:
  std::string original_, copy_;
};

}  // namespace schedsim
