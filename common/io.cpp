#include "io.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "output.hpp"
#include "parallel.hpp"

namespace nbody {

std::vector<char> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError("cannot read '" + path + "': it is a folder");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<char> data;
  char chunk[1 << 16];
  while (f.read(chunk, sizeof chunk) || f.gcount() > 0)
    data.insert(data.end(), chunk, chunk + f.gcount());
  if (f.bad()) throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  return data;
}

namespace {

// std::bit_cast, which the browser build's standard library (libc++ 14) lacks.
template <typename To, typename From>
To bits(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// The whole of `u` as a decimal double (no leading '+', no spaces, no hex); out-of-range values are
// 0 or inf, as strtod makes them. std::from_chars where the standard library has it for doubles.
bool parse_double(std::string_view u, double& x) {
#if defined(__cpp_lib_to_chars)
  auto [end, ec] = std::from_chars(u.data(), u.data() + u.size(), x);
  if (ec == std::errc::result_out_of_range) {  // 1e-400 is 0 and 1e400 is inf, as strtod says
    const std::string copy(u);
    x = std::strtod(copy.c_str(), nullptr);
    ec = std::errc();
  }
  return ec == std::errc() && end == u.data() + u.size();
#else
  if (u.empty() || u.find_first_not_of("0123456789.eE+-") != std::string_view::npos) return false;
  const std::string copy(u);
  char* end = nullptr;
  x = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
#endif
}

// `v` in the shortest text that reads back as the same double (%.17g where std::to_chars has no
// doubles); returns the end of the text written into buf.
char* shortest(char* buf, std::size_t size, double v) {
#if defined(__cpp_lib_to_chars)
  return std::to_chars(buf, buf + size, v).ptr;
#else
  const int k = std::snprintf(buf, size, "%.17g", v);
  return buf + std::min<std::size_t>(static_cast<std::size_t>(std::max(k, 0)), size - 1);
#endif
}

template <typename T>
T load(const char* p, bool swap) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  U u;
  std::memcpy(&u, p, sizeof u);
  if (swap) {
    if constexpr (sizeof(T) == 4)
      u = __builtin_bswap32(u);
    else
      u = __builtin_bswap64(u);
  }
  return bits<T>(u);
}

}  // namespace

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (suffix.size() > s.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

void validate_bodies(const Bodies& b, const std::string& where) {
  if (b.size() == 0) throw InputError(where + ": no bodies");
  std::atomic<bool> massive{false};  // seen on the way (every body is seen where none is wrong)
  const std::size_t i = first_where(b.size(), [&](std::size_t k) {
    const double v[7] = {b.pos[k].x, b.pos[k].y, b.pos[k].z, b.pos[k].w, b.vel[k].x, b.vel[k].y, b.vel[k].z};
    if (!std::all_of(v, v + 7, [](double x) { return std::isfinite(x); }) || b.pos[k].w < 0) return true;
    if (b.pos[k].w > 0) massive.store(true, std::memory_order_relaxed);
    return false;
  });
  if (i < b.size()) {
    const double v[7] = {b.pos[i].x, b.pos[i].y, b.pos[i].z, b.pos[i].w, b.vel[i].x, b.vel[i].y, b.vel[i].z};
    if (!std::all_of(v, v + 7, [](double x) { return std::isfinite(x); }))
      throw InputError(where + ": body " + std::to_string(i) + " has a non-finite value");
    throw InputError(where + ": body " + std::to_string(i) + " has negative mass " + std::to_string(b.pos[i].w));
  }
  // Nothing attracts anything, and every relative measure (the energy's drift) is 0/0.
  if (!massive.load()) throw InputError(where + ": the masses add up to 0 (at least one body needs mass > 0)");
}

Bodies read_tipsy(const std::string& path, TipsyCounts* counts) {
  const std::vector<char> data = read_file(path);
  return parse_tipsy(std::string_view(data.data(), data.size()), path, counts);
}

namespace {

constexpr std::size_t kTipsyHeader = 32, kTipsyGas = 48, kTipsyDark = 36, kTipsyStar = 44;

// The 32-byte header `h` of a Tipsy file of `size` bytes, checked against the size before anything
// is allocated: ndim 3, counts that add up, and exactly the bytes they need.
TipsyCounts tipsy_header(const char* h, std::size_t size, const std::string& path) {
  TipsyCounts c;
  c.big_endian = load<std::int32_t>(h + 12, false) != 3 && load<std::int32_t>(h + 12, true) == 3;
  const bool sw = c.big_endian;
  c.nbodies = load<std::int32_t>(h + 8, sw);
  c.ndim = load<std::int32_t>(h + 12, sw);
  c.nsph = load<std::int32_t>(h + 16, sw);
  c.ndark = load<std::int32_t>(h + 20, sw);
  c.nstar = load<std::int32_t>(h + 24, sw);
  if (c.ndim != 3)
    throw InputError("'" + path + "' is not a Tipsy file: ndim is " + std::to_string(c.ndim) +
                     ", expected 3");
  if (c.nsph < 0 || c.ndark < 0 || c.nstar < 0 ||
      static_cast<long long>(c.nsph) + c.ndark + c.nstar != c.nbodies)
    throw InputError("'" + path + "': Tipsy counts disagree: nbodies " + std::to_string(c.nbodies) +
                     " != nsph " + std::to_string(c.nsph) + " + ndark " + std::to_string(c.ndark) +
                     " + nstar " + std::to_string(c.nstar));
  // Counts are non-negative int32s: the size fits in 64 bits.
  const std::size_t expected = kTipsyHeader + kTipsyGas * static_cast<std::size_t>(c.nsph) +
                               kTipsyDark * static_cast<std::size_t>(c.ndark) +
                               kTipsyStar * static_cast<std::size_t>(c.nstar);
  if (size != expected)
    throw InputError("'" + path + "' is " + std::to_string(size) + " bytes but its header (" +
                     std::to_string(c.nsph) + " gas, " + std::to_string(c.ndark) + " dark, " +
                     std::to_string(c.nstar) + " star) needs " + std::to_string(expected) +
                     (size < expected ? ": truncated" : ": trailing data"));
  return c;
}

}  // namespace

Bodies parse_tipsy(std::string_view data, const std::string& path, TipsyCounts* counts_out) {
  constexpr std::size_t kGas = kTipsyGas, kDark = kTipsyDark, kStar = kTipsyStar;
  if (data.size() < kTipsyHeader)
    throw InputError("'" + path + "' is truncated: " + std::to_string(data.size()) +
                     " bytes, a Tipsy header needs 32");
  const TipsyCounts c = tipsy_header(data.data(), data.size(), path);
  const bool sw = c.big_endian;
  std::size_t off = kTipsyHeader;
  Bodies b;
  b.pos.reserve(c.nbodies);
  b.vel.reserve(c.nbodies);
  auto take = [&](int count, std::size_t stride) {
    for (int k = 0; k < count; ++k, off += stride) {
      const char* p = data.data() + off;  // mass, pos[3], vel[3] lead every particle type
      const double m = load<float>(p, sw);
      b.pos.push_back({load<float>(p + 4, sw), load<float>(p + 8, sw), load<float>(p + 12, sw), m});
      b.vel.push_back({load<float>(p + 16, sw), load<float>(p + 20, sw), load<float>(p + 24, sw)});
    }
  };
  take(c.nsph, kGas);
  take(c.ndark, kDark);
  take(c.nstar, kStar);
  validate_bodies(b, "'" + path + "'");
  if (counts_out) *counts_out = c;
  return b;
}

std::size_t count_bodies(const std::string& path) {
  if (!ends_with_ci(path, ".csv")) {  // Tipsy: nbodies in the header, checked against the file's size
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    char h[kTipsyHeader];
    if (!f.read(h, sizeof h)) return 0;  // the reader names a truncated file
    f.seekg(0, std::ios::end);
    return static_cast<std::size_t>(tipsy_header(h, static_cast<std::size_t>(f.tellg()), path).nbodies);
  }
  const std::vector<char> data = read_file(path);
  std::size_t lines = 0;
  bool blank = true;
  for (char c : data) {
    if (c == '\n') {
      lines += !blank;
      blank = true;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      blank = false;
    }
  }
  lines += !blank;
  return lines > 0 ? lines - 1 : 0;  // the header
}

Bodies read_csv(const std::string& path) {
  const std::vector<char> data = read_file(path);
  return parse_csv(std::string_view(data.data(), data.size()), path);
}

Bodies parse_csv(std::string_view all, const std::string& path) {
  // One pass over the buffer, no stream per line: 10^6 bodies read in well under a second.
  auto trim = [](std::string_view t) {
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
    return t;
  };
  std::size_t at = 0;
  auto next_line = [&](std::string_view& line) {
    if (at >= all.size()) return false;
    const std::size_t end = std::min(all.find('\n', at), all.size());
    line = all.substr(at, end - at);
    at = end + 1;
    return true;
  };
  std::string_view line;
  std::string header;
  if (next_line(line)) {
    if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // a UTF-8 byte-order mark (spreadsheets write one)
    for (char ch : line)
      if (!std::isspace(static_cast<unsigned char>(ch))) header += ch;
  }
  if (header != "x,y,z,vx,vy,vz,m")
    throw InputError("'" + path + "': the first line must be the header x,y,z,vx,vy,vz,m");
  Bodies b;
  for (int lineno = 2; next_line(line); ++lineno) {
    if (trim(line).empty()) continue;
    double v[7];
    int count = 0;
    for (std::size_t from = 0;;) {
      const std::size_t comma = std::min(line.find(',', from), line.size());
      const std::string_view t = trim(line.substr(from, comma - from));
      const std::string_view u = t.starts_with('+') ? t.substr(1) : t;  // from_chars takes no '+'
      double x = 0;
      if (t.empty() || u.starts_with('-') != t.starts_with('-') || !parse_double(u, x))
        throw InputError("'" + path + "' line " + std::to_string(lineno) + ": '" + std::string(t) +
                         "' is not a number");
      if (count < 7) v[count] = x;
      ++count;
      if (comma == line.size()) break;
      from = comma + 1;
    }
    if (count != 7)
      throw InputError("'" + path + "' line " + std::to_string(lineno) + ": expected 7 values, got " +
                       std::to_string(count));
    b.pos.push_back({v[0], v[1], v[2], v[6]});
    b.vel.push_back({v[3], v[4], v[5]});
  }
  validate_bodies(b, "'" + path + "'");
  return b;
}

void write_tipsy(const std::string& path, const Bodies& b, double time, double softening) {
  if (b.size() > 2147483647u) throw std::logic_error("write_tipsy: more bodies than an int32 counts");
  std::vector<char> out;
  out.reserve(32 + 36 * b.size());
  auto be32 = [&](std::uint32_t u) {
    u = __builtin_bswap32(u);
    const char* p = reinterpret_cast<const char*>(&u);
    out.insert(out.end(), p, p + 4);
  };
  auto f = [&](double v) { be32(bits<std::uint32_t>(static_cast<float>(v))); };
  const std::uint64_t t = __builtin_bswap64(bits<std::uint64_t>(time));
  out.insert(out.end(), reinterpret_cast<const char*>(&t), reinterpret_cast<const char*>(&t) + 8);
  const auto n = static_cast<std::uint32_t>(b.size());
  for (std::uint32_t v : {n, 3u, 0u, n, 0u, 0u}) be32(v);  // nbodies, ndim, nsph, ndark, nstar, pad
  for (std::size_t i = 0; i < b.size(); ++i) {  // dark particles: mass, pos, vel, eps, phi
    for (double v : {b.pos[i].w, b.pos[i].x, b.pos[i].y, b.pos[i].z, b.vel[i].x, b.vel[i].y, b.vel[i].z,
                     softening, 0.0})
      f(v);
  }
  write_output(path, std::string_view(out.data(), out.size()));
}

void write_csv(const std::string& path, const Bodies& b) {
  Output out(path);
  out.write("x,y,z,vx,vy,vz,m\n");
  std::string line;
  char num[32];
  for (std::size_t i = 0; i < b.size(); ++i) {
    line.clear();
    // Shortest round-trip form: reading the file back gives the same doubles.
    for (double v : {b.pos[i].x, b.pos[i].y, b.pos[i].z, b.vel[i].x, b.vel[i].y, b.vel[i].z, b.pos[i].w}) {
      if (!line.empty()) line += ',';
      line.append(num, shortest(num, sizeof num, v));
    }
    line += '\n';
    out.write(line);
  }
  out.commit();
}

}  // namespace nbody
