#include "registry.hpp"

#include <algorithm>
#include <sstream>

#include "error.hpp"
#include "reference.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#include "cuda_pipeline.hpp"  // plain C++: make() is linked only with CUDA, resolve() always

namespace nbody {

const std::vector<std::string>& pipeline_names() {
  static const std::vector<std::string> names{
      "cpu64",      "cpu32",           "gl:forcequad",   "gl:gather",        "gl:compute", "gl:compute-ds",
      "cuda:gems31", "cuda:gems31-fp64", "cuda:tuned", "cuda:tuned-fp64", "cuda:symmetric",
      "cuda:mixed"};
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

namespace {
cuda::Options to_cuda(const PipelineOptions& o) {
  cuda::Options c;
  c.block = o.cuda_block;
  c.unroll = o.cuda_unroll;
  c.q = o.cuda_q;
  c.device = o.device;
  c.bodies = o.cuda_bodies;
  c.split = o.cuda_split;
  return c;
}
}  // namespace

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
    return cuda::make(name.substr(5), to_cuda(o));
#else
    throw Unavailable("CUDA pipeline not built (no nvcc at configure time)");
#endif
  }
  throw InputError("unknown pipeline '" + name + "'");
}

bool is_fp64_pipeline(const std::string& name) { return name == "cpu64" || name.ends_with("-fp64"); }

int state_bits(const std::string& name) {
  return is_fp64_pipeline(name) || name == "gl:compute-ds" || name == "cuda:mixed" ? 64 : 32;
}

void check_pipeline_options(const PipelineOptions& o) {
  if (o.gl_chunk < 0) throw InputError("--gl-chunk " + std::to_string(o.gl_chunk) + ": must be >= 0");
  if (o.gl_precision != "float" && o.gl_precision != "half")
    throw InputError("--gl-precision '" + o.gl_precision + "': must be float or half");
  if (o.device < 0) throw InputError("--device " + std::to_string(o.device) + ": must be >= 0");
}

void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& o) {
  check_pipeline_options(o);
  // The rungs' own rules (cuda_pipeline/options.cpp, in every build): each named cuda:* rung's.
  for (const auto& name : names)
    if (name.starts_with("cuda:")) cuda::resolve(name.substr(5), to_cuda(o));
  // And each option alone, against the rungs that use it (named or not): accepted if one of them
  // takes it, so that an option no rung would take is never silently ignored.
  const cuda::Options d = to_cuda(PipelineOptions{});
  const auto only = [&](auto set) {
    cuda::Options one = d;
    set(one);
    return one;
  };
  const std::pair<cuda::Options, std::vector<const char*>> options[] = {
      {only([&](cuda::Options& x) { x.block = o.cuda_block; }), {"gems31", "tuned", "mixed"}},
      {only([&](cuda::Options& x) { x.unroll = o.cuda_unroll; }), {"gems31"}},
      {only([&](cuda::Options& x) { x.q = o.cuda_q; }), {"gems31"}},
      {only([&](cuda::Options& x) { x.block = o.cuda_block; x.q = o.cuda_q; }), {"gems31"}},
      {only([&](cuda::Options& x) { x.bodies = o.cuda_bodies; }), {"tuned", "mixed", "symmetric"}},
      {only([&](cuda::Options& x) { x.split = o.cuda_split; }), {"tuned", "mixed"}}};
  for (const auto& [one, users] : options) {
    std::string first;
    bool taken = false;
    for (const char* variant : users) {
      try {
        cuda::resolve(variant, one);
        taken = true;
        break;
      } catch (const InputError& e) {
        if (first.empty()) first = e.what();
      }
    }
    if (!taken) throw InputError(first);
  }
}

}  // namespace nbody
