// Which GPUs this binary's CUDA kernels run on, and what to say when a device is not one of them.
// Plain C++ (architectures.cpp, in every build): the decision takes the device's compute
// capability as a number, so it is tested without a GPU.
//
// A cubin (SASS) built for sm_XY runs on a device of the same major version X and a minor >= Y
// (sm_80 code runs on an 8.6 or 8.9 device, never on 9.0). PTX built for compute_XY is compiled
// by the driver at load time (JIT) for any device of capability >= X.Y. Arch-specific code
// (sm_90a, compute_90a) runs on X.Y alone; family code (sm_100f) as SASS does, on X.Y and up.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace nbody::cuda {

struct Architecture {
  int cc = 0;         // compute capability x 10: 75, 86, 90, 120
  bool sass = false;  // native code for sm_<cc>
  bool ptx = false;   // PTX for compute_<cc>, JIT-compiled by the driver for newer devices
  char suffix = 0;    // 'a' (arch-specific: this cc alone), 'f' (family) or 0
};

// CMake's CUDA_ARCHITECTURES spelling, separated by ';' or ',': "86" (SASS and PTX), "86-real"
// (SASS), "86-virtual" (PTX), with an optional a or f after the number ("90a-real"). Throws
// InputError naming an entry it cannot read.
std::vector<Architecture> parse_architectures(std::string_view list);

// The architectures this binary's kernels were built for (empty where CUDA was not built).
const std::vector<Architecture>& built_architectures();

// "sm_75 sm_80 sm_120 + PTX compute_120", for messages and --version; "none" for an empty list.
std::string describe(const std::vector<Architecture>& archs);

enum class Fit {
  Native,  // SASS for this device
  Jit,     // only PTX: the driver compiles it at first load
  None,    // no image: every kernel launch would fail with cudaErrorNoKernelImageForDevice
};
Fit fit(int cc, const std::vector<Architecture>& archs);

// Why a device of capability `cc` cannot run `archs`, with the fix: the device, its compute
// capability, the architectures built, and the cmake option that adds it. `device` names it
// ("device 0 (NVIDIA H100 80GB HBM3)").
std::string no_image_reason(const std::string& device, int cc, const std::vector<Architecture>& archs);

}  // namespace nbody::cuda
