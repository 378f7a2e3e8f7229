#include "registry.hpp"

#include <algorithm>
#include <sstream>

#include "error.hpp"
#include "reference.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#ifdef NBODY_HAVE_CUDA
#include "cuda_pipeline.hpp"
#endif

namespace nbody {

const std::vector<std::string>& pipeline_names() {
  static const std::vector<std::string> names{
      "cpu64",      "cpu32",           "gl:forcequad",   "gl:gather",        "gl:compute",
      "cuda:gems31", "cuda:gems31-fp64", "cuda:tuned", "cuda:tuned-fp64", "cuda:symmetric"};
  return names;
}

std::string canonical_name(const std::string& name) {
  if (name == "gl") return "gl:forcequad";
  if (name == "cuda") return "cuda:tuned";
  const auto& all = pipeline_names();
  if (std::find(all.begin(), all.end(), name) != all.end()) return name;
  std::string known;
  for (const auto& n : all) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown pipeline '" + name + "' (known: " + known + ", gl, cuda)");
}

std::vector<std::string> parse_pipeline_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError("--pipelines '" + list + "' has an empty name");
    const std::string c = canonical_name(item);
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw InputError("--pipelines names '" + c + "' twice");
    out.push_back(c);
  }
  if (out.empty()) throw InputError("--pipelines is empty");
  if (list.back() == ',') throw InputError("--pipelines '" + list + "' has an empty name");
  return out;
}

std::unique_ptr<Pipeline> make_pipeline(const std::string& name,
                                        [[maybe_unused]] const PipelineOptions& o) {
  if (name == "cpu64") return std::make_unique<Cpu64>();
  if (name == "cpu32") return std::make_unique<Cpu32>();
  if (name.starts_with("gl:")) {
#ifdef NBODY_HAVE_GL
    gl::Options g;
    g.chunk = o.gl_chunk;
    g.half = o.gl_precision == "half";
    gl::prefer_device(o.device);  // the EGL device of the same index as the CUDA one
    return gl::make(name.substr(3), g);
#else
    throw Unavailable("GL pipeline not built (OpenGL, EGL, GLEW or stb missing at configure time)");
#endif
  }
  if (name.starts_with("cuda:")) {
#ifdef NBODY_HAVE_CUDA
    cuda::Options c;
    c.block = o.cuda_block;
    c.unroll = o.cuda_unroll;
    c.q = o.cuda_q;
    c.device = o.device;
    c.bodies = o.cuda_bodies;
    c.split = o.cuda_split;
    return cuda::make(name.substr(5), c);
#else
    throw Unavailable("CUDA pipeline not built (no nvcc at configure time)");
#endif
  }
  throw InputError("unknown pipeline '" + name + "'");
}

bool is_fp64_pipeline(const std::string& name) { return name == "cpu64" || name.ends_with("-fp64"); }

void check_pipeline_options(const PipelineOptions& o) {
  if (o.gl_chunk < 0) throw InputError("--gl-chunk " + std::to_string(o.gl_chunk) + ": must be >= 0");
  if (o.gl_precision != "float" && o.gl_precision != "half")
    throw InputError("--gl-precision '" + o.gl_precision + "': must be float or half");
  if (o.cuda_block != 0 && (o.cuda_block < 32 || o.cuda_block > 1024 || o.cuda_block % 32 != 0))
    throw InputError("--cuda-block " + std::to_string(o.cuda_block) +
                     ": must be 0 (the rung's default) or a multiple of 32 in 32..1024");
  if (o.cuda_unroll < 1 || o.cuda_unroll > 32 || (o.cuda_unroll & (o.cuda_unroll - 1)) != 0)
    throw InputError("--cuda-unroll " + std::to_string(o.cuda_unroll) +
                     ": must be a power of two in 1..32");
  if (o.cuda_q < 1 || o.cuda_q > 32 || (o.cuda_q & (o.cuda_q - 1)) != 0)
    throw InputError("--cuda-q " + std::to_string(o.cuda_q) + ": must be a power of two in 1..32");
  if (o.cuda_block * o.cuda_q > 1024)
    throw InputError("--cuda-block " + std::to_string(o.cuda_block) + " x --cuda-q " +
                     std::to_string(o.cuda_q) + " = " + std::to_string(o.cuda_block * o.cuda_q) +
                     " threads per block; the limit is 1024");
  if (o.cuda_block == 0 && 256 * o.cuda_q > 1024)
    throw InputError("--cuda-q " + std::to_string(o.cuda_q) + " with gems31's default --cuda-block "
                     "256 makes " + std::to_string(256 * o.cuda_q) + " threads per block; the limit "
                     "is 1024 (give a smaller --cuda-block)");
  if (o.cuda_bodies != 0 && o.cuda_bodies != 1 && o.cuda_bodies != 2 && o.cuda_bodies != 4 &&
      o.cuda_bodies != 8)
    throw InputError("--cuda-bodies " + std::to_string(o.cuda_bodies) +
                     ": must be 0 (the rung's default), 1, 2, 4 or 8");
  if (o.cuda_split < 0 || o.cuda_split > 65535)
    throw InputError("--cuda-split " + std::to_string(o.cuda_split) +
                     ": must be 0 (chosen for the device) or 1..65535");
  if (o.device < 0) throw InputError("--device " + std::to_string(o.device) + ": must be >= 0");
}

}  // namespace nbody
