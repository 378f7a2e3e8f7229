#include "split_plan.hpp"

#include <algorithm>

namespace nbody::cuda {

int choose_splits(long long blocks_i, long long tiles, int sms, int warps_per_block,
                  int saturating_warps, int max_splits) {
  const long long limit = std::min<long long>(max_splits, std::max<long long>(tiles, 1));
  auto cost = [&](long long s) {
    const long long per_sm = (blocks_i * s + sms - 1) / sms;
    const double busy = std::min(1.0, static_cast<double>(per_sm * warps_per_block) / saturating_warps);
    return static_cast<double>((tiles + s - 1) / s) * static_cast<double>(per_sm) / busy;
  };
  double best = cost(1);
  for (long long s = 2; s <= limit; ++s) best = std::min(best, cost(s));
  for (long long s = 1; s <= limit; ++s)
    if (cost(s) <= best * 1.02) return static_cast<int>(s);
  return 1;
}

int row_block_splits(long long npad, int block, int k, int split, int sms) {
  const long long blocks_i = npad / (static_cast<long long>(block) * k), tiles = npad / block;
  if (split > 0) return static_cast<int>(std::min<long long>(split, tiles));
  const long long floor = std::min<long long>(kOverlapSplits, std::max<long long>(tiles, 1));
  return static_cast<int>(std::max<long long>(choose_splits(blocks_i, tiles, sms, block / 32), floor));
}

SplitRun splits_within(long long tiles, int splits, long long tile, long long have_begin, long long have_end) {
  int s = 0;
  while (s < splits && split_tiles(tiles, s, splits).begin * tile < have_begin) ++s;
  SplitRun run{s, s};
  while (run.end < splits && split_tiles(tiles, run.end, splits).end * tile <= have_end) ++run.end;
  return run;
}

RowBlocks row_blocks(int first, int end, int block, int k, int splits, int sms, bool distributed) {
  auto plan = [&](int kk) {
    const int bk = block * kk, row0 = first / bk * bk;
    return RowBlocks{kk, row0, end > first ? (end - row0 + bk - 1) / bk : 0};
  };
  RowBlocks r = plan(k);
  while (distributed && r.k > 1 && 10LL * r.blocks * splits < 19LL * sms) r = plan(r.k / 2);
  return r;
}

}  // namespace nbody::cuda
