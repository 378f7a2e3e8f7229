#include "catalogue.hpp"

#include <algorithm>
#include <sstream>

#include "balance.hpp"
#include "error.hpp"
#include "reference.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif
#include "cuda_pipeline.hpp"  // plain C++: make() is linked only with CUDA, resolve() always

namespace nbody {

namespace {

// Bounds: 13 FP32 issue slots per interaction (12 FP32 + 1 MUFU), 12 DP operations in float64
// (the rsqrt uncounted: there is no full-precision hardware one), cuda:mixed 19 (6 more FADD for
// r_ij from double-single pairs: mixed_kernels.cuh). Tolerances: float storage 1e-6 / 1e-4,
// float64 1e-12 / 1e-10.
constexpr Tolerance kFloat{1e-6, 1e-4}, kDouble{1e-12, 1e-10};
using F = Family;
using B = BoundModel;
using S = StateHome;

const std::vector<Rung> kRungs{
    // name              family  variant        bits fp64   distr  ladder restart tolerance bound          slots state          flops
    {"cpu64",            F::Cpu,  "cpu64",       64, true,  true,  -1, false, kDouble, B::None,          0,  S::Host,       30},
    {"cpu32",            F::Cpu,  "cpu32",       32, false, true,   0, false, kFloat,  B::None,          0,  S::Host,       20},
    {"gl:forcequad",     F::Gl,   "forcequad",   32, false, true,   1, false, kFloat,  B::Fill,          0,  S::GlTexture,  20},
    {"gl:gather",        F::Gl,   "gather",      32, false, true,   2, false, kFloat,  B::Fetch,         0,  S::GlTexture,  20},
    {"gl:compute",       F::Gl,   "compute",     32, false, true,   3, false, kFloat,  B::IssueIfCudaGl, 13, S::GlTexture,  20},
    {"gl:compute-ds",    F::Gl,   "compute-ds",  64, false, false, 10, true,  kFloat,  B::None,          0,  S::GlBuffer,   20},
    {"cuda:gems31",      F::Cuda, "gems31",      32, false, true,   4, false, kFloat,  B::Issue,         13, S::CudaDevice, 20},
    {"cuda:gems31-fp64", F::Cuda, "gems31-fp64", 64, true,  true,   7, true,  kDouble, B::Issue,         12, S::CudaDevice, 30},
    {"cuda:tuned",       F::Cuda, "tuned",       32, false, true,   5, false, kFloat,  B::Issue,         13, S::CudaDevice, 20},
    {"cuda:tuned-fp64",  F::Cuda, "tuned-fp64",  64, true,  true,   8, false, kDouble, B::Issue,         12, S::CudaDevice, 30},
    {"cuda:symmetric",   F::Cuda, "symmetric",   32, false, false,  6, false, kFloat,  B::IssuePairs,    0,  S::CudaDevice, 20},
    {"cuda:mixed",       F::Cuda, "mixed",       64, false, true,   9, false, kFloat,  B::Issue,         19, S::CudaDevice, 20, " (r_ij from double-single pairs)"},
};

// cpu64/K (reference.hpp): cpu64 with K substeps per step, a converged reference; not a rung of
// the default set or the ladder, and one process only (it converts the state with all bodies).
const Rung kSubstepped{"cpu64/K", F::Cpu, "cpu64/K", 64, true, false, -1, false, kDouble, B::None, 0, S::Host, 30};
constexpr int kMaxSubsteps = 4096;

// K of "cpu64/K" (2..kMaxSubsteps), or 0 for any other name; throws InputError for a bad K.
int substeps_of(const std::string& name) {
  if (!name.starts_with("cpu64/")) return 0;
  const std::string k = name.substr(6);
  const bool digits = !k.empty() && k.size() <= 5 && k.find_first_not_of("0123456789") == std::string::npos;
  const int v = digits ? std::stoi(k) : 0;
  if (v < 2 || v > kMaxSubsteps)
    throw InputError("'" + name + "': cpu64/K takes K substeps per step, an integer in 2.." +
                     std::to_string(kMaxSubsteps));
  return v;
}

}  // namespace

const std::vector<Rung>& rungs() { return kRungs; }

std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const Rung& r : kRungs) names.push_back(r.name);
  return names;
}

std::vector<std::string> ladder_names() {
  std::vector<const Rung*> on;
  for (const Rung& r : kRungs)
    if (r.ladder >= 0) on.push_back(&r);
  std::sort(on.begin(), on.end(), [](const Rung* a, const Rung* b) { return a->ladder < b->ladder; });
  std::vector<std::string> names;
  for (const Rung* r : on) names.push_back(r->name);
  return names;
}

const Rung& rung(const std::string& name) {
  for (const Rung& r : kRungs)
    if (r.name == name) return r;
  if (substeps_of(name) > 0) return kSubstepped;
  return rung(canonical_name(name));  // throws for an unknown name; an alias resolves
}

