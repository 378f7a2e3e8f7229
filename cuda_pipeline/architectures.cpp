// Which GPUs this binary's kernels run on (architectures.hpp). Plain C++, no CUDA headers.
#include "architectures.hpp"

#include <algorithm>
#include <charconv>

#include "error.hpp"

#ifndef NBODY_CUDA_ARCHITECTURES
#define NBODY_CUDA_ARCHITECTURES ""  // set by CMake from CMAKE_CUDA_ARCHITECTURES (',' for ';')
#endif

namespace nbody::cuda {

namespace {

constexpr int kOldestCc = 75;  // the oldest GPU the CUDA 13 toolkit compiles for

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

Architecture parse_one(std::string_view entry) {
  Architecture a;
  std::string_view digits = entry, kind;
  if (const auto dash = entry.find('-'); dash != std::string_view::npos) {
    digits = entry.substr(0, dash);
    kind = entry.substr(dash + 1);
  }
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    a.suffix = digits.back();
    digits.remove_suffix(1);
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), a.cc);
  if (ec != std::errc() || end != digits.data() + digits.size() || a.cc < 10 || a.cc > 999)
    throw InputError("CUDA architecture '" + std::string(entry) + "': expected a compute capability "
                     "x 10 such as 86, 86-real or 86-virtual");
  if (kind.empty()) {
    a.sass = a.ptx = true;
  } else if (kind == "real") {
    a.sass = true;
  } else if (kind == "virtual") {
    a.ptx = true;
  } else {
    throw InputError("CUDA architecture '" + std::string(entry) + "': the suffix is -real or -virtual");
  }
  return a;
}

}  // namespace

std::vector<Architecture> parse_architectures(std::string_view list) {
  std::vector<Architecture> out;
  while (!list.empty()) {
    const auto sep = list.find_first_of(";,");
    const std::string_view entry = list.substr(0, sep);
    if (!entry.empty()) out.push_back(parse_one(entry));
    if (sep == std::string_view::npos) break;
    list.remove_prefix(sep + 1);
  }
  return out;
}

const std::vector<Architecture>& built_architectures() {
  static const std::vector<Architecture> built = parse_architectures(NBODY_CUDA_ARCHITECTURES);
  return built;
}

std::string describe(const std::vector<Architecture>& archs) {
  std::string sass, ptx;
  for (const Architecture& a : archs) {
    const std::string cc = std::to_string(a.cc) + (a.suffix ? std::string(1, a.suffix) : "");
    if (a.sass) sass += (sass.empty() ? "sm_" : " sm_") + cc;
    if (a.ptx) ptx += (ptx.empty() ? "compute_" : " compute_") + cc;
  }
  if (sass.empty() && ptx.empty()) return "none";
  if (ptx.empty()) return sass;
  return sass.empty() ? "PTX " + ptx : sass + " + PTX " + ptx;
}

Fit fit(int cc, const std::vector<Architecture>& archs) {
  const auto native = [cc](const Architecture& a) {
    return a.sass && (a.suffix == 'a' ? a.cc == cc : a.cc / 10 == cc / 10 && a.cc <= cc);
  };
  const auto jit = [cc](const Architecture& a) {
    return a.ptx && (a.suffix == 'a' ? a.cc == cc : a.suffix == 'f' ? a.cc / 10 == cc / 10 && a.cc <= cc : a.cc <= cc);
  };
  if (std::any_of(archs.begin(), archs.end(), native)) return Fit::Native;
  if (std::any_of(archs.begin(), archs.end(), jit)) return Fit::Jit;
  return Fit::None;
}

std::string no_image_reason(const std::string& device, int cc, const std::vector<Architecture>& archs) {
  const std::string what = "this binary has no CUDA kernels for " + device + ", compute capability " + cc_text(cc) +
                           ": it was built for " + describe(archs);
  if (cc < kOldestCc)
    return what + "; CUDA 13 builds nothing older than 7.5 (Turing): the cpu and GL rungs run here";
  return what + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc) +
         " (or native, or every for every GPU)";
}

}  // namespace nbody::cuda
