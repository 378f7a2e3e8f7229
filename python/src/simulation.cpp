// nbody._core.Simulation: one rung stepping one state, as `nbody run` does, with the state read
// back as NumPy arrays. Its checkpoints are `nbody run`'s (either resumes the other's).
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <cmath>
#include <mutex>
#include <optional>
#include <thread>

#include "checkpoint.hpp"
#include "core.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "io.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "setup.hpp"
#include "snapshots.hpp"
#include "stepper.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif

namespace nbody::python {

namespace {

class Simulation {
 public:
  // From synchronised velocities: staggered by one pass of the diagnostics engine (float64 all
  // pairs, or the tree: `diagnostics`, diagnostics.hpp), which also gives E_0; a tree is checked on it.
  Simulation(const std::string& pipeline, const In2& x, const In2& v, const In1& m, double dt, double softening,
             const nb::dict& options, const std::string& ic, const std::string& diagnostics)
      : name_(canonical_name(pipeline)), options_(options_from(options)), params_{dt, softening}, ic_(ic) {
    Bodies b = bodies_from(x, v, m);
    check(b);
    nb::gil_scoped_release release;
    open(diagnostics, b.size());
    Evaluation pass;
    e0_ = stagger(b, params_, *diag_->engine, true, diag_->tree() ? &pass : nullptr);
    check_finite(b, "the initial state", 0);
    check_energy(e0_, b, "the initial state", 0);
    diag_->make_check(b.pos, params_.eps2(), &pass);  // the stagger moved no body
    p_->load(b, params_);
  }

  // `nbody run`'s checkpoint (or this class's): the state exactly as the rung held it.
  explicit Simulation(const std::string& path) {
    Checkpoint c = read_checkpoint(path);
    std::string diagnostics;
    const std::string where = "checkpoint '" + path + "'";
    nlohmann::json m;
    try {
      m = nlohmann::json::parse(c.meta);
      name_ = canonical_name(m.at("pipeline").get<std::string>());
      options_ = options_from_json(m.at("options"), where);
      params_ = {m.at("dt").get<double>(), m.at("softening").get<double>()};
      step_ = m.at("step").get<long long>();
      ic_ = m.at("ic").get<std::string>();
      e0_known_ = m.at("energy").is_object();  // a --no-energy run's has none
      if (e0_known_) e0_ = {m["energy"].at("kinetic"), m["energy"].at("potential")};
      // Resolved when written (all-pairs | tree); a checkpoint without it was all pairs.
      diagnostics = m.contains("diagnostics") ? m["diagnostics"].get<std::string>() : "all-pairs";
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where + ": block META is not a run checkpoint's (" + e.what() + ")");
    }
    if (c.bits != state_bits(name_))
      throw InputError(where + " holds " + std::to_string(c.bits) + "-bit state, but " + name_ + "'s is " +
                       std::to_string(state_bits(name_)) + "-bit");
    if (diagnostics != "all-pairs" && diagnostics != "tree")
      throw InputError(where + ": block META's diagnostics '" + diagnostics + "' is neither all-pairs nor tree");
    nb::gil_scoped_release release;
    open(diagnostics, c.state.size());
    diag_->make_check(c.state.pos, params_.eps2(), nullptr);  // no stagger to read: a pass of its own
    p_->load(c.state, params_);
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
      Stepper stepper({p_.get()}, step_, step_ + k);
      struct Done {  // the steps taken count, and the state read back before them is gone, however it ends
        Simulation& s;
        Stepper& st;
        ~Done() { s.step_ = st.done(), s.state_.reset(); }
      } done{*this, stepper};
      signal = stepper.run(report, name_, force);
    }
    if (signal || report.kept())
      report.raise("interrupted at step " + std::to_string(step_) + " of " + name_ +
                   " (between batches: the simulation is usable and goes on from there)");
  }

