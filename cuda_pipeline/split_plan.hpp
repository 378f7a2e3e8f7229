// How many ways cuda:tuned splits the j range (plain C++, so it is tested without a GPU).
#pragma once

namespace nbody::cuda {

// The S in 1..max_splits that minimises the modelled time of blocks_i x S blocks, each summing
// ceil(tiles / S) tiles, on `sms` SMs: the busiest SM runs ceil(blocks / sms) blocks, and an SM
// with fewer than `saturating_warps` resident warps issues at that fraction of its peak. The
// smallest S within 2% of the best is taken: each split costs a partial-sum array of N Vec4.
int choose_splits(long long blocks_i, long long tiles, int sms, int warps_per_block,
                  int saturating_warps = 8, int max_splits = 128);

// The fewest parts of the j range a default plan has (where there are that many tiles): enough
// that a distributed rank's own block holds whole parts, which it computes while the other ranks'
// positions arrive (body_system.cuh). S depends only on the global N, so every body's sum is the
// same for any number of ranks. At N = 2^20 the 16 partial sums cost the integrate kernel 256 MiB
// of reads a step, against 0.5 s of force kernel on an H100.
constexpr int kOverlapSplits = 16;

// The launch plan cuda:tuned and cuda:mixed share: blocks of `block` threads, each owning
// block x k bodies (rows), and the j range of the npad / block tiles in S parts.
// S: `split` when given (at most the tiles), else the larger of choose_splits for these rows and
// kOverlapSplits (at most the tiles).
int row_block_splits(long long npad, int block, int k, int split, int sms);

// Split s of S sums the tiles [begin, end) of `tiles` (the kernels' split_tiles, tuned_kernels.cuh).
struct TileSpan {
  long long begin = 0, end = 0;
};
inline TileSpan split_tiles(long long tiles, int s, int S) {
  return {tiles * s / S, tiles * (s + 1) / S};
}

// The run of splits [first, end) whose bodies all lie in [have_begin, have_end) (tiles of `tile`
// bodies): what a rank can sum before the exchange. Empty (first == end) when none does.
struct SplitRun {
  int first = 0, end = 0;
};
SplitRun splits_within(long long tiles, int splits, long long tile, long long have_begin, long long have_end);

struct RowBlocks {
  int k = 0;       // bodies per thread for this launch
  int row0 = 0;    // the first row of block 0, a multiple of block x k
  int blocks = 0;  // row blocks from row0 that cover [first, end)
};
// The row blocks covering bodies [first, end). Distributed (a rank's block of rows), k halves down
// to 1 until blocks x splits fill the SMs about twice, as one process's launch does; k only maps
// bodies to threads, so each body's sum over j, and its bits, are the same whatever k.
RowBlocks row_blocks(int first, int end, int block, int k, int splits, int sms, bool distributed);

}  // namespace nbody::cuda
