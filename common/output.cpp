#include "output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "error.hpp"
#include "interrupts.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBuffer = 1 << 20;
bool g_enabled = true;
int g_stdout = STDOUT_FILENO;  // where "-" goes (summary_to_stderr() moves the summary away)

// A path that names a descriptor this process already has: stdout, stderr, /dev/fd/N,
// /proc/self/fd/N (what a shell gives for >(...)). -1 for any other path.
int inherited_fd(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return g_stdout;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string pre(prefix);
    if (path.rfind(pre, 0) == 0 && path.size() > pre.size() &&
        path.find_first_not_of("0123456789", pre.size()) == std::string::npos) {
      const int fd = std::atoi(path.c_str() + pre.size());
      return fd == STDOUT_FILENO ? g_stdout : fd;
    }
  }
  return -1;
}

std::string why(const std::string& what, const std::string& path) {
  return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

// Follows symlinks one link at a time, so that a dangling link resolves to the path it names.
std::string follow_links(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return p.string();
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p.string();
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw InputError("'" + path + "': too many levels of symbolic links");
}

fs::path folder_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

}  // namespace

void set_outputs_enabled(bool enabled) { g_enabled = enabled; }


bool names_stdout(const std::string& path) { return !path.empty() && inherited_fd(path) == g_stdout; }

void summary_to_stderr() {
  if (g_stdout != STDOUT_FILENO || !g_enabled) return;  // another rank prints the summary
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  if (saved < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return;
  g_stdout = saved;
}
bool outputs_enabled() { return g_enabled; }

std::string resolve_output(const std::string& path) {
  if (const int fd = inherited_fd(path); fd >= 0) return "fd:" + std::to_string(fd == g_stdout ? 1 : fd);
  const fs::path target(follow_links(path));
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(folder_of(target), ec), ec);
  return (dir / target.filename()).lexically_normal().string();
}

Output::Output(std::string path) : path_(std::move(path)) {
  if (!g_enabled) {  // a sink: another rank writes this output
    committed_ = true;
    return;
  }
  buffer_.reserve(kBuffer);
  if (const int fd = inherited_fd(path_); fd >= 0) {  // an open descriptor: written through
    std::fflush(stdout);  // what the program printed comes first
    fd_ = ::dup(fd);
    if (fd_ < 0) throw OutputError(why("write to", path_));
    through_ = true;
    return;
  }
  target_ = follow_links(path_);
  struct stat st{};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw OutputError("cannot write '" + path_ + "': it is a folder");
  if (exists && !S_ISREG(st.st_mode)) {  // a device, a FIFO, a socket: written through
    fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) throw OutputError(why("open", path_));
    through_ = true;
    return;
  }
  const fs::path t(target_);
  tmp_ = (folder_of(t) / ("." + t.filename().string() + ".XXXXXX")).string();
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) {
    const std::string msg = why("create a temporary file beside", path_);
    tmp_.clear();
    throw OutputError(msg);
  }
  track_temporary(tmp_);
  // The permissions a new file would get (or the replaced file's own).
  mode_t mode = exists ? (st.st_mode & 07777) : 0;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd_, mode);
}

Output::~Output() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  untrack_temporary();
}

void Output::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      throw OutputError(why("write", path_));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  buffer_.clear();
}

void Output::write(const void* data, std::size_t size) {
  if (!g_enabled) return;
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const std::size_t take = std::min(size, kBuffer - buffer_.size());
    buffer_.insert(buffer_.end(), p, p + take);
    p += take;
    size -= take;
    if (buffer_.size() == kBuffer) flush();
  }
}

void Output::commit() {
  if (!g_enabled) return;
  flush();
  if (through_) {
    if (::close(fd_) != 0) {
      fd_ = -1;
      throw OutputError(why("close", path_));
    }
    fd_ = -1;
    committed_ = true;
    return;
  }
  if (::fsync(fd_) != 0) throw OutputError(why("fsync", path_));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw OutputError(why("close", path_));
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) throw OutputError(why("rename onto", path_));
  tmp_.clear();
  untrack_temporary();
  committed_ = true;
  const int dir = ::open(folder_of(fs::path(target_)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {  // the rename itself is durable once the folder is
    const int rc = ::fsync(dir);
    ::close(dir);
    if (rc != 0 && errno != EINVAL) throw OutputError(why("fsync the folder of", path_));
  }
}

void write_output(const std::string& path, std::string_view text) {
  Output out(path);
  out.write(text);
  out.commit();
}

namespace {
std::vector<std::string> g_expected_folders;  // expect_folder(): made by the command before it writes
std::string absolute_folder(const fs::path& dir) {
  std::error_code ec;
  std::string s = fs::weakly_canonical(fs::absolute(dir, ec), ec).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();  // "out/" and "out" are one folder
  return s;
}
}  // namespace

void expect_folder(const std::string& dir) {
  if (!dir.empty()) g_expected_folders.push_back(absolute_folder(dir));
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  // "--json --no-energy": the parser gave the next option to this one as its value.
  if (path.size() > 1 && path[0] == '-')
    throw InputError(option + " '" + path + "': looks like an option, not a file (" + option +
                     " takes the next word as its file; name such a file ./" + path + ")");
  if (!g_enabled) return;
  if (const int fd = inherited_fd(path); fd >= 0) {
    if (::fcntl(fd, F_GETFD) < 0)
      throw InputError(option + " '" + path + "': descriptor " + std::to_string(fd) + " is not open");
    return;
  }
  const fs::path target(follow_links(path));
  std::error_code ec;
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw InputError(option + " '" + path + "' is a folder");
  if (fs::exists(status) && !fs::is_regular_file(status)) {  // written through
    if (::access(target.c_str(), W_OK) != 0)
      throw InputError(option + " '" + path + "' cannot be written: " + std::strerror(errno));
    return;
  }
  const fs::path dir = folder_of(target);
  if (!fs::exists(dir, ec)) {
    for (const auto& f : g_expected_folders)  // --out, made once every check has passed
      if (f == absolute_folder(dir)) return;
    throw InputError(option + " '" + path + "': folder '" + dir.string() + "' does not exist");
  }
  if (!fs::is_directory(dir, ec))
    throw InputError(option + " '" + path + "': '" + dir.string() + "' is not a folder");
  // The test that counts: can a file be made there (a read-only or virtual file system says no)?
  std::string probe = (dir / ".nbody-probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw InputError(option + " '" + path + "': the folder '" + dir.string() + "' takes no new files (a test file there: " +
                     std::strerror(errno) + "); name a file in a folder you can write");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t a = 0; a < outputs.size(); ++a)
    for (std::size_t b = a + 1; b < outputs.size(); ++b) {
      if (outputs[a].second.empty() || outputs[b].second.empty()) continue;
      if (resolve_output(outputs[a].second) == resolve_output(outputs[b].second))
        throw InputError(outputs[a].first + " and " + outputs[b].first + " both name '" +
                         outputs[b].second + "': each output needs its own file");
    }
}

}  // namespace nbody
