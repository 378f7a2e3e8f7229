#include "checkpoint.hpp"

#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "error.hpp"
#include "io.hpp"
#include "output.hpp"

namespace nbody {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian");

namespace {

constexpr char kMagic[8] = {'\x89', 'N', 'B', 'C', 'K', 'P', 'T', '\n'};
constexpr std::size_t kTag = 8, kBlockHead = kTag + 8, kCrc = 4;

const std::array<std::uint32_t, 256>& crc_table() {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
      t[i] = c;
    }
    return t;
  }();
  return table;
}

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void block(std::string& out, const char* tag, std::string_view payload) {
  const std::size_t at = out.size();
  std::string t(tag);
  t.resize(kTag, '\0');
  out += t;
  put<std::uint64_t>(out, payload.size());
  out += payload;
  put<std::uint32_t>(out, crc32c(out.data() + at, out.size() - at));
}

template <typename F>
std::string values(std::size_t n, int per_body, int bits, F value) {
  std::string s;
  s.reserve(n * per_body * (bits / 8));
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < per_body; ++k) {
      const double v = value(i, k);
      if (bits == 64) {
        s.append(reinterpret_cast<const char*>(&v), sizeof v);
      } else {
        const float f = static_cast<float>(v);
        if (static_cast<double>(f) != v && !(std::isnan(v) && std::isnan(f)))
          throw std::logic_error("checkpoint: body " + std::to_string(i) +
                                 " holds a value that is not a float in a 32-bit pipeline's state");
        s.append(reinterpret_cast<const char*>(&f), sizeof f);
      }
    }
  return s;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) {
  const auto& t = crc_table();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = t[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::vector<char> encode_checkpoint(const Checkpoint& c) {
  if (c.bits != 32 && c.bits != 64) throw std::logic_error("checkpoint: bits must be 32 or 64");
  if (c.state.vel.size() != c.state.pos.size()) throw std::logic_error("checkpoint: pos and vel differ in size");
  const std::size_t n = c.state.size();
  std::string out(kMagic, sizeof kMagic);
  put<std::uint32_t>(out, kCheckpointVersion);
  std::string shape(16, '\0');
  const std::uint64_t n64 = n;
  const std::uint32_t bits = static_cast<std::uint32_t>(c.bits);
  std::memcpy(shape.data(), &n64, 8);
  std::memcpy(shape.data() + 8, &bits, 4);
  block(out, "SHAPE", shape);
  block(out, "META", c.meta);
  block(out, "POS", values(n, 4, c.bits, [&](std::size_t i, int k) {
          const Vec4& p = c.state.pos[i];
          return k == 0 ? p.x : k == 1 ? p.y : k == 2 ? p.z : p.w;
        }));
  block(out, "VEL", values(n, 3, c.bits, [&](std::size_t i, int k) {
          const Vec3& v = c.state.vel[i];
          return k == 0 ? v.x : k == 1 ? v.y : v.z;
        }));
  block(out, "END", {});
  return std::vector<char>(out.begin(), out.end());
}

namespace {

struct Shape {
  std::uint64_t n;
  std::uint32_t bits;
};

// Reads a checkpoint's bytes; every failure names the checkpoint.
struct Decoder {
  const std::string& name;

  InputError fail(const std::string& why) const { return InputError("checkpoint '" + name + "': " + why); }

  void check_header(std::string_view bytes) const {
    if (bytes.size() < sizeof kMagic + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
      throw fail("not an nbody checkpoint (the magic number is missing)");
    const auto version = get<std::uint32_t>(bytes.data() + sizeof kMagic);
    if (version != kCheckpointVersion)
      throw fail("format version " + std::to_string(version) + "; this nbody reads version " +
                 std::to_string(kCheckpointVersion));
  }

  // The payloads of SHAPE, META, POS, VEL and END, in that order. Each block's length is checked
  // against what is left before it is used, and nothing may follow END.
  std::array<std::string_view, 5> blocks(std::string_view bytes) const {
    constexpr const char* kOrder[] = {"SHAPE", "META", "POS", "VEL", "END"};
    std::array<std::string_view, 5> payload;
    std::size_t at = sizeof kMagic + 4;
    for (int b = 0; b < 5; ++b) {
      const std::string expected = kOrder[b];
      const std::size_t left = bytes.size() - at;
      if (left < kBlockHead + kCrc)
        throw fail("truncated: block " + expected + " is missing (" + std::to_string(left) +
                   " bytes left, a block needs at least " + std::to_string(kBlockHead + kCrc) + ")");
      const char* head = bytes.data() + at;
      const std::string tag = tag_of(head);
      if (tag != expected)
        throw fail("block " + std::to_string(b + 1) + " should be " + expected + " but is " +
                   (tag.empty() ? std::string("unreadable") : tag) + " (corrupt or another format)");
      const auto length = get<std::uint64_t>(head + kTag);
      if (length > left - kBlockHead - kCrc)
        throw fail("block " + tag + " claims " + std::to_string(length) + " bytes but only " +
                   std::to_string(left - kBlockHead - kCrc) + " follow: truncated");
      const std::uint32_t stored = get<std::uint32_t>(head + kBlockHead + length);
      const std::uint32_t computed = crc32c(head, kBlockHead + length);
      if (stored != computed)
        throw fail("block " + tag + " fails its CRC32C check (stored " + hex(stored) + ", computed " +
                   hex(computed) + "): corrupt");
      payload[b] = bytes.substr(at + kBlockHead, length);
      at += kBlockHead + length + kCrc;
    }
    if (at != bytes.size()) throw fail(std::to_string(bytes.size() - at) + " bytes after the END block");
    return payload;
  }

  // A block's tag without its NUL padding; empty unless it is all capital letters.
  static std::string tag_of(const char* head) {
    std::string tag(head, kTag);
    tag.resize(std::strlen(tag.c_str()));
    for (char ch : tag)
      if (ch < 'A' || ch > 'Z') return {};
    return tag;
  }

  // SHAPE's n and bits, and POS and VEL checked to hold n bodies of that precision.
  Shape shape(const std::array<std::string_view, 5>& payload) const {
    if (payload[0].size() != 16)
      throw fail("block SHAPE has " + std::to_string(payload[0].size()) + " bytes, expected 16");
    const auto n = get<std::uint64_t>(payload[0].data());
    const auto bits = get<std::uint32_t>(payload[0].data() + 8);
    if (bits != 32 && bits != 64) throw fail("block SHAPE: bits is " + std::to_string(bits) + ", expected 32 or 64");
    if (n == 0 || n > 2147483647u) throw fail("block SHAPE: n is " + std::to_string(n) + ", expected 1..2147483647");
    const std::size_t w = bits / 8;
    // n <= 2^31 - 1 and w <= 8: these products fit in 64 bits.
    if (payload[2].size() != n * 4 * w)
      throw fail("block POS has " + std::to_string(payload[2].size()) + " bytes; " + std::to_string(n) +
                 " bodies of " + std::to_string(bits) + "-bit x, y, z, m need " + std::to_string(n * 4 * w));
    if (payload[3].size() != n * 3 * w)
      throw fail("block VEL has " + std::to_string(payload[3].size()) + " bytes; " + std::to_string(n) +
                 " bodies of " + std::to_string(bits) + "-bit vx, vy, vz need " + std::to_string(n * 3 * w));
    return {n, bits};
  }
};

}  // namespace

Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name) {
  const Decoder d{name};
  d.check_header(bytes);
  const std::array<std::string_view, 5> payload = d.blocks(bytes);
  const Shape shape = d.shape(payload);

  Checkpoint c;
  c.bits = static_cast<int>(shape.bits);
  c.meta.assign(payload[1]);
  auto value = [&](std::string_view block, std::size_t k) -> double {
    return shape.bits == 64 ? get<double>(block.data() + 8 * k) : get<float>(block.data() + 4 * k);
  };
  c.state.resize(shape.n);
  for (std::size_t i = 0; i < shape.n; ++i) {
    c.state.pos[i] = {value(payload[2], 4 * i), value(payload[2], 4 * i + 1), value(payload[2], 4 * i + 2),
                      value(payload[2], 4 * i + 3)};
    c.state.vel[i] = {value(payload[3], 3 * i), value(payload[3], 3 * i + 1), value(payload[3], 3 * i + 2)};
  }
  validate_bodies(c.state, "checkpoint '" + name + "'");
  return c;
}

std::optional<std::string> read_checkpoint_meta(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  // The magic and version, SHAPE (its 16 bytes), then META's tag and length.
  constexpr std::size_t kShape = kBlockHead + 16 + kCrc, kHead = sizeof kMagic + 4;
  std::string bytes(kHead + kShape + kBlockHead, '\0');
  if (!f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return std::nullopt;
  const auto block = [&](std::size_t at, const char* tag) {
    char t[kTag] = {};
    std::memcpy(t, tag, std::strlen(tag));
    return std::memcmp(bytes.data() + at, t, kTag) == 0;
  };
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0 ||
      get<std::uint32_t>(bytes.data() + sizeof kMagic) != kCheckpointVersion || !block(kHead, "SHAPE") ||
      get<std::uint64_t>(bytes.data() + kHead + kTag) != 16 ||
      get<std::uint32_t>(bytes.data() + kHead + kBlockHead + 16) != crc32c(bytes.data() + kHead, kBlockHead + 16) ||
      !block(kHead + kShape, "META"))
    return std::nullopt;
  const auto length = get<std::uint64_t>(bytes.data() + kHead + kShape + kTag);
  if (length > (std::uint64_t{1} << 30)) return std::nullopt;
  const std::size_t at = bytes.size();
  bytes.resize(at + length + kCrc);
  if (!f.read(bytes.data() + at, static_cast<std::streamsize>(length + kCrc))) return std::nullopt;
  if (get<std::uint32_t>(bytes.data() + at + length) != crc32c(bytes.data() + kHead + kShape, kBlockHead + length))
    return std::nullopt;
  return bytes.substr(at, length);
}

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  const std::vector<char> bytes = encode_checkpoint(c);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (outputs_enabled() && fs::is_regular_file(path, ec)) {
    // Keep the one before: link it under a temporary name, then rename that over .prev, so that
    // .prev too is always whole.
    const std::string prev = path + ".prev", tmp = path + ".prev.tmp";
    ::unlink(tmp.c_str());
    if (::link(path.c_str(), tmp.c_str()) != 0 || std::rename(tmp.c_str(), prev.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      ::unlink(tmp.c_str());
      throw OutputError("cannot keep the previous checkpoint as '" + prev + "': " + why);
    }
  }
  Output out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

Checkpoint read_checkpoint(const std::string& path) {
  const std::vector<char> bytes = read_file(path);
  return decode_checkpoint(std::string_view(bytes.data(), bytes.size()), path);
}

}  // namespace nbody
