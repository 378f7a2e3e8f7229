#include "options.hpp"

#include <cstdio>
#include <stdexcept>

#include "error.hpp"

namespace nbody {

namespace {

namespace d = defaults;
using V = OptionValue;

// key, CLI flag, Python keyword, page field, default, range, help.
const std::vector<OptionRow> kOptions{
    {"n", "--bodies", "n", "n", V{d::n}, "1..2147483647",
     "Number of bodies (for a file --ic: n of its bodies by --subset; default all)"},
    {"steps", "--steps", "steps", "steps", V{d::steps}, "0..100000000", "Leapfrog steps"},
    {"dt", "--dt", "dt", "dt", V{d::dt}, "> 0, finite", "Time step"},
    {"softening", "--softening", "softening", "softening", V{d::softening}, "> 0, finite", "Softening length eps"},
    {"ic", "--ic", "ic", "ic", V{std::string_view(d::ic)}, "",
     "Initial conditions: plummer | uniform | shell | expand | collision | FILE.bin (Tipsy) | FILE.csv "
     "(x,y,z,vx,vy,vz,m) | FILE.h5 (HDF5 snapshot, ours or GADGET-style)"},
    {"seed", "--seed", "seed", "seed", V{d::seed}, "0..2^64-1",
     "Random seed for generated initial conditions and --subset random"},
    {"subset", "--subset", "subset", "subset", V{std::string_view(d::subset)}, "first | random",
     "With -n below a file's count: first (the first n bodies, file order) | random (n drawn with --seed, each "
     "species in proportion, masses scaled to the file's total)"},
    {"gl_chunk", "--gl-chunk", "gl_chunk", "gl_chunk", V{static_cast<long long>(d::gl_chunk)}, ">= 0",
     "GL force-quad side in bodies (a run of more bodies draws the quad in chunks, at most 64 a side: n / 64 or more)"},
    {"gl_precision", "--gl-precision", "gl_precision", "", V{std::string_view(d::gl_precision)}, "float | half",
     "GL body and force-quad storage: float (RGBA32F) | half (RGBA16F)"},
    {"cuda_block", "--cuda-block", "cuda_block", "", V{static_cast<long long>(d::cuda_block)}, "",
     "CUDA threads per block (one tile of that many bodies)"},
    {"cuda_unroll", "--cuda-unroll", "cuda_unroll", "", V{static_cast<long long>(d::cuda_unroll)}, "",
     "Inner-loop unroll factor (GPU Gems 3 §31.4.1)"},
    {"cuda_q", "--cuda-q", "cuda_q", "", V{static_cast<long long>(d::cuda_q)}, "",
     "Threads per body q, each row in q segments (GPU Gems 3 §31.4.1)"},
    {"cuda_bodies", "--cuda-bodies", "cuda_bodies", "", V{static_cast<long long>(d::cuda_bodies)}, "",
     "Bodies per thread K"},
    {"cuda_split", "--cuda-split", "cuda_split", "", V{static_cast<long long>(d::cuda_split)}, "",
     "Parts of the j range, one block each (at least 16 where N has as many tiles when chosen, so that a "
     "distributed rank computes whole parts of its own block while the exchange runs)"},
    {"theta", "--theta", "theta", "theta", V{d::theta}, "",
     "Tree opening angle: a cell is taken whole (its monopole or quadrupole, --multipole) where theta x the distance of its centre of mass from the "
     "box of the bodies it pulls (cpu:tree: a leaf; cuda:tree: a warp's group of up to 64) > its radius bmax "
     "(from the centre of mass to its farthest body), else opened; 0 opens every cell (all pairs)"},
    {"leaf_size", "--leaf-size", "leaf_size", "leaf_size", V{static_cast<long long>(d::leaf_size)}, "",
     "Tree leaf size B: a cell of at most B bodies is not split further; opened, its bodies are summed directly "
     "(cpu:tree: bodies that share one cell at the deepest level stay one leaf of any size)"},
    {"multipole", "--multipole", "multipole", "", V{std::string_view(d::multipole)}, "monopole | quadrupole",
     "Tree cells (cpu:tree, cuda:tree): monopole (a cell pulls as its mass at its centre of mass) | quadrupole (and "
     "its traceless second "
     "moment about the centre of mass, the softened expansion to second order): far more accurate at the same "
     "theta, so a given error is reached at a larger theta with fewer cells"},
    {"webgpu_p", "", "", "webgpu_p", V{static_cast<long long>(d::webgpu_p)}, "",
     "WebGPU invocations per workgroup p (one tile of that many bodies in workgroup memory)"},
    {"webgpu_k", "", "", "webgpu_k", V{static_cast<long long>(d::webgpu_k)}, "", "WebGPU bodies per invocation K"},
    {"device", "--device", "device", "", V{static_cast<long long>(d::device)}, ">= 0",
     "CUDA device index, and the EGL device tried first for gl:* (under mpirun: default local rank mod the device "
     "count)"},
    {"balance", "--balance", "", "", V{std::string_view(d::balance)}, "equal | rate | auto | W0:W1:...",
     "Under mpirun, the bodies each rank owns: equal (blocks within one body of each other) | rate (in proportion "
     "to each rank's rate, measured by a probe of about half a second at the start) | auto (rate where the "
     "measured rates differ by more than 10%, else equal) | W0:W1:... (fixed weights, one per rank). For the "
     "all-pairs rungs every choice gives the same bits; only the speed differs. cpu:tree cuts its key ranges "
     "for these shares of the work, so its bits depend on them (and with rate or auto on the rates measured, "
     "run to run). One process has no blocks: the value is checked and changes nothing"},
    {"pipeline", "--pipeline", "pipeline", "pipeline", V{std::string_view("")}, "", "Pipeline"},
    {"pipelines", "--pipelines", "pipelines", "pipeline", V{std::string_view("")}, "", "Pipelines"},
    {"reference", "--reference", "reference", "", V{std::string_view("cpu64")}, "a float64 pipeline",
     "The pipeline the others are measured against"},
    {"every", "--every", "every", "", V{1LL}, ">= 1", "Compare every K steps"},
    {"energy_every", "--energy-every", "energy_every", "", V{0LL}, ">= 0", "Measure the energy every K steps"},
    {"no_energy", "--no-energy", "", "", V{0LL}, "", 
     "Measure no energy: skips the diagnostics pass at the end (E_0 costs nothing extra: it comes with the "
     "stagger's pass, which every run makes)"},
    {"diagnostics", "--diagnostics", "diagnostics", "", V{std::string_view(d::diagnostics)}, "auto | all-pairs | tree",
     "How the stagger, the energies and the synchronised velocities of snapshots and --save are computed: "
     "all-pairs (float64, O(N^2) a pass) | "
     "tree (a tree rung's own tree: O(N log N) a pass, its error measured against float64 all pairs on sampled "
     "bodies and reported) | auto (tree for a tree rung from a size on, else all-pairs)"},
    {"validate_n", "--validate-n", "validate_n", "", V{1000LL}, ">= 1", "Bodies checked against float64"},
    {"reps", "--reps", "reps", "reps", V{5LL}, ">= 1", "Timed repetitions"},
    {"force", "--force", "force", "", V{0LL}, "", "Start even when the estimated time is above the limit (1 hour)"},
    {"snapshot_format", "--snapshot-format", "format", "", V{std::string_view("hdf5")}, "hdf5 | tipsy | csv",
     "Snapshot format"},
};

FrontEnd g_front_end = FrontEnd::Cli;

}  // namespace

const std::vector<OptionRow>& option_table() { return kOptions; }

const OptionRow& option_row(std::string_view key) {
  for (const OptionRow& row : kOptions)
    if (row.key == key) return row;
  throw std::logic_error("the option table has no option '" + std::string(key) + "'");
}

std::string default_text(const OptionRow& row) {
  struct Text {
    std::string operator()(long long v) const { return std::to_string(v); }
    std::string operator()(double v) const { return number_text(v); }
    std::string operator()(std::uint64_t v) const { return std::to_string(v); }
    std::string operator()(std::string_view v) const { return std::string(v); }
  };
  return std::visit(Text{}, row.fallback);
}

void set_front_end(FrontEnd f) { g_front_end = f; }
FrontEnd front_end() { return g_front_end; }

std::string option(std::string_view key) {
  const OptionRow& row = option_row(key);
  switch (g_front_end) {
    case FrontEnd::Python:
      if (!row.python.empty()) return std::string(row.python);
      break;
    case FrontEnd::Page:
      if (!row.page.empty()) return std::string(row.page);
      break;
    case FrontEnd::Cli:
      break;
  }
  return std::string(row.cli.empty() ? row.key : row.cli);  // a row of the page's alone: its key
}

}  // namespace nbody
