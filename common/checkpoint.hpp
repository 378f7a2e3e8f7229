// Checkpoints: a run's exact state, so that K steps and a resume for K more give the same bits
// as 2K steps in one run (DESIGN.md, "Checkpoints").
//
// The file, all integers little-endian:
//   magic   8 bytes  "\x89NBCKPT\n" (a high bit and a newline: 7-bit and text-mode copies fail)
//   version u32      kCheckpointVersion
//   blocks           tag (8 bytes, ASCII, NUL-padded), u64 payload length, payload,
//                    u32 CRC32C of tag, length and payload
// The blocks, in this order: SHAPE (u64 n, u32 bits, u32 0), META (JSON text: the run),
// POS (n x {x,y,z,m}), VEL (n x {vx,vy,vz}) and END (empty; nothing may follow it). POS and VEL
// hold the pipeline's state in its own precision: float32 (bits 32) or float64 (bits 64), the
// velocities being the leapfrog's v_{n-1/2}.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bodies.hpp"

namespace nbody {

inline constexpr std::uint32_t kCheckpointVersion = 1;

struct Checkpoint {
  std::string meta;  // JSON text, written and read by the driver
  int bits = 64;     // 32 or 64: the precision of the pipeline's state
  Bodies state;      // x_n and v_{n-1/2}; with bits 32 every value is a float
};

// CRC-32C (Castagnoli), continuing from `crc` (0 to start).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);

// The file's bytes. Throws std::logic_error when bits is 32 and a value is not a float (the
// state would not be the pipeline's own).
std::vector<char> encode_checkpoint(const Checkpoint& c);
// Throws InputError naming `name`, the block and the check that failed. Allocates nothing
// beyond the size of `bytes`.
Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name);

// Writes `path` through Output (temporary file, fsync, rename, folder fsync). A checkpoint
// already at `path` is kept as `path`.prev first (a hard link, renamed into place).
void write_checkpoint(const std::string& path, const Checkpoint& c);
Checkpoint read_checkpoint(const std::string& path);
// The META block alone, read from the file's start without the state (its header, SHAPE and META
// checked, CRCs included); nullopt where the file does not start as a checkpoint does.
std::optional<std::string> read_checkpoint_meta(const std::string& path);

}  // namespace nbody
