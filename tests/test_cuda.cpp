// cuda_pipeline. On a machine without a CUDA device every test skips, naming the reason.
#include "cuda_pipeline.hpp"
#include "error.hpp"
#include "helpers.hpp"
#include "reference.hpp"

namespace nbody {
namespace {

const Params kParams{0.01, 0.05};

#define REQUIRE_CUDA()                                        \
  do {                                                        \
    std::string reason_;                                      \
    if (cuda::devices(reason_).empty()) GTEST_SKIP() << reason_; \
  } while (0)

double tolerance(const std::string& variant) { return variant.ends_with("fp64") ? 1e-12 : 1e-5; }

class CudaVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaVariant, AccelerationsMatchCpu64) {
  REQUIRE_CUDA();
  for (std::size_t n : {1u, 31u, 1000u, 4097u, 16384u}) {
    const Bodies b = test::random_bodies(n, 100 + n);
    std::vector<Vec3> ref, a = test::poisoned(n);
    accelerations_fp64(b.pos, kParams.eps2(), ref);
    auto p = cuda::make(GetParam(), {});
    p->load(b, kParams);
    p->accelerations(a);
    const AccelError e = accel_error(a, ref);
    EXPECT_LE(e.rms_rel, tolerance(GetParam())) << GetParam() << " n=" << n << " worst " << e.worst;
    if (n == 1) {
      EXPECT_EQ(norm(a[0]), 0.0);
    }
  }
}

TEST_P(CudaVariant, IndependentOfBlockUnrollAndQ) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(4097, 200);  // not a multiple of any p
  std::vector<Vec3> ref, a;
  accelerations_fp64(b.pos, kParams.eps2(), ref);
  for (int p : {64, 128, 256, 512})
    for (int unroll : {1, 4, 16})
      for (int q : {1, 2, 4}) {
        if (p * q > 1024) continue;
        auto k = cuda::make(GetParam(), {p, unroll, q, 0});
        k->load(b, kParams);
        a = test::poisoned(b.size());
        k->accelerations(a);
        EXPECT_LE(accel_error(a, ref).rms_rel, tolerance(GetParam()))
            << "p=" << p << " unroll=" << unroll << " q=" << q;
      }
}

TEST_P(CudaVariant, TwentyStepsFollowCpu64AndRepeatBitForBit) {
  REQUIRE_CUDA();
  const Bodies b = test::random_bodies(1000, 300);
  Cpu64 cpu;
  cpu.load(b, kParams);
  cpu.step(20);
  Bodies ref, r[2];
  cpu.read(ref);
  for (auto& out : r) {
    auto p = cuda::make(GetParam(), {});
    p->load(b, kParams);
    p->step(20);
    p->read(out);
  }
  const Distance d = position_distance(ref.pos, r[0].pos);
  EXPECT_LE(d.max, GetParam().ends_with("fp64") ? 1e-12 : 1e-4) << "worst " << d.worst;
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(r[0].pos[i].x, r[1].pos[i].x) << i;
}

INSTANTIATE_TEST_SUITE_P(Rungs, CudaVariant, ::testing::Values("gems31", "gems31-fp64"));

TEST(Cuda, NoDeviceIsReportedWithTheReason) {
  std::string reason;
  const auto devs = cuda::devices(reason);
  if (!devs.empty()) {
    EXPECT_GT(devs[0].sms, 0);
    EXPECT_THROW(cuda::make("gems31", {256, 4, 1, static_cast<int>(devs.size())}), InputError);
    GTEST_SKIP() << "a device exists (" << devs[0].describe() << "): the no-device path is not testable here";
  }
  EXPECT_NE(reason.find("cudaGetDeviceCount returned"), std::string::npos) << reason;
  EXPECT_THROW(cuda::make("gems31", {}), Unavailable);
}

}  // namespace
}  // namespace nbody