  // A read-only view of the state read back: no copy beyond the read-back itself.
  View2 positions() {
    const std::shared_ptr<const Bodies> b = locked_read();
    return xyz_view(b->pos, b);
  }
  Array1 masses_now() { return masses(locked_read()->pos); }
  // The synchronised velocities v_n (one float64 pass), not the leapfrog's v_{n-1/2}.
  Array2 velocities() {
    std::vector<Vec3> v;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      v = synchronise(*read(), params_, *diag_->engine, false).vel;
    }
    return xyz(std::move(v));
  }
  Array2 accelerations() {
    std::vector<Vec3> a;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      p_->accelerations(a);
    }
    return xyz(std::move(a));
  }
  nb::dict energy() {
    Energy e;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      const std::shared_ptr<const Bodies> b = read();
      e = synchronise(*b, params_, *diag_->engine, true).energy;
      check_energy(e, *b, name_, step_);
    }
    nb::dict d;
    d["kinetic"] = e.kinetic, d["potential"] = e.potential, d["total"] = e.total();
    d["initial"] = e0_.total();
    const double drift = relative_drift(e0_.total(), e.total());
    if (std::isnan(drift)) {  // E_0 = 0: None, and why
      d["relative_drift"] = nb::none();
      d["relative_drift_undefined"] = kUndefinedDrift;
    } else {
      d["relative_drift"] = drift;
    }
    return d;
  }

  void save_checkpoint(const std::string& path) {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    Checkpoint c;
    c.state = *read();
    c.bits = state_bits(name_);
    c.meta = nlohmann::json{{"format", "nbody run checkpoint"},
                            {"pipeline", name_},
                            {"options", options_json(options_)},
                            {"n", c.state.size()},
                            {"step", step_},
                            {"last_step", step_},
                            {"dt", params_.dt},
                            {"softening", params_.softening},
                            {"ic", ic_},
                            {"seed", 0},
                            {"subset", "first"},
                            {"energy_every", 0},
                            {"no_energy", false},
                            {"diagnostics", diagnostics_name(diag_->method)},
                            {"energy", {{"kinetic", e0_.kinetic}, {"potential", e0_.potential}}},
                            {"energy_samples", nlohmann::json::array({{{"step", 0}, {"total", e0_.total()}}})}}
                 .dump();
    write_checkpoint(path, c);
  }

  void snapshot(const std::string& path, const std::string& format) {
    check_snapshot_format(format);
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    Bodies b = *read();
    const Synchronised s = synchronise(b, params_, *diag_->engine, true);
    b.vel = s.vel;
    const double time = static_cast<double>(step_) * params_.dt;
    Config c;
    c.dt = params_.dt, c.softening = params_.softening, c.ic = ic_, c.seed = 0, c.pipeline = options_;
    Hdf5Attributes ours = snapshot_attributes(c, name_, b.size(), step_);
    ours.emplace_back("diagnostics", std::string(diagnostics_name(diag_->method)));
    ours.emplace_back("energy", s.energy.total());
    write_snapshot(path, format, b, time, params_.softening, ours);
  }

  nb::list forcequad_stages() {
    nb::list out;
#ifdef NBODY_HAVE_GL
    std::vector<gl::Stage> stages;
    {
      nb::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(m_);
      ready();
      stages = gl::forcequad_stages(*p_);
    }
    for (gl::Stage& s : stages) {
      auto* owned = new std::vector<float>(std::move(s.rgba));
      nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
      const std::size_t shape[3] = {static_cast<std::size_t>(s.height), static_cast<std::size_t>(s.width), 3};
      const std::int64_t strides[3] = {4LL * s.width, 4, 1};  // RGBA texels: the alpha left out
      out.append(nb::make_tuple(s.name, nb::ndarray<nb::numpy, float, nb::ndim<3>>(owned->data(), 3, shape, owner, strides)));
    }
#else
    throw Unavailable("this build has no GL pipeline");
#endif
    return out;
  }

  void close() {
    nb::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(m_);
    if (p_ && gl_) claim_gl_thread("close()");  // its GL objects are deleted in its context
    p_.reset();
    diag_.reset();
    state_.reset();
  }
  bool closed() const { return !p_; }
  const std::string& pipeline() const { return name_; }
  long long steps() const { return step_; }
  double time() const { return static_cast<double>(step_) * params_.dt; }
  double dt() const { return params_.dt; }
  double softening() const { return params_.softening; }
  // The float64 engine: every pass's, or with a tree the check's.
  std::string where() const {
    if (!diag_) return "";
    const Fp64Engine& e = diag_->float64_engine();
    return e.name() + " (" + e.where() + ")";
  }
  // How the diagnostics are computed and, with a tree, its check (RunDiagnostics::to_json), as JSON.
  std::string diagnostics() const {
    if (!diag_) throw InputError("this simulation is closed");
    return diag_->to_json(e0_known_ ? &e0_ : nullptr).dump();
  }

 private:
  void check(const Bodies& b) const {
    Config c;
    c.n = static_cast<long long>(b.size());
    c.dt = params_.dt;
    c.softening = params_.softening;
    c.steps = 0;
    c.pipeline = options_;
    check_config(c, 1);
    check_pipeline_options({name_}, options_);
    check_softening({name_}, params_.softening);
    validate_bodies(b, "the bodies");
  }
  void open(const std::string& diagnostics, std::size_t n) {
    gl_ = rung(name_).family == Family::Gl;
    if (gl_) claim_gl_thread(name_);
    p_ = make_named(name_, options_);
    diag_.emplace(diagnostics, name_, static_cast<long long>(n), options_);
  }
  // Open, and (gl:*) on the thread whose GL context it uses.
  void ready() const {
    if (!p_) throw InputError("this simulation is closed");
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
    if (!state_) {
      auto b = std::make_shared<Bodies>();
      p_->read(*b);
      check_finite(*b, name_, step_);
      state_ = std::move(b);
    }
    return state_;
  }

  std::string name_;
  PipelineOptions options_;
  Params params_;
  std::string ic_;
  std::optional<RunDiagnostics> diag_;  // the engine of every pass and, with a tree, its check
  std::unique_ptr<Pipeline> p_;
  long long step_ = 0;
  Energy e0_;
  bool e0_known_ = true;
  bool gl_ = false;
  std::mutex m_;  // one call at a time: close() waits for a step() in another thread
  std::shared_ptr<const Bodies> state_;
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
