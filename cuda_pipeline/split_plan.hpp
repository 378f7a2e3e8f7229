// How many ways cuda:tuned splits the j range (plain C++, so it is tested without a GPU).
#pragma once

namespace nbody::cuda {

// The S in 1..max_splits that minimises the modelled time of blocks_i x S blocks, each summing
// ceil(tiles / S) tiles, on `sms` SMs: the busiest SM runs ceil(blocks / sms) blocks, and an SM
// with fewer than `saturating_warps` resident warps issues at that fraction of its peak. The
// smallest S within 2% of the best is taken: each split costs a partial-sum array of N Vec4.
int choose_splits(long long blocks_i, long long tiles, int sms, int warps_per_block,
                  int saturating_warps = 8, int max_splits = 128);

// The launch plan cuda:tuned and cuda:mixed share: blocks of `block` threads, each owning
// block x k bodies (rows), and the j range of the npad / block tiles in S parts.
// S: `split` when given (at most the tiles), else choose_splits for these rows.
int row_block_splits(long long npad, int block, int k, int split, int sms);

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
