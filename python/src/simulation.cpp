// nbody._core.Simulation: one rung stepping one state, as `nbody run` does, with the state read
// back as NumPy arrays. Its checkpoints are `nbody run`'s (either resumes the other's).
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <cmath>
#include <atomic>
#include <mutex>
#include <optional>

#include "core.hpp"
#include "error.hpp"
#include "io.hpp"
#include "metrics.hpp"
#include "run.hpp"
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
    Run::Setup how;
    how.estimate = false;
    how.given = &b;
    open(std::move(run), how);
  }

  // `nbody run`'s checkpoint (or this class's): the state exactly as the rung held it.
  explicit Simulation(const std::string& path) {
    ReadRun resumed = read_run_checkpoint(path);
    resumed.record.energy_every = 0;  // step() samples nothing: energy() is asked for
    auto run = std::make_unique<Run>(std::move(resumed), PipelineOptions{});
    nb::gil_scoped_release release;
    Run::Setup how;
    how.estimate = false;
    open(std::move(run), how);
  }

  // k steps; as the CLI, more than 1e8 of them, or steps whose measured pace would take past an
  // hour (stopped at the first check, the steps taken kept), need force.
  void step(long long k, bool force) {
    if (k < 0) throw InputError("step(" + std::to_string(k) + "): must be >= 0");
    if (k > kMaxSteps && !force)
      throw InputError("step(" + std::to_string(k) + "): the limit is " + std::to_string(kMaxSteps) +
                       " steps a call (force=True to go past it)");
    PyReporter report;
    int signal = 0;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      struct Count {  // the steps taken count, however the stepping ends
        Simulation& s;
        ~Count() { s.step_ = s.run_->step(); }
      } count{*this};
      signal = run_->advance(run_->step() + k, report, force);
    }
    if (signal || report.kept())
      report.raise("interrupted at step " + std::to_string(run_->step()) + " of " + run_->name() +
                   " (between batches: the simulation is usable and goes on from there)");
  }

  // A read-only view of the state read back (one copy a step count, shared by the arrays of that step).
  View2 positions() {
    const std::shared_ptr<const Bodies> b = locked_read();
    return xyz_view(b->pos, b);
  }
  Array1 masses_now() { return masses(locked_read()->pos); }
  // The synchronised velocities v_n (one diagnostics pass), not the leapfrog's v_{n-1/2}.
  Array2 velocities() {
    std::vector<Vec3> v;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      v = run_->synchronised("velocities").vel;
    }
    return xyz(std::move(v));
  }
  Array2 accelerations() {
    std::vector<Vec3> a;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      run_->accelerations(a);
    }
    return xyz(std::move(a));
  }
  nb::dict energy() {
    Energy e;
    std::optional<Energy> e0;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      e = run_->synchronised("energy").energy;
      check_energy(e, run_->state(), name_, run_->step());
      e0 = run_->e0();
    }
    nb::dict d;
    d["kinetic"] = e.kinetic, d["potential"] = e.potential, d["total"] = e.total();
    d["initial"] = e0 ? nb::cast(e0->total()) : nb::none();
    const double drift = e0 ? relative_drift(e0->total(), e.total()) : std::nan("");
    if (std::isnan(drift)) {  // E_0 = 0, or none kept: None, and why
      d["relative_drift"] = nb::none();
      d["relative_drift_undefined"] = e0 ? kUndefinedDrift : "undefined: no E_0 (a run started with --no-energy)";
    } else {
      d["relative_drift"] = drift;
    }
    return d;
  }

  void save_checkpoint(const std::string& path) {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    ready();
    run_->checkpoint(path, run_->step());
  }

  void snapshot(const std::string& path, const std::string& format) {
    check_snapshot_format(format);
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    ready();
    run_->snapshot(path, format);
  }

  nb::list forcequad_stages() {
    nb::list out;
    std::vector<QuadStage> stages;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      stages = force_quad_stages(run_->rung());
    }
    for (QuadStage& s : stages) {
      auto* owned = new std::vector<float>(std::move(s.rgba));
      nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
      const std::size_t shape[3] = {static_cast<std::size_t>(s.height), static_cast<std::size_t>(s.width), 3};
      const std::int64_t strides[3] = {4LL * s.width, 4, 1};  // RGBA texels: the alpha left out
      out.append(nb::make_tuple(s.name, nb::ndarray<nb::numpy, float, nb::ndim<3>>(owned->data(), 3, shape, owner, strides)));
    }
    return out;
  }

  void close() {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    if (run_ && gl_) claim_gl_thread("close()");  // its GL objects are deleted in its context
    run_.reset();
    state_.reset();
  }
  bool closed() const { return !run_; }
  const std::string& pipeline() const { return name_; }
  long long steps() const { return step_; }
  double time() const { return static_cast<double>(steps()) * params_.dt; }
  double dt() const { return params_.dt; }
  double softening() const { return params_.softening; }
  // The float64 engine: every pass's, or with a tree the check's.
  std::string where() const {
    if (!run_) return "";
    const Fp64Engine& e = run_->diagnostics().float64_engine();
    return e.name() + " (" + e.where() + ")";
  }
  // How the diagnostics are computed and, with a tree, its check (RunDiagnostics::to_json), as JSON.
  std::string diagnostics() const {
    if (!run_) throw InputError("this simulation is closed");
    return run_->diagnostics().to_json(run_->e0() ? &*run_->e0() : nullptr).dump();
  }

 private:
  // Started (gl:*: on this thread, whose GL context it then uses).
  void open(std::unique_ptr<Run> run, const Run::Setup& how) {
    name_ = run->name();
    params_ = run->params();
    gl_ = rung(name_).family == Family::Gl;
    if (gl_) claim_gl_thread(name_);
    run->start(silent(), how);
    step_ = run->step();
    run_ = std::move(run);
  }
  // Open, and (gl:*) on the thread whose GL context it uses.
  void ready() const {
    if (!run_) throw InputError("this simulation is closed");
    if (gl_) claim_gl_thread(name_);
  }
  std::shared_ptr<const Bodies> locked_read() {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    return read();
  }
  // The state now (read back once per step count), checked for NaN and inf. With m_ held.
  std::shared_ptr<const Bodies> read() {
    ready();
    if (!state_ || state_step_ != run_->step()) {
      auto b = std::make_shared<Bodies>(run_->state());
      check_finite(*b, name_, run_->step());
      state_ = std::move(b);
      state_step_ = run_->step();
    }
    return state_;
  }

  std::string name_;
  Params params_;
  std::unique_ptr<Run> run_;
  std::atomic<long long> step_ = 0;  // the steps taken, read without the lock (steps, time)
  bool gl_ = false;
  std::mutex m_;  // one call at a time: close() waits for a step() in another thread
  std::shared_ptr<const Bodies> state_;  // the state read back at state_step_, shared with arrays
  long long state_step_ = -1;
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
