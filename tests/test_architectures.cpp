// Which GPUs a binary's CUDA kernels run on (architectures.hpp): the decision, with the device's
// compute capability given as a number, so it runs on every machine, GPU or not.
#include <gtest/gtest.h>

#include "architectures.hpp"
#include "error.hpp"

namespace nbody::cuda {
namespace {

const char* kEveryGpu = "75-real;80-real;86-real;89-real;90-real;100-real;120";

TEST(Architectures, ReadsCMakesSpelling) {
  const auto a = parse_architectures("75-real,90,120-virtual");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].cc, 75);
  EXPECT_TRUE(a[0].sass);
  EXPECT_FALSE(a[0].ptx);
  EXPECT_TRUE(a[1].sass && a[1].ptx);
  EXPECT_EQ(a[2].cc, 120);
  EXPECT_TRUE(!a[2].sass && a[2].ptx);
  EXPECT_EQ(parse_architectures(kEveryGpu).size(), 7u);
  EXPECT_TRUE(parse_architectures("").empty());
  for (const char* bad : {"sm_90", "90-fake", "9x", "-real", "5", "all", "a"})
    EXPECT_THROW(parse_architectures(bad), InputError) << bad;
}

TEST(Architectures, EveryGpuFromTuringToBlackwellRunsNatively) {
  const auto every = parse_architectures(kEveryGpu);
  // Each consumer and data-centre GPU of the CUDA 13 toolkit, and the minor versions that share
  // a major one's SASS (8.7 Orin runs sm_86 code, 12.1 runs sm_120 code).
  for (int cc : {75, 80, 86, 87, 89, 90, 100, 103, 120, 121}) EXPECT_EQ(fit(cc, every), Fit::Native) << cc;
  EXPECT_EQ(fit(130, every), Fit::Jit);   // a GPU after Blackwell: the PTX of compute_120
  EXPECT_EQ(fit(70, every), Fit::None);   // Volta: left out by CUDA 13
}

TEST(Architectures, SassRunsOnlyWithinItsMajorVersionAndUpward) {
  EXPECT_EQ(fit(90, parse_architectures("100-real;120-real")), Fit::None);  // the H100 and a Blackwell build
  EXPECT_EQ(fit(90, parse_architectures("80-real")), Fit::None);            // no SASS across majors
  EXPECT_EQ(fit(80, parse_architectures("86-real")), Fit::None);            // nor to an older minor
  EXPECT_EQ(fit(89, parse_architectures("86-real")), Fit::Native);
  EXPECT_EQ(fit(90, parse_architectures("75-virtual")), Fit::Jit);          // PTX runs on newer GPUs
  EXPECT_EQ(fit(75, parse_architectures("80-virtual")), Fit::None);         // never on older ones
  EXPECT_EQ(fit(90, {}), Fit::None);
  // Arch-specific code runs on its own capability alone; family code on the family.
  EXPECT_EQ(fit(90, parse_architectures("90a-real")), Fit::Native);
  EXPECT_EQ(fit(100, parse_architectures("90a")), Fit::None);
  EXPECT_EQ(fit(103, parse_architectures("100f")), Fit::Native);
  EXPECT_EQ(fit(120, parse_architectures("100f-virtual")), Fit::None);
  EXPECT_EQ(describe(parse_architectures("90a-real;100f")), "sm_90a sm_100f + PTX compute_100f");
}

TEST(Architectures, TheReasonNamesTheDeviceWhatWasBuiltAndTheFix) {
  const std::string why =
      no_image_reason("device 0 (NVIDIA H100 80GB HBM3)", 90, parse_architectures("100-real;120"));
  for (const char* part : {"device 0 (NVIDIA H100 80GB HBM3)", "compute capability 9.0", "sm_100 sm_120",
                           "PTX compute_120", "-DCMAKE_CUDA_ARCHITECTURES=90"})
    EXPECT_NE(why.find(part), std::string::npos) << part << " in: " << why;
  EXPECT_EQ(describe({}), "none");
  // No rebuild helps a GPU that CUDA 13 left out.
  const std::string volta = no_image_reason("device 0 (Tesla V100)", 70, parse_architectures(kEveryGpu));
  EXPECT_NE(volta.find("nothing older than 7.5"), std::string::npos) << volta;
  EXPECT_EQ(volta.find("rebuild"), std::string::npos) << volta;
  EXPECT_EQ(describe(parse_architectures("75-virtual")), "PTX compute_75");
}

TEST(Architectures, ThisBinaryNamesWhatItWasBuiltFor) {
#ifdef NBODY_HAVE_CUDA
  EXPECT_FALSE(built_architectures().empty());
#else
  EXPECT_TRUE(built_architectures().empty());
#endif
}

}  // namespace
}  // namespace nbody::cuda
