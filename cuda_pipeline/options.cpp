// The CUDA rungs' options: each rung's defaults and the values it accepts, in one place. make()
// resolves every rung's options here; the driver checks a command line here before any work and
// takes --help's text from here. Plain C++: no device is needed.
#include <string>

#include "cuda_pipeline.hpp"
#include "error.hpp"

namespace nbody::cuda {

namespace {

bool power_of_two_upto(int v, int most) { return v >= 1 && v <= most && (v & (v - 1)) == 0; }

std::string rung(const std::string& variant) { return "cuda:" + variant; }

// gems31: p threads per block (GPU Gems 3's 256), an unroll factor and q threads per body.
Options resolve_gems31(const std::string& variant, Options o, const Options& given) {
  if (o.block == 0) o.block = 256;
  if (o.block < 32 || o.block > 1024 || o.block % 32 != 0)
    throw InputError("--cuda-block " + std::to_string(o.block) + ": " + rung(variant) +
                     " takes a multiple of 32 in 32..1024 (0: 256)");
  if (!power_of_two_upto(o.unroll, 32))
    throw InputError("--cuda-unroll " + std::to_string(o.unroll) + ": " + rung(variant) +
                     " takes 1, 2, 4, 8, 16 or 32");
  if (!power_of_two_upto(o.q, 32))
    throw InputError("--cuda-q " + std::to_string(o.q) + ": " + rung(variant) + " takes 1, 2, 4, 8, 16 or 32");
  if (o.block * o.q > 1024)
    throw InputError("--cuda-block " + std::to_string(o.block) + " x --cuda-q " + std::to_string(o.q) + " = " +
                     std::to_string(o.block * o.q) + " threads per block; the limit is 1024" +
                     (given.block == 0 ? " (the block defaults to 256: give a smaller --cuda-block)" : ""));
  return o;
}

// tuned, tuned-fp64 and mixed (tuned's shape): B threads per block (__launch_bounds__(256)), K
// bodies per thread, S parts of the j range.
Options resolve_tuned(const std::string& variant, Options o) {
  const int k0 = variant == "tuned-fp64" ? 2 : 8;
  if (o.block == 0) o.block = 128;
  if (o.block < 32 || o.block > 256 || o.block % 32 != 0)
    throw InputError("--cuda-block " + std::to_string(o.block) + ": " + rung(variant) +
                     " takes a multiple of 32 in 32..256 (0: 128)");
  if (o.bodies == 0) o.bodies = k0;
  if (!power_of_two_upto(o.bodies, 8))
    throw InputError("--cuda-bodies " + std::to_string(o.bodies) + ": " + rung(variant) + " takes 1, 2, 4 or 8 (0: " +
                     std::to_string(k0) + ")");
  if (o.split < 0 || o.split > 65535)
    throw InputError("--cuda-split " + std::to_string(o.split) + ": " + rung(variant) +
                     " takes 0 (chosen for the device) or 1..65535");
  return o;
}

}  // namespace

// Defaults from the H100 sweeps in docs/measurements/: gems31 p = 256 (GPU Gems 3's); tuned B = 128
// with K = 8 (fp32 and mixed) or 2 (fp64); symmetric K = 0, chosen by N (symmetric.cu: 16, 8 or 4).
Options resolve(const std::string& variant, const Options& given) {
  if (given.device < 0) throw InputError("--device " + std::to_string(given.device) + ": must be >= 0");
  if (variant == "gems31" || variant == "gems31-fp64") return resolve_gems31(variant, given, given);
  if (variant == "tuned" || variant == "tuned-fp64" || variant == "mixed") return resolve_tuned(variant, given);
  if (variant == "symmetric") {
    if (given.bodies != 0 && !power_of_two_upto(given.bodies, 16))
      throw InputError("--cuda-bodies " + std::to_string(given.bodies) +
                       ": cuda:symmetric takes 1, 2, 4, 8 or 16 (0: chosen by N, 16, 8 or 4)");
    return given;
  }
  throw InputError("unknown CUDA variant '" + variant + "'");
}

std::string option_help(const std::string& option) {
  if (option == "block")
    return "CUDA threads per block, a multiple of 32: cuda:gems31 32..1024 (0: 256), cuda:tuned and cuda:mixed 32..256 (0: 128); "
           "cuda:symmetric always 128";
  if (option == "unroll") return "cuda:gems31 inner-loop unroll: 1, 2, 4, 8, 16 or 32";
  if (option == "q") return "cuda:gems31 threads per body q: 1, 2, 4, 8, 16 or 32 (block x q <= 1024)";
  if (option == "bodies")
    return "Bodies per thread K: cuda:tuned 1, 2, 4, 8 (0: 8; tuned-fp64 0: 2; mixed 0: 8), cuda:symmetric 1, 2, 4, 8, 16 (0: chosen by N, 16, 8 or 4)";
  if (option == "split")
    return "cuda:tuned and cuda:mixed parts of the j range, one block each: 1..65535 (0: chosen for the device and N, at "
           "least 16 where N has as many tiles, so that a distributed rank computes whole parts of its own block "
           "while the exchange runs)";
  return "";
}

}  // namespace nbody::cuda
