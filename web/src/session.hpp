// One simulation on the page: a rung and, beside it in lock step, cpu64 (float64, in WebAssembly)
// from the same staggered start, the page's live measure of divergence (TR04-032 Fig. 9). Every
// call returns JSON in the CLI's field names; a failure is {"error": message, "kind": ...}, never a
// C++ exception across the boundary. Arrays are views of this object's memory, valid until the
// next call.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fp64_engine.hpp"
#include "pipeline.hpp"
#include "run.hpp"
#include "stages.hpp"

namespace nbody::web {

// The most bodies the page takes with cpu64 beside the rung: N^2 float64 interactions a step on one
// CPU thread (WebAssembly has no OpenMP here).
constexpr long long kMaxBodies = 16384;
// Without cpu64 beside it, the rung's own pace sets the limit (Session::start measures it): the
// set-up's float64 passes and one step, each under these (a step as long as cpu64's beside a rung at
// kMaxBodies on a slow machine), and never past kMaxBodiesAlone (a WebGPU rung's dispatches of at
// most 65535 workgroups stop it at 4194240 bodies, or fewer with p K < 64: it says so). The set-up is
// float64 all-pairs in WebAssembly on one thread: on a fast GPU it, not the rung, bounds n (a few
// times 10^4 bodies).
constexpr long long kMaxBodiesAlone = 1 << 22;
constexpr double kMaxSetupSeconds = 30, kMaxStepSeconds = 10;
// The largest force quad whose stages the page reads back and draws (1024^2 texels, 16 MiB).
constexpr long long kMaxStageBodies = 1024;
// The page's n when none is given: the largest whose force quad's stages it can draw. Every other
// default is the library's (options.hpp), the same as the command line's.
constexpr long long kPageBodies = kMaxStageBodies;

// {"error": what, "kind": "InputError" | "Unavailable" | "NonFinite" | "Error"} from the exception
// in flight, its message in the page's field names (n, not --bodies); call only inside a catch block.
nlohmann::json current_error();
// `j` as JSON text; bytes that are not UTF-8 (a dropped file's, quoted in a message) become U+FFFD.
std::string reply(const nlohmann::json& j);

class Session {
 public:
  // spec: {"pipeline", "n", "ic", "seed", "dt", "softening", "subset", "gl_chunk", "reference": bool}.
  // Returns the values it runs with ({"pipeline", "n", ..., "energy0", "fp64_engine", "warnings",
  // "energy_every": the steps between the page's energy measurements, 0 for only when asked})
  // or an error, after which nothing runs until the next start.
  std::string start(const std::string& spec);
  // `count` steps of both; {"step", "ms_per_step", "interactions_per_s", "reference_ms_per_step",
  // "divergence": {"max", "rms", "worst"} (with a reference)}.
  std::string step(int count);
  // The rung's and cpu64's accelerations of the current positions (no step), kept for the views.
  std::string accelerations();
  // Energy of the rung's state at a synchronised time, in float64 (Run::energy_report): {"step",
  // "kinetic", "potential", "total", "initial", "relative_drift"}.
  std::string energy();
  // gl:forcequad's force quad and halving passes for the rung's current positions
  // ([{"name", "width", "height"}]; stage_data(k) has the texels).
  std::string stages();
  // What one workgroup of a tiled kernel (webgpu:gems31, gl:compute, cuda:gems31) sums: for the
  // first p bodies (p invocations) and each tile of p bodies j, |a_i| summed over the tiles so far,
  // in float64 from the rung's current positions ({"p", "tiles"}; workgroup_data() has p x tiles
  // values, invocation by invocation).
  std::string workgroup(int p);
  // The library's bench row for the rung at this N (validated against float64, then timed).
  std::string bench(int steps, int reps);

  std::vector<float>& draw_positions() { return draw_; }   // x y z per body, the rung's
  std::vector<double>& positions() { return flat_pos_; }   // x y z m per body, the rung's
  std::vector<double>& reference_positions() { return flat_ref_; }  // empty without a reference
  std::vector<double>& rung_accelerations() { return acc_; }      // x y z per body
  std::vector<double>& reference_accelerations() { return acc_ref_; }
  std::vector<float>& stage_data(int k);
  std::vector<float>& workgroup_data() { return workgroup_; }

 private:
  void clear();  // nothing runs, nothing is shown
  void read_back();
  void check_pace();  // without a reference, past kMaxBodies: the measured set-up and step times
  std::unique_ptr<Run> run_;  // the rung's run (simulation/run.hpp), cpu64 its diagnostics engine
  std::unique_ptr<Pipeline> reference_;  // cpu64 in lock step, loaded with the run's start
  Bodies ref_state_;
  int energy_every_ = 50;  // the page's energy between steps; 0: a float64 pass costs too much here
  std::vector<float> draw_;
  std::vector<double> flat_pos_, flat_ref_, acc_, acc_ref_;
  std::vector<QuadStage> stages_;
  std::vector<float> workgroup_;
};

}  // namespace nbody::web
