#include "device_names.hpp"

#include <fstream>
#include <thread>

#include "error.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#ifdef NBODY_HAVE_CUDA
#include "cuda_pipeline.hpp"
#endif

namespace nbody {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return line.substr(colon + 2) + " (" + std::to_string(std::thread::hardware_concurrency()) +
             " threads)";
    }
  return "unknown CPU (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
}

std::string gl_description() {
#ifdef NBODY_HAVE_GL
  try {
    return gl::describe_context();
  } catch (const Unavailable& e) {
    return std::string("unavailable: ") + e.what();
  }
#else
  return "unavailable: GL pipeline not built";
#endif
}

std::vector<std::string> cuda_descriptions(std::string& reason) {
#ifdef NBODY_HAVE_CUDA
  std::vector<std::string> out;
  for (const auto& d : cuda::devices(reason)) out.push_back(d.describe());
  return out;
#else
  reason = "CUDA pipeline not built (no nvcc at configure time)";
  return {};
#endif
}

std::string cuda_device_name([[maybe_unused]] int index) {
#ifdef NBODY_HAVE_CUDA
  std::string reason;
  for (const auto& d : cuda::devices(reason))
    if (d.index == index) return d.name;
#endif
  return "";
}

std::string device_line() {
  std::string reason;
  const auto cuda = cuda_descriptions(reason);
  return "cpu: " + cpu_model() + "; gl: " + gl_description() + "; cuda: " +
         (cuda.empty() ? "unavailable (" + reason + ")" : cuda[0]);
}

}  // namespace nbody
