// How many ways cuda:tuned splits the j range (plain C++, so it is tested without a GPU).
#pragma once

namespace nbody::cuda {

// The S in 1..max_splits that minimises the modelled time of blocks_i x S blocks, each summing
// ceil(tiles / S) tiles, on `sms` SMs: the busiest SM runs ceil(blocks / sms) blocks, and an SM
// with fewer than `saturating_warps` resident warps issues at that fraction of its peak. The
// smallest S within 2% of the best is taken: each split costs a partial-sum array of N Vec4.
int choose_splits(long long blocks_i, long long tiles, int sms, int warps_per_block,
                  int saturating_warps = 8, int max_splits = 128);

}  // namespace nbody::cuda
