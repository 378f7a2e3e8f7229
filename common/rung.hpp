// A rung: one way of computing the same all-pairs accelerations (cpu64, gl:forcequad, cuda:tuned,
// ...), described once, next to its code. Each family lists its rungs in its own registry.cpp
// (common/cpu_rungs.cpp, gl_pipeline/registry.cpp, cuda_pipeline/registry.cpp,
// webgpu_pipeline/registry.cpp); the catalogue
// (simulation/catalogue.hpp) joins the lists, and everything that speaks of a rung reads it there:
// --help, `nbody info`, the option checks, the bench's bounds, the ladder, the tests' lists, the
// page's list of rungs and docs/ladder.md's table (checked against it by a test).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fp64_engine.hpp"
#include "options.hpp"
#include "pipeline.hpp"

namespace nbody {

// Options the front ends pass down to the rungs that take them (options.hpp has their rows).
struct PipelineOptions {
  int gl_chunk = defaults::gl_chunk;
  std::string gl_precision = defaults::gl_precision;  // float | half
  int cuda_block = defaults::cuda_block;
  int cuda_unroll = defaults::cuda_unroll;
  int cuda_q = defaults::cuda_q;
  int cuda_bodies = defaults::cuda_bodies;
  int cuda_split = defaults::cuda_split;
  double theta = defaults::theta;   // a tree's opening angle
  int leaf_size = defaults::leaf_size;  // a tree's bodies per leaf
  std::string multipole = defaults::multipole;  // a tree's cells: monopole | quadrupole
  int webgpu_p = defaults::webgpu_p;
  int webgpu_k = defaults::webgpu_k;
  int device = defaults::device;    // CUDA device index
  bool device_given = false;        // --device was on the command line
  std::string balance = defaults::balance;  // under mpirun, each rank's block (placement.hpp)
};

// Each field of PipelineOptions by its row's key (options.hpp), listed once: the CLI registers them,
// Python's keyword arguments set them, and the files (checkpoints, snapshots, results) write and
// read those that define a run, each by walking this list.
struct PipelineField {
  std::string_view key;
  std::variant<int PipelineOptions::*, double PipelineOptions::*, std::string PipelineOptions::*> field;
  bool in_files = true;   // defines the run (not where it runs: device, balance; nor the page's own)
  std::string_view if_absent{};  // a text field a file may lack: its value there ("" : it may not)
};
const std::vector<PipelineField>& pipeline_fields();

enum class Family { Cpu, Gl, Cuda, WebGpu };

// How a rung sums the forces: all N^2 pairs (the ladder's rungs, DESIGN.md's numerical contract), or
// a tree (GPU Gems 3 §31.6's hierarchical method: far cells as one body each, within an opening
// angle theta; off the ladder, and its rates are N^2-equivalent).
enum class Method { AllPairs, Tree };

// How a rung runs under mpirun -np P > 1 (simulation/decomposition.hpp): not at all; by blocks of
// the bodies in index order, every rank holding every position (bit-identical to one process); or
// by key ranges on the Morton curve that move with the bodies, each rank holding its own (a tree:
// the same bits for a given P, not those of one process; common/key_ranges.hpp).
enum class Split { None, Blocks, KeyRanges };

// What bounds a rung's rate in the bench (simulation/bounds.hpp).
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
  WebGpuBuffer,  // WebGPU storage buffers in the browser, read back
};

// Accuracy a rung must reach against float64 before a time counts: every checked body within
// atol x rms|a_ref| + rtol x |a_ref| (the bounds of the GL and CUDA tests, tests/helpers.hpp).
struct Tolerance {
  double atol = 0, rtol = 0;
};
inline constexpr Tolerance kFloatTolerance{1e-6, 1e-4}, kDoubleTolerance{1e-12, 1e-10};

// The values an integer option of a rung accepts: powers of two in lo..hi, multiples of `step` in
// lo..hi, or every integer in lo..hi.
struct Accepts {
  enum Kind { PowersOfTwo, MultiplesOf, Interval } kind = Interval;
  int lo = 0, hi = 0, step = 1;
  bool contains(int v) const;
  std::string describe() const;  // "1, 2, 4 or 8", "a multiple of 32 in 32..1024", "1..65535"
};

// The values a real option of a rung accepts: lo..hi, both ends included (never NaN).
struct Reals {
  double lo = 0, hi = 0;
  bool contains(double v) const { return v >= lo && v <= hi; }
  std::string describe() const;  // "a number in 0..1"
};