std::string canonical_name(const std::string& name) {
  if (name == "gl") return "gl:forcequad";
  if (name == "cuda") return "cuda:tuned";
  for (const Rung& r : kRungs)
    if (r.name == name) return name;
  if (const int k = substeps_of(name)) return "cpu64/" + std::to_string(k);
  std::string known;
  for (const Rung& r : kRungs) known += (known.empty() ? "" : ", ") + r.name;
  throw InputError("unknown pipeline '" + name + "' (known: " + known + ", gl, cuda, and cpu64/K: cpu64 with K "
                   "substeps per step)");
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
  const Rung& r = rung(name);
  switch (r.family) {
    case Family::Cpu:
      if (r.fp64_forces) return std::make_unique<Cpu64>(std::max(1, substeps_of(canonical_name(name))));
      return std::make_unique<Cpu32>();
    case Family::Gl: {
#ifdef NBODY_HAVE_GL
      gl::Options g;
      g.chunk = o.gl_chunk;
      g.half = o.gl_precision == "half";
      gl::prefer_device(o.device);  // the EGL device of the same index as the CUDA one
      return gl::make(r.variant, g);
#else
      throw Unavailable("GL pipeline not built (OpenGL, EGL, GLEW or stb missing at configure time)");
#endif
    }
    case Family::Cuda:
#ifdef NBODY_HAVE_CUDA
      return cuda::make(r.variant, to_cuda(o));
#elif defined(__EMSCRIPTEN__)
      throw Unavailable("CUDA does not run in a browser (the page has WebAssembly and WebGL2)");
#else
      throw Unavailable("CUDA pipeline not built (no nvcc at configure time)");
#endif
  }
  throw InputError("unknown pipeline '" + name + "'");
}

std::string unavailable_reason(const std::string& name, const PipelineOptions& options) {
  try {
    make_pipeline(name, options);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}

std::unique_ptr<Pipeline> make_named(const std::string& name, const PipelineOptions& options) {
  try {
    return make_pipeline(name, options);
  } catch (const Unavailable& e) {
    throw Unavailable(name + " cannot run here: " + std::string(e.what()));
  }
}

bool is_fp64_pipeline(const std::string& name) { return rung(name).fp64_forces; }

int state_bits(const std::string& name) { return rung(name).state_bits; }

Tolerance tolerance_for(const std::string& name, const PipelineOptions& o) {
  const Rung& r = rung(name);
  if (r.family == Family::Gl && o.gl_precision == "half") return {1e-3, 1e-2};
  return r.tolerance;
}

void check_pipeline_options(const PipelineOptions& o) {
  if (o.gl_chunk < 0) throw InputError("--gl-chunk " + std::to_string(o.gl_chunk) + ": must be >= 0");
  if (o.gl_precision != "float" && o.gl_precision != "half")
    throw InputError("--gl-precision '" + o.gl_precision + "': must be float or half");
  check_placement(o);
}

void check_placement(const PipelineOptions& o) {
  if (o.device < 0) throw InputError("--device " + std::to_string(o.device) + ": must be >= 0");
  balance_weights(o.balance);  // throws for anything but equal, rate, auto and one weight per rank
}

void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& o) {
  check_pipeline_options(o);
  // The rungs' own rules (cuda_pipeline/options.cpp, in every build): each named cuda:* rung's.
  for (const auto& name : names)
    if (rung(name).family == Family::Cuda) cuda::resolve(rung(name).variant, to_cuda(o));
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

nlohmann::json options_json(const PipelineOptions& o) {
  return {{"gl_chunk", o.gl_chunk},       {"gl_precision", o.gl_precision}, {"cuda_block", o.cuda_block},
          {"cuda_unroll", o.cuda_unroll}, {"cuda_q", o.cuda_q},             {"cuda_bodies", o.cuda_bodies},
          {"cuda_split", o.cuda_split}};
}

PipelineOptions with_placement(PipelineOptions from_file, const PipelineOptions& given) {
  from_file.device = given.device;
  from_file.device_given = given.device_given;
  from_file.balance = given.balance;
  return from_file;
}

PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where) {
  PipelineOptions o;
  if (!j.is_object()) throw InputError(where + ": the pipeline options are not an object");
  auto integer = [&](const char* key, int& out) {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw InputError(where + ": pipeline option " + key + " is missing or not an integer");
    const long long v = j[key].get<long long>();
    if (v < -2147483647LL || v > 2147483647LL) throw InputError(where + ": pipeline option " + key + " is out of range");
    out = static_cast<int>(v);
  };
  integer("gl_chunk", o.gl_chunk);
  integer("cuda_block", o.cuda_block);
  integer("cuda_unroll", o.cuda_unroll);
  integer("cuda_q", o.cuda_q);
  integer("cuda_bodies", o.cuda_bodies);
  integer("cuda_split", o.cuda_split);
  if (!j.contains("gl_precision") || !j["gl_precision"].is_string())
    throw InputError(where + ": pipeline option gl_precision is missing or not a string");
  o.gl_precision = j["gl_precision"].get<std::string>();
  return o;
}

}  // namespace nbody
