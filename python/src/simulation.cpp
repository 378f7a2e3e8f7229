// nbody._core.Simulation: one rung stepping one state, as `nbody run` does, with the state read
// back as NumPy arrays. Its checkpoints are `nbody run`'s (either resumes the other's).
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <optional>
#include <type_traits>
#include <utility>

#include "core.hpp"
#include "error.hpp"
#include "io.hpp"
#include "run.hpp"
#include "shared_run.hpp"
#include "snapshots.hpp"
#include "stages.hpp"

namespace nbody::python {

namespace {

class Simulation {
 public:
  // From synchronised velocities: staggered by one pass of the diagnostics engine (float64 all
  // pairs, or the tree: `diagnostics`, diagnostics.hpp), which also gives E_0; a tree is checked on it.
  Simulation(const std::string& pipeline, const In2& x, const In2& v, const In1& m, double dt, double softening,
             const nb::dict& options, const std::string& ic, const std::string& diagnostics) {
    Bodies b = bodies_from(x, v, m);
    RunSpec spec;
    spec.rung = pipeline;
    spec.cfg.n = static_cast<long long>(b.size()), spec.cfg.n_given = true;
    spec.cfg.steps = 0, spec.cfg.dt = dt, spec.cfg.softening = softening;
    spec.cfg.ic = ic, spec.cfg.seed = 0, spec.cfg.diagnostics = diagnostics;
    spec.cfg.pipeline = options_from(options);
    auto run = std::make_unique<Run>(std::move(spec));
    validate_bodies(b, "the bodies");
    nb::gil_scoped_release release;
    run_.emplace(std::move(run), silent(), Run::Setup{.estimate = false, .given = &b});
  }

  // `nbody run`'s checkpoint (or this class's): the state exactly as the rung held it.
  explicit Simulation(const std::string& path) {
    ReadRun resumed = read_run_checkpoint(path);
    resumed.record.energy_every = 0;  // step() samples nothing: energy() is asked for
    auto run = std::make_unique<Run>(std::move(resumed), PipelineOptions{});
    nb::gil_scoped_release release;
    run_.emplace(std::move(run), silent(), Run::Setup{.estimate = false});
  }

  // k steps; as the CLI, more than 1e8 of them, or steps whose measured pace would take past an
  // hour (stopped at the first check, the steps taken kept), need force.
  void step(long long k, bool force) {
    if (k < 0) throw InputError("step(" + std::to_string(k) + "): must be >= 0");
    if (k > kMaxSteps && !force)
      throw InputError("step(" + std::to_string(k) + "): the limit is " + std::to_string(kMaxSteps) +
                       " steps a call (force=True to go past it)");
    PyReporter report;
    const int signal = [&] {
      nb::gil_scoped_release release;
      return run_->advance_by(k, report, force);
    }();
    if (signal || report.kept())
      report.raise("interrupted at step " + std::to_string(run_->steps()) + " of " + run_->name() +
                   " (between batches: the simulation is usable and goes on from there)");
  }

  // A read-only view of the state read back (one copy a step count, shared by the arrays of that step).
  View2 positions() {
    const std::shared_ptr<const Bodies> b = with([](Run& r) { return r.kept_state(); });
    return xyz_view(b->pos, b);
  }
  Array1 masses_now() { return masses(with([](Run& r) { return r.kept_state(); })->pos); }
  // The synchronised velocities v_n (one diagnostics pass), not the leapfrog's v_{n-1/2}.
  Array2 velocities() { return xyz(with([](Run& r) { return r.synchronised("velocities").vel; })); }
  Array2 accelerations() {
    return xyz(with([](Run& r) {
      std::vector<Vec3> a;
      r.accelerations(a);
      return a;
    }));
  }
  // E_n, E_0 and the drift (Run::energy_report), as JSON.
  std::string energy() { return with([](Run& r) { return r.energy_report().dump(); }); }
  void save_checkpoint(const std::string& path) {
    with([&](Run& r) { r.checkpoint(path, r.step()); });
  }
  void snapshot(const std::string& path, const std::string& format) {
    check_snapshot_format(format);
    with([&](Run& r) { r.snapshot(path, format); });
  }

  nb::list forcequad_stages() {
    nb::list out;
    for (QuadStage& s : with([](Run& r) { return force_quad_stages(r.rung()); }))
      out.append(nb::make_tuple(s.name, rgb(std::move(s.rgba), s.width, s.height)));
    return out;
  }

  void close() {
    nb::gil_scoped_release release;
    run_->close();
  }
  bool closed() const { return run_->closed(); }
  const std::string& pipeline() const { return run_->name(); }
  long long steps() const { return run_->steps(); }
  double time() const { return static_cast<double>(steps()) * dt(); }
  double dt() const { return run_->params().dt; }
  double softening() const { return run_->params().softening; }
  // The float64 engine: every pass's, or with a tree the check's.
  std::string where() { return closed() ? "" : with([](Run& r) { return r.float64_text(); }); }
  // How the diagnostics are computed and, with a tree, its check (RunDiagnostics::to_json), as JSON.
  std::string diagnostics() {
    return with([](Run& r) { return r.diagnostics().to_json(r.e0() ? &*r.e0() : nullptr).dump(); });
  }

 private:
  // f(the run) without the GIL (SharedRun::with: one call at a time, on a gl:* rung's thread).
  template <class F>
  std::invoke_result_t<F, Run&> with(F&& f) {
    nb::gil_scoped_release release;
    return run_->with(std::forward<F>(f));
  }

  std::optional<SharedRun> run_;
};

}  // namespace

void register_simulation(nb::module_& m) {
  nb::class_<Simulation>(m, "Simulation")
      .def(nb::init<const std::string&, const In2&, const In2&, const In1&, double, double, const nb::dict&,
                    const std::string&, const std::string&>(),
           nb::arg("pipeline"), nb::arg("x"), nb::arg("v"), nb::arg("m"), nb::arg("dt"), nb::arg("softening"),
           nb::arg("options"), nb::arg("ic"), nb::arg("diagnostics"))
      .def(nb::init<const std::string&>(), nb::arg("checkpoint"))
      .def("step", &Simulation::step, nb::arg("k") = 1, nb::arg("force") = false)
      .def("positions", &Simulation::positions)
      .def("masses", &Simulation::masses_now)
      .def("velocities", &Simulation::velocities)
      .def("accelerations", &Simulation::accelerations)
      .def("energy", &Simulation::energy)
      .def("save_checkpoint", &Simulation::save_checkpoint, nb::arg("path"))
      .def("snapshot", &Simulation::snapshot, nb::arg("path"), nb::arg("format"))
      .def("forcequad_stages", &Simulation::forcequad_stages)
      .def("close", &Simulation::close)
      .def_prop_ro("closed", &Simulation::closed)
      .def_prop_ro("pipeline", &Simulation::pipeline)
      .def_prop_ro("steps", &Simulation::steps)
      .def_prop_ro("time", &Simulation::time)
      .def_prop_ro("dt", &Simulation::dt)
      .def_prop_ro("softening", &Simulation::softening)
      .def_prop_ro("fp64_engine", &Simulation::where)
      .def("diagnostics", &Simulation::diagnostics);
}

}  // namespace nbody::python