// One option a rung takes: its row in the option table, its field (an integer or a real one), and
// the values it accepts: an integer option's `accepts` with what 0 stands for, a real one's `reals`.
using IntOption = int PipelineOptions::*;
using RealOption = double PipelineOptions::*;
struct RungOption {
  std::string_view key;           // the option table's key: "cuda_block"
  std::variant<IntOption, RealOption> field;
  Accepts accepts{};
  int zero_is = 0;                // the value 0 stands for ("0: 256"); 0 with zero_note: the rung chooses
  std::string_view zero_note{};   // how the rung chooses for 0 ("chosen by N, 16, 8 or 4"); empty and
                                  // zero_is 0: 0 is not accepted
  Reals reals{};                  // a real option's values
  bool is_real() const { return std::holds_alternative<RealOption>(field); }
  // What it accepts, in words: accepts.describe() with its 0, or reals.describe().
  std::string describe() const;
  // Copies this option's value from `from` into `to`.
  void copy(const PipelineOptions& from, PipelineOptions& to) const;
};

// Its place in docs/ladder.md's table: on it or not, the rung it stands on ("" for the bottom rung),
// and whether it starts a speed-up chain of its own (the fp64 rungs, double-single GL).
struct LadderPlace {
  bool on = false;
  std::string_view above{};
  bool restart = false;
};
inline constexpr LadderPlace kOffLadder{};
inline constexpr LadderPlace ladder_bottom() { return {true, "", false}; }
inline constexpr LadderPlace ladder_above(std::string_view below, bool restart = false) {
  return {true, below, restart};
}

using RungFactory = std::unique_ptr<Pipeline> (*)(const PipelineOptions& resolved);
using EngineFactory = std::unique_ptr<Fp64Engine> (*)(const PipelineOptions& resolved);
// Rules across a rung's options, on the values resolved (given: as the user gave them); throws
// InputError.
using RungCheck = void (*)(const PipelineOptions& resolved, const PipelineOptions& given);

struct Rung {
  std::string name;      // "cuda:tuned"
  Family family;
  std::string_view summary;  // one line: what it is ("GPU Gems 3 listing 31-3: p bodies per tile ...")
  int state_bits;        // 64 for float64 state (cpu64, *-fp64, cuda:mixed, gl:compute-ds), else 32
  bool fp64_forces;      // float64 accelerations: may serve as a reference
  Split split;           // how it runs under mpirun -np P > 1
  bool deterministic;    // the same bits run after run from the same state (sums in a fixed order)
  LadderPlace ladder;
  Tolerance tolerance;   // float storage (gl:* half precision: tolerance_for()); a tree's at theta = 0
  BoundModel bound;
  double slots;          // BoundModel::Issue: issue slots (fp32) or DP operations (fp64) per interaction
  StateHome state;
  int flops;             // counted per interaction for GFLOP/s (GPU Gems 3 §31.4: 20; fp64 30)
  RungFactory make;      // made from resolved options; throws Unavailable where it cannot run
  std::vector<RungOption> options = {};  // the options it takes, with its defaults and ranges
  RungCheck check = nullptr;
  std::string bound_note = "";  // why `slots` is not the plain 13 or 12, for the bound's detail
  Method method = Method::AllPairs;
  // Where the options set the accuracy (a tree's theta): the tolerance at the resolved options.
  Tolerance (*tolerance_at)(const PipelineOptions& resolved) = nullptr;
  // A tree rung's diagnostics engine (--diagnostics tree): its own tree at the resolved options,
  // the accelerations and potentials of the stagger and the energies in O(N log N) a pass; throws
  // Unavailable where the rung cannot run.
  EngineFactory tree_engine = nullptr;

  bool distributable() const { return split != Split::None; }
};

// The facts a rung's entry lacks or gets wrong, each in a few words ("no factory", "flops 0"); empty
// when the entry is whole. The catalogue refuses a registry with an incomplete entry.
std::vector<std::string> missing_facts(const Rung& r);

// What every tree rung takes: theta (0..1) and leaf_size (1..4096, 0 standing for `leaf_size`, the
// rung's own measured best).
std::vector<RungOption> tree_options(int leaf_size);
// A tree's cells (the multipole option): each its mass at its centre of mass, or with its second
// moment about it too (common/tree.hpp and cuda_pipeline/tree_kernels.cuh say how each is summed).
enum class Multipole { Monopole, Quadrupole };
// The option's value as given ("monopole", "quadrupole"); throws InputError naming the option for
// any other.
Multipole multipole_of(const std::string& value);

// A tree rung's accuracy against float64, checked per body as atol x rms|a| + rtol x |a|: float
// rounding (all pairs, theta = 0), plus theta^2 / 2 in both terms for the cells taken whole.
Tolerance tree_tolerance(const PipelineOptions& resolved);

// The CPU rungs (cpu64, cpu32, cpu:tree): common/cpu_rungs.cpp.
const std::vector<Rung>& cpu_rungs();

}  // namespace nbody
