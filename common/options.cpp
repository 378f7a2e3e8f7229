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
     "Number of bodies (for a file --ic: n of its bodies by --subset; without -n all of them, not the default "
     "shown)", "-n"},
    {"steps", "--steps", "steps", "steps", V{d::steps}, "0..100000000", "Leapfrog steps"},
    {"dt", "--dt", "dt", "dt", V{d::dt}, "> 0, finite", "Time step"},
    {"softening", "--softening", "softening", "softening", V{d::softening}, "> 0, finite", "Softening length eps"},
    {"ic", "--ic", "ic", "ic", V{std::string_view(d::ic)}, "",
     "Initial conditions: plummer | uniform | shell | expand | collision | FILE.bin (Tipsy) | FILE.csv "
     "(the header line x,y,z,vx,vy,vz,m, then a body a line) | FILE.h5 (HDF5 snapshot, ours or GADGET-style)", "",
     "SOURCE"},
    {"seed", "--seed", "seed", "seed", V{d::seed}, "0..2^64-1",
     "Random seed for generated initial conditions and --subset random"},
    {"subset", "--subset", "subset", "subset", V{std::string_view(d::subset)}, "first | random",
     "With -n below a file's count: first (the first n bodies, file order) | random (n drawn with --seed, each "
     "species in proportion, masses scaled to the file's total)", "", "MODE"},
    {"gl_chunk", "--gl-chunk", "gl_chunk", "gl_chunk", V{static_cast<long long>(d::gl_chunk)}, ">= 0",
     "GL force-quad side in bodies (a run of more bodies draws the quad in chunks, at most 64 a side: n / 64 or more)"},
    {"gl_precision", "--gl-precision", "gl_precision", "", V{std::string_view(d::gl_precision)}, "float | half",
     "GL body and force-quad storage: float (RGBA32F) | half (RGBA16F)", "", "PRECISION"},
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
     "theta, so a given error is reached at a larger theta with fewer cells", "", "KIND"},
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
     "all-pairs rungs every choice gives the same bits; only the speed differs. The tree rungs (cpu:tree, "
     "cuda:tree) cut their key ranges for these shares of the work, so their bits depend on them (and with rate or auto on the rates measured, "
     "run to run). One process has no blocks: the value is checked and changes nothing", "", "SPEC"},
    {"pipeline", "--pipeline", "pipeline", "pipeline", V{std::string_view(d::pipeline)}, "",
     "The rung to run (nbody info lists them)", "-p", "NAME"},
    {"reference", "--reference", "reference", "", V{std::string_view(d::reference)}, "a float64 pipeline",
     "The float64 pipeline every other is measured against", "", "NAME"},
    {"every", "--every", "every", "", V{d::every}, ">= 1",
     "Read back and compare every K steps (and at the steps the energy is measured: --energy-every's, or --plot's "
     "samples; the --fail-above step and the last)", "", "K"},
    {"energy_every", "--energy-every", "energy_every", "", V{d::energy_every}, ">= 0",
     "Also measure the energy every K steps (0: at the start and the end only)", "", "K"},
    {"no_energy", "--no-energy", "", "", V{0LL}, "",
     "Measure no energy: skips the diagnostics pass at the end (E_0 costs nothing extra: it comes with the "
     "stagger's pass, which every run makes)"},
    {"diagnostics", "--diagnostics", "diagnostics", "", V{std::string_view(d::diagnostics)}, "auto | all-pairs | tree",
     "How the stagger, the energies and the synchronised velocities of snapshots and --save are computed: "
     "all-pairs (float64, O(N^2) a pass) | "
     "tree (a tree rung's own tree: O(N log N) a pass, its error measured against float64 all pairs on sampled "
     "bodies and reported) | auto (tree for a tree rung from a size on, else all-pairs)", "", "MODE"},
    {"validate_n", "--validate-n", "validate_n", "", V{d::validate_n}, ">= 1",
     "Bodies for checking a --reference other than cpu64 against cpu64 (rms relative acceleration error <= "
     "1e-12, else exit 3)"},
    {"force", "--force", "force", "", V{0LL}, "", "Start even when the estimated time is above the limit (1 hour)"},
    {"json", "--json", "", "", V{std::string_view("")}, "", "Write the results as JSON to FILE (- for stdout)", "", "FILE"},

    // run's outputs
    {"out", "--out", "", "", V{std::string_view("")}, "",
     "Folder for frames, snapshots and checkpoints: made when the run first writes there (none is left by a run "
     "that wrote nothing), refused when it cannot be written or holds another run's files (a --resume goes on in "
     "its checkpoint's folder); with it, Ctrl-C, SIGTERM or SIGHUP writes a checkpoint there before the run exits "
     "130, 143 or 129 (signals within 1.5 s of the first are the same interrupt; a later one stops at once, "
     "exit 4, without it)", "", "DIR"},
    {"frames", "--frames", "", "", V{0LL}, ">= 0",
     "Write DIR/frame_NNNNNN.png at step 0, every K steps and the last, labelled (rendered through GL, headless; a gl:* pipeline is drawn "
     "from its textures, any other read back first; 0: none)", "", "K"},
    {"colour", "--colour", "", "", V{std::string_view(d::colour)}, "plain | speed | species | rank",
     "Frames: plain | speed | species (a file's gas, dark, star) | rank (the rank that computes each body "
     "under mpirun)", "--color", "COLOUR"},
    {"view_radius", "--view-radius", "", "", V{0.0}, ">= 0",
     "Half the picture's height in world units (0: fit 90% of the luminous bodies)"},
    {"view_tilt", "--view-tilt", "", "", V{d::view_tilt}, "", "Camera tilt about x in degrees (0: looking down z)"},
    {"view_yaw", "--view-yaw", "", "", V{0.0}, "", "Camera turn about z in degrees"},
    {"tree_cells", "--tree-cells", "", "", V{0LL}, "",
     "the cells of cpu:tree's octree, built over the bodies drawn (the rung's leaf size where it is a tree, else "
     "cpu:tree's), down to D levels below the root", "", "D"},
    {"received_cells", "--received-cells", "", "", V{-1LL}, "",
     "Frames: draw the cells rank R received whole from the other ranks at its last force pass (its locally "
     "essential tree's cells, each summed as one term), each in the colour of the rank that sent it (a tree "
     "rung under mpirun; -1: none)", "", "R"},
    {"snapshot_every", "--snapshot-every", "", "", V{0LL}, ">= 0",
     "Write DIR/snapshot_NNNNNN.h5 (.bin, .csv) at step 0, every K steps and the last (synchronised velocities: "
     "one diagnostics pass each; 0: none)", "", "K"},
    {"snapshot_format", "--snapshot-format", "format", "", V{std::string_view(d::snapshot_format)},
     "hdf5 | tipsy | csv", "hdf5 (GADGET-4/SWIFT layout, PartType1) | tipsy (standard big-endian, floats) | csv", "", "FORMAT"},
    {"checkpoint_every", "--checkpoint-every", "", "", V{0LL}, ">= 0",
     "Write DIR/checkpoint.nbck every K steps and at the last (the one before kept as .prev; 0: only on Ctrl-C, "
     "SIGTERM or SIGHUP, and at the last step of a --resume of DIR/checkpoint.nbck itself)", "", "K"},
    {"resume", "--resume", "", "", V{std::string_view("")}, "",
     "Continue the run a checkpoint holds, bit for bit (a tree rung split by key ranges: on as many ranks, for "
     "the same shares; it warns where not): --steps M more (default: what remains of its --steps); outputs, "
     "--device and --balance are given again (not read from the file), the rest comes from the file", "", "FILE"},
    {"save", "--save", "", "", V{std::string_view("")}, "",
     "Write the final state as CSV (x,y,z,vx,vy,vz,m; - for stdout)", "", "FILE"},

    // compare's own
    {"pipelines", "--pipelines", "pipelines", "pipeline", V{std::string_view("")}, "",
     "Comma-separated pipelines; each must be able to run here (exit 3 otherwise). Default: every pipeline, those "
     "that cannot run here reported as skipped. The reference is always added", "-p", "LIST"},
    {"csv", "--csv", "", "", V{std::string_view("")}, "", "Write step,pair,max,rms rows to FILE (- for stdout)", "", "FILE"},
    {"plot", "--plot", "", "", V{std::string_view("")}, "",
     "Draw the divergence (the pairs with the reference) and the energy (the reference's drift, each rung's "
     "difference from it) vs step to FILE.png (gnuplot; without --energy-every, the energy is sampled at most 40 "
     "times, every ceil(steps/40) steps, which are then compared steps too); FILE.gp writes the gnuplot script "
     "instead, data included (gnuplot -c FILE.gp [OUT.png]). With --preset, that preset's figure", "", "FILE"},
    {"plot_all_pairs", "--plot-all-pairs", "", "", V{0LL}, "", "--plot: draw every pair, not only those with the reference"},
    {"fail_above", "--fail-above", "", "", V{std::string_view("")}, "DISTANCE@STEP",
     "DISTANCE@STEP: exit 1 if any pair with the reference is farther apart than DISTANCE at STEP; exit 3 if no "
     "such pair ran (the hook for a CI regression test)", "", "DISTANCE@STEP"},
    {"junit", "--junit", "", "", V{std::string_view("")}, "",
     "With --fail-above: write its checks to FILE as JUnit XML (one test case per pair with the reference, or per "
     "pipeline with --against; failure text = the FAIL line) for CI test reporters", "", "FILE"},
    {"preset", "--preset", "", "", V{std::string_view("")}, "tr04-fig9 | dt-sweep | theta-sweep",
     "tr04-fig9: TR04-032 §7.3, 1000 steps of dt 0.01 for N = 1024, 4096, 16384 (-n, --steps override), max "
     "distance to the reference per step (--plot: a panel per N). dt-sweep: every rung to T = --steps x --dt "
     "(default 50 x 0.02) at dt = --dt and 5 halvings, each against the reference at a quarter of the smallest "
     "dt, and each float rung against the reference at its own dt (its rounding alone: the floor under its curve, where the error stops falling with dt) "
     "(default n 256; --plot draws both against dt).", "", "NAME"},
    {"thetas", "--thetas", "", "", V{std::string_view("")}, "",
     "With --preset theta-sweep: the thetas to sweep, comma-separated and rising, each in 0..1 (at large N leave "
     "out the small ones: theta 0 is all pairs)", "", "LIST"},
    {"against", "--against", "", "", V{std::string_view("")}, "",
     "SNAPSHOT.h5 (from run --snapshot-every): repeat its run to its step with --pipelines (default: the "
     "snapshot's) and measure the distance to its positions; with --fail-above DISTANCE, exit 1 past it (a stored "
     "CI baseline)", "", "FILE"},
    {"explain", "--explain", "", "", V{0LL}, "",
     "Explain the divergence: CPU float32 variants that differ in one factor each (summation order, rsqrt, FMA, "
     "storage precision), the time step's own error (cpu64 at dt, dt/2, dt/4: the measured order and the "
     "Richardson estimate) beside float32 rounding, the e-folding time, and for each tree rung among the "
     "pipelines its opening angle (its force error against float64 over every body, and its distance to cpu64 "
     "beside the baseline's); the last line says which of float32 rounding, the time step, theta or chaos limits "
     "accuracy"},

    // bench's and ladder's own
    {"bench_pipelines", "--pipelines", "pipelines", "", V{std::string_view(d::bench_pipelines)}, "",
     "Comma-separated pipelines", "-p", "LIST"},
    {"bench_n", "--bodies", "n", "", V{std::string_view(d::bench_n)}, "", "Comma-separated body counts", "-n", "LIST"},
    {"ladder_n", "--bodies", "n", "", V{d::n}, "1..2147483647", "Body count", "-n", "INT"},
    {"bench_steps", "--steps", "steps", "", V{d::bench_steps}, ">= 1", "Steps per timed repetition"},
    {"ladder_steps", "--steps", "steps", "", V{d::ladder_steps}, ">= 1", "Steps per timed repetition"},
    {"reps", "--reps", "reps", "reps", V{d::reps}, ">= 1", "Timed repetitions (the median is reported, and the spread)"},
    {"ladder_reps", "--reps", "reps", "", V{d::ladder_reps}, ">= 1",
     "Timed repetitions (the median is reported, and the spread)"},
    {"bench_validate_n", "--validate-n", "validate_n", "", V{d::validate_n}, ">= 1",
     "Bodies whose accelerations are checked against the float64 engine before and after the timed steps, at the "
     "timed N and launch plan (four runs spread over the N)"},

    // view's own
    {"view_pipelines", "--pipelines", "", "", V{std::string_view("")}, "",
     "One or two pipelines, left and right (default: gl:forcequad beside cuda:tuned; cpu32 where there is no CUDA "
     "device)", "-p", "LIST"},
    {"steps_per_frame", "--steps-per-frame", "", "", V{d::steps_per_frame}, ">= 1", "Leapfrog steps between frames"},
    {"view_colour", "--colour", "", "", V{std::string_view(d::view_colour)}, "auto | plain | speed | species | divergence",
     "auto | plain | speed | species | divergence (each body's distance to its twin, log scale); auto: species "
     "for a file with several, else speed", "--color", "COLOUR"},
    {"frame_count", "--frame-count", "", "", V{0LL}, ">= 0",
     "Scripted: draw K frames, save the last to --screenshot, print frames/s and exit (0: interactive)", "", "K"},
    {"view_frames", "--frames", "", "", V{0LL}, ">= 0", "Another name of --frame-count (taken as it, with a warning)"},
    {"screenshot", "--screenshot", "", "", V{std::string_view("")}, "",
     "PNG file for --frame-count's last frame and for the p key", "", "FILE"},
    {"size", "--size", "", "", V{std::string_view(d::view_size)}, "WxH", "Window size WxH in pixels", "", "SIZE"},
    {"no_interop", "--no-interop", "", "", V{0LL}, "",
     "Copy a cuda:* pane through the host even where CUDA-GL interop works (to compare)"},
    {"offscreen", "--offscreen", "", "", V{0LL}, "",
     "With --frame-count: no window; draw the same frames in the headless EGL context (no display needed; frames/s "
     "then counts drawing finished by glFinish, no presentation)"},
    {"vsync", "--vsync", "", "", V{0LL}, "", "Wait for the display's refresh between frames (off: as fast as it steps)"},
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
