// Untrusted HDF5 files, read in a child process with capped memory and time (hdf5_io.hpp), and
// the snapshot a count of bodies parsed kept for the read that follows it.
#include "hdf5_io.hpp"

#ifdef NBODY_HAVE_HDF5
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "error.hpp"
#include "io.hpp"

namespace nbody {

namespace {

// The child's answer, through a pipe: 'K' and the snapshot, or 'E' and InputError's message.
void put_bytes(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }
template <typename T>
void put_value(std::string& out, T v) {
  put_bytes(out, &v, sizeof v);
}
void put_string(std::string& out, const std::string& s) {
  put_value<std::uint64_t>(out, s.size());
  out += s;
}

std::string serialise(const Hdf5Snapshot& s) {
  std::string out = "K";
  put_value<std::uint64_t>(out, s.bodies.size());
  put_bytes(out, s.bodies.pos.data(), s.bodies.size() * sizeof(Vec4));
  put_bytes(out, s.bodies.vel.data(), s.bodies.size() * sizeof(Vec3));
  put_value<std::uint64_t>(out, s.groups.size());
  for (std::size_t g : s.groups) put_value<std::uint64_t>(out, g);
  put_value(out, s.time);
  put_value<std::uint64_t>(out, s.ours.size());
  for (const auto& [key, value] : s.ours) {
    put_string(out, key);
    put_value<char>(out, static_cast<char>(value.index()));
    if (const auto* str = std::get_if<std::string>(&value)) put_string(out, *str);
    else if (const auto* d = std::get_if<double>(&value)) put_value(out, *d);
    else put_value(out, std::get<long long>(value));
  }
  return out;
}

// Reads what serialise() wrote (from our own child: sizes are checked, not distrusted further).
Hdf5Snapshot deserialise(std::string_view in) {
  std::size_t at = 1;
  auto take = [&](void* p, std::size_t n) {
    if (n > in.size() - at) throw std::runtime_error("HDF5 reader: short answer from the reading process");
    std::memcpy(p, in.data() + at, n);
    at += n;
  };
  auto u64 = [&] {
    std::uint64_t v;
    take(&v, sizeof v);
    return v;
  };
  auto str = [&] {
    const std::uint64_t n = u64();
    if (n > in.size() - at) throw std::runtime_error("HDF5 reader: short answer from the reading process");
    std::string s(in.data() + at, n);
    at += n;
    return s;
  };
  Hdf5Snapshot s;
  const std::uint64_t n = u64();
  if (n > in.size() / sizeof(Vec3)) throw std::runtime_error("HDF5 reader: short answer from the reading process");
  s.bodies.resize(n);
  take(s.bodies.pos.data(), n * sizeof(Vec4));
  take(s.bodies.vel.data(), n * sizeof(Vec3));
  const std::uint64_t groups = u64();
  for (std::uint64_t g = 0; g < groups && g < 6; ++g) s.groups.push_back(u64());
  take(&s.time, sizeof s.time);
  const std::uint64_t attrs = u64();
  for (std::uint64_t k = 0; k < attrs && at < in.size(); ++k) {
    std::string key = str();
    char type;
    take(&type, 1);
    if (type == 0) {
      s.ours.emplace_back(std::move(key), str());
    } else if (type == 1) {
      double d;
      take(&d, sizeof d);
      s.ours.emplace_back(std::move(key), d);
    } else {
      long long v;
      take(&v, sizeof v);
      s.ours.emplace_back(std::move(key), v);
    }
  }
  return s;
}

// This process's private writable memory (VmData), in bytes; 0 when unknown.
std::size_t data_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmData:", 0) == 0) return static_cast<std::size_t>(std::strtoull(line.c_str() + 7, nullptr, 10)) << 10;
  return 0;
}

}  // namespace

