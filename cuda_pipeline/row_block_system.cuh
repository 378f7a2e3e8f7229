// What cuda:tuned, cuda:tuned-fp64 and cuda:mixed share: K bodies per thread in blocks of B
// threads, the j range in S parts, rows launched in the plan of split_plan.hpp. The plan depends on
// the global N only (prepare()), so every body's sum is the same with any number of ranks. A rung
// supplies its kernel for a K, and how it launches it on the rows and parts of one call.
#pragma once
#include "body_system.cuh"
#include "cuda_check.hpp"
#include "factories.hpp"
#include "split_plan.hpp"

namespace nbody::cuda {

template <typename T, typename Kernel>
class RowBlockSystem : public BodySystem<T> {
 public:
  // `o` comes resolved (the rung's entry in registry.cpp: its defaults, checked).
  RowBlockSystem(const Options& o, Kernel kernel)
      : BodySystem<T>(o.device), block_(o.block), k_(o.bodies), split_(o.split), kernel_(kernel) {
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, o.device));
  }

 protected:
  // Launches `kernel` (the rung's for r.k) on `grid` over rows from r.row0 and the parts of `run`.
  virtual void launch(Kernel kernel, const RowBlocks& r, dim3 grid, const Vec4T<T>* pos, Vec4T<T>* acc,
                      SplitRun run) = 0;
  // The rung's kernel for K bodies per thread (the last row block may take a smaller K).
  virtual Kernel kernel_for(int k) const = 0;

  int block() const { return block_; }
  int parts() const { return splits_; }

 private:
  int pad_multiple() const override { return block_ * k_; }
  void prepare(int npad) override { splits_ = row_block_splits(npad, block_, k_, split_, sms_); }
  int splits() const override { return splits_; }
  int tile() const override { return block_; }

  void compute_accelerations(const Vec4T<T>* pos, Vec4T<T>* acc, int first, int end, SplitRun run) override {
    const RowBlocks r = row_blocks(first, end, block_, k_, splits_, sms_, this->exchange() != nullptr);
    if (r.blocks <= 0 || run.end <= run.first) return;
    launch(r.k == k_ ? kernel_ : kernel_for(r.k), r, dim3(r.blocks, run.end - run.first), pos, acc, run);
  }

  int block_, k_, split_, splits_ = 1, sms_ = 0;
  Kernel kernel_;
};

}  // namespace nbody::cuda
