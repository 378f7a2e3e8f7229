// A scratch folder per test process, removed when the process ends.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace scratch_test {

// <temp>/<prefix>-<pid>, created on first use; `prefix` must be the same on every call.
inline std::filesystem::path scratch_folder(const std::string& prefix) {
  namespace fs = std::filesystem;
  static const struct Folder {
    fs::path d;
    ~Folder() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } folder{fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()))};
  fs::create_directories(folder.d);
  return folder.d;
}

}  // namespace scratch_test