// The HDF5 library trusts the sizes a file states: a crafted file makes it allocate tens of GB or
// crash (fuzzing found both, inside libhdf5 1.10). So untrusted files are parsed in a child
// process whose memory is capped at what the file's size justifies (RLIMIT_DATA: its current use
// plus 16 x the file plus 256 MiB) and whose time is capped (60 s plus 1 s per 10 MB: fuzzing found
// inputs on which libhdf5 loops for ever); a child that dies is a file that cannot be read, never
// a crash or a hang of nbody.
namespace {

// The child: parse, answer on `fd`, and leave without running the parent's exit handlers.
[[noreturn]] void parse_in_child(std::string_view bytes, const std::string& name, unsigned seconds, int fd) {
  const std::size_t used = data_bytes();
  if (used > 0) {
    const rlim_t cap = used + 16 * static_cast<rlim_t>(bytes.size()) + (rlim_t{256} << 20);
    const struct rlimit r{cap, cap};
    ::setrlimit(RLIMIT_DATA, &r);
  }
  ::signal(SIGALRM, SIG_DFL);  // an inherited handler (libFuzzer's) must not keep it alive
  ::alarm(seconds);
  std::string answer;
  try {
    answer = serialise(parse_hdf5(bytes, name));
  } catch (const InputError& e) {
    answer = std::string("E") + e.what();
  } catch (const std::bad_alloc&) {
    answer = "Mout of memory";
  } catch (const std::exception& e) {
    answer = std::string("X") + e.what();
  }
  const char* p = answer.data();
  std::size_t left = answer.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ::_exit(3);
    p += w, left -= static_cast<std::size_t>(w);
  }
  ::_exit(0);
}

std::string read_all(int fd) {
  std::string answer;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    answer.append(chunk, static_cast<std::size_t>(r));
  }
  return answer;
}

// The child's answer: the snapshot, or the error it names; a child that died is a file that
// cannot be read.
Hdf5Snapshot answer_of(int status, const std::string& answer, const std::string& name, unsigned seconds) {
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !answer.empty();
  if (!clean) {
    std::string how = WIFSIGNALED(status) ? std::string(" (") + strsignal(WTERMSIG(status)) + ")" : "";
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) how = " (it took over " + std::to_string(seconds) + " s)";
    throw InputError("'" + name + "': the HDF5 library failed on this file" + how +
                     ": it is corrupt or not a snapshot");
  }
  switch (answer[0]) {
    case 'K':
      return deserialise(answer);
    case 'E':
      throw InputError(answer.substr(1));
    case 'M':
      throw InputError("'" + name + "': reading it needs more memory than its size justifies: corrupt?");
    default:
      throw std::runtime_error("HDF5 reader: " + answer.substr(1));
  }
}

}  // namespace

// The HDF5 library trusts the sizes a file states: a crafted file makes it allocate tens of GB or
// crash (fuzzing found both, inside libhdf5 1.10). So untrusted files are parsed in a child
// process whose memory is capped at what the file's size justifies (RLIMIT_DATA: its current use
// plus 16 x the file plus 256 MiB) and whose time is capped (60 s plus 1 s per 10 MB: fuzzing found
// inputs on which libhdf5 loops for ever); a child that dies is a file that cannot be read, never
// a crash or a hang of nbody.
Hdf5Snapshot parse_hdf5_isolated(std::string_view bytes, const std::string& name, unsigned seconds) {
  if (seconds == 0) seconds = 60 + static_cast<unsigned>(bytes.size() / 10'000'000);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("HDF5 reader: pipe: " + std::string(std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    throw std::runtime_error("HDF5 reader: fork: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    parse_in_child(bytes, name, seconds, fds[1]);
  }
  ::close(fds[1]);
  const std::string answer = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return answer_of(status, answer, name, seconds);
}

namespace {

// What count_hdf5_bodies() parsed, kept for the read_hdf5() of the same unchanged file that
// follows it (which takes it: the snapshot is held once). Keyed by path, size and mtime.
struct Counted {
  std::string path;
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime;
  std::optional<Hdf5Snapshot> snapshot;
};
Counted g_counted;

bool same_file(const Counted& c, const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto mtime = std::filesystem::last_write_time(path, ec);
  return !ec && c.snapshot && c.path == path && c.size == size && c.mtime == mtime;
}

Hdf5Snapshot parse_file(const std::string& path) {
  const std::vector<char> bytes = read_file(path);
  return parse_hdf5_isolated(std::string_view(bytes.data(), bytes.size()), path);
}

}  // namespace

Hdf5Snapshot read_hdf5(const std::string& path) {
  if (same_file(g_counted, path)) {
    Hdf5Snapshot s = std::move(*g_counted.snapshot);
    g_counted.snapshot.reset();
    return s;
  }
  return parse_file(path);
}

std::size_t count_hdf5_bodies(const std::string& path) {
  if (same_file(g_counted, path)) return g_counted.snapshot->bodies.size();
  Hdf5Snapshot s = parse_file(path);
  const std::size_t n = s.bodies.size();
  std::error_code ec;
  g_counted = {path, std::filesystem::file_size(path, ec), std::filesystem::last_write_time(path, ec), std::move(s)};
  if (ec) g_counted.snapshot.reset();
  return n;
}

}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
