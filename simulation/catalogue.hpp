// The rung catalogue: every pipeline described once, and made by name. Every name is recognised in
// every build; a rung that was not built, has no device or has no GL context throws
// nbody::Unavailable with the reason. The registry, bounds, bench, ladder, view, interop and the
// checkpoints read a rung's facts here: adding a rung is its files and one entry in catalogue.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline.hpp"

namespace nbody {

// Options the front ends pass down to the pipelines that use them.
struct PipelineOptions {
  int gl_chunk = 0;                  // 0 = as large as the device allows
  std::string gl_precision = "float";  // float | half
  int cuda_block = 0;                // threads per block; 0 = the rung's default
  int cuda_unroll = 4;               // gems31: inner-loop unroll factor
  int cuda_q = 1;                    // gems31: threads per body (§31.4.1)
  int cuda_bodies = 0;               // tuned, mixed, symmetric: bodies per thread; 0 = the rung's default
  int cuda_split = 0;                // tuned, mixed: parts of the j range; 0 = chosen for the device
  int device = 0;                    // CUDA device index
  bool device_given = false;         // --device was on the command line
  std::string balance = "equal";     // under mpirun, each rank's block: equal | rate | auto | W0:W1:... (balance.hpp)
};

enum class Family { Cpu, Gl, Cuda };

// What bounds a rung's rate in the bench (bounds.hpp).
enum class BoundModel {
  None,
  Issue,          // CUDA FP32 or FP64 issue slots per interaction (Rung::slots)
  IssuePairs,     // cuda:symmetric: (17 + 7/K) slots per pair of interactions
  IssueIfCudaGl,  // gl:compute: the FP32 issue bound when the GL renderer is that CUDA device
  Fill,           // gl:forcequad: the texels a step draws at the RGBA32F fill rate
  Fetch,          // gl:gather: one texel fetch per interaction at the fetch rate
};

// Where a rung's state lives, which decides how a picture reaches it.
enum class StateHome {
  Host,        // read back and uploaded
  GlTexture,   // drawn straight from its position texture, no copy
  GlBuffer,    // GL storage buffers, read back
  CudaDevice,  // copied on the device into GL buffers where CUDA-GL interop works
};

// Accuracy a rung must reach against float64 before a time counts: every checked body within
// atol x rms|a_ref| + rtol x |a_ref| (the bounds of the GL and CUDA tests, tests/helpers.hpp).
struct Tolerance {
  double atol, rtol;
};

struct Rung {
  std::string name;     // "cuda:tuned"
  Family family;
  std::string variant;  // what the family's factory takes: "tuned"
  int state_bits;       // 64 for float64 state (cpu64, *-fp64, cuda:mixed, gl:compute-ds), else 32
  bool fp64_forces;     // float64 accelerations: may serve as a reference
  bool distributable;   // runs under mpirun -np P > 1, bit-identical to one process
  int ladder;           // place on docs/ladder.md's table, bottom first; -1: not a rung of it
  bool ladder_restart;  // starts its own speed-up column (the fp64 rungs, the double-single GL one)
  Tolerance tolerance;  // float storage (gl:* half precision: tolerance_for())
  BoundModel bound;
  double slots;         // BoundModel::Issue: issue slots (fp32) or DP operations (fp64) per interaction
  StateHome state;
  int flops;            // counted per interaction for GFLOP/s (GPU Gems 3 §31.4: 20; fp64 30)
  std::string bound_note = "";  // why `slots` is not the plain 13 or 12, for the bound's detail
};

// Every rung, in ladder order (cpu64 first).
const std::vector<Rung>& rungs();
// Every pipeline name, in that order.
std::vector<std::string> pipeline_names();
// The ladder's rungs, bottom to top.
std::vector<std::string> ladder_names();
// The rung of a canonical name; throws InputError for an unknown one.
const Rung& rung(const std::string& name);
// "gl" -> "gl:forcequad", "cuda" -> "cuda:tuned"; throws InputError for an unknown name.
std::string canonical_name(const std::string& name);
// Parses "a,b,c" into canonical names (no duplicates); throws InputError.
std::vector<std::string> parse_pipeline_list(const std::string& list);
std::unique_ptr<Pipeline> make_pipeline(const std::string& name, const PipelineOptions& options);
// Why `name` cannot run here ("" when it can): made with `options` and let go, as `nbody info` and
// the page's list ask.
std::string unavailable_reason(const std::string& name, const PipelineOptions& options = {});
// The same, with Unavailable's message starting "NAME cannot run here: ".
std::unique_ptr<Pipeline> make_named(const std::string& name, const PipelineOptions& options);
// cpu64 and the *-fp64 rungs: the pipelines that may serve as a reference.
bool is_fp64_pipeline(const std::string& name);
// The precision of a pipeline's state, as checkpoints hold it.
int state_bits(const std::string& name);
// A rung's validation tolerance with the options given (gl:* in half precision: looser).
Tolerance tolerance_for(const std::string& name, const PipelineOptions& options);
// Validates the GL options and --device; throws InputError.
void check_pipeline_options(const PipelineOptions& options);
// The same, and the CUDA options against the rules of each cuda:* rung in `names` and each option
// against the rungs that use it (cuda_pipeline/options.cpp: the one place of their defaults and
// ranges). Throws InputError.
void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& options);

// The pipeline options as JSON (without the device, which places a run but does not change it),
// and back; options_from_json throws InputError naming `where` and the field.
nlohmann::json options_json(const PipelineOptions& o);
PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where);
// A run's options read from a file (a checkpoint, a snapshot), with the choices that place it
// but do not change it taken from `given` (the command line): --device and --balance.
PipelineOptions with_placement(PipelineOptions from_file, const PipelineOptions& given);
// Throws InputError for a --device or --balance no run could take (check_pipeline_options checks
// them too).
void check_placement(const PipelineOptions& o);

}  // namespace nbody
