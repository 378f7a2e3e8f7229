// Output files a CI system and a user can rely on (DESIGN.md, "Exit codes and outputs"):
//  - a regular file, or a path that does not exist yet, is written to a temporary file in the same
//    folder, fsynced, renamed over the target, and the folder fsynced: never half a file under the
//    real name;
//  - a symlink is resolved first and its target is written the same way (the link stays a link);
//  - anything else (a device, a FIFO, "-" or /dev/stdout, /dev/stderr, /dev/fd/N) is written
//    through (a descriptor the process already has is written as it is, never reopened);
//  - every write, fsync and close is checked. A failure throws OutputError naming the path and
//    the system's reason, and removes the temporary file.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nbody {

// Writing an output failed (disk full, I/O error, ...): the driver exits 3.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Output {
 public:
  explicit Output(std::string path);
  ~Output();  // without commit(): the temporary file is removed, the target untouched
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes, fsyncs and renames (or closes the device). Throws OutputError.
  void commit();
  // True when the output is written through (device, FIFO, stdout) rather than renamed.
  bool through() const { return through_; }

 private:
  void flush();
  std::string path_, target_, tmp_;
  int fd_ = -1;
  bool through_ = false, committed_ = false;
  std::vector<char> buffer_;
};

// Distributed runs: only rank 0 writes. On the other ranks every Output is a sink that writes
// nothing (and creates nothing).
void set_outputs_enabled(bool enabled);
bool outputs_enabled();

// True when `path` is stdout ("-", /dev/stdout, /dev/fd/1). Then call summary_to_stderr() before
// printing anything: the human summary goes to stderr and stdout carries only the output.
bool names_stdout(const std::string& path);
void summary_to_stderr();

// One whole text, written as above.
void write_output(const std::string& path, std::string_view text);

// The file a path finally names: symlinks resolved (a dangling one to the path it points at),
// "-" kept as is. For telling two outputs apart.
std::string resolve_output(const std::string& path);

// Throws InputError (exit 2) before any work: an output whose folder is missing or not writable,
// a folder, or a device/FIFO that cannot be opened for writing.
void check_output_path(const std::string& path, const std::string& option);
// A folder the command will create (run --out) once every check has passed: check_output_path
// accepts an output inside it although it does not exist yet.
void expect_folder(const std::string& dir);
// Throws InputError when two of the (option, path) pairs name the same file. Empty paths are
// ignored.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace nbody
