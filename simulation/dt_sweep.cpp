#include "dt_sweep.hpp"

#include <algorithm>
#include <cmath>

#include "decomposition.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "metrics.hpp"
#include "stepper.hpp"

namespace nbody {

std::vector<double> halvings(double largest, int count) {
  std::vector<double> out;
  for (int k = 0; k < count; ++k) out.push_back(largest / std::ldexp(1.0, k));
  return out;
}

namespace {

long long steps_to(double time, double dt) {
  const double steps = time / dt;
  const long long whole = std::llround(steps);
  if (whole < 1 || std::abs(steps - static_cast<double>(whole)) > 1e-9 * steps)
    throw InputError("the sweep's time " + number_text(time) + " is not a whole number of steps of dt = " +
                     number_text(dt));
  return whole;
}

// x at T: `p` from the initial state staggered for `dt`, stepped T / dt steps.
std::vector<Vec4> positions_at(Pipeline& p, const Config& cfg, double dt, long long steps, Fp64Engine& engine,
                               Reporter& report) {
  Config c = cfg;
  c.dt = dt;
  const Start start = initial_state(c, engine, false, report, nullptr, {p.name()});
  p.load(start.bodies, c.params());
  Stepper stepper({&p}, 0, steps);
  if (const int signal = stepper.run(report, p.name() + " at dt = " + number_text(dt), c.force))
    throw Interrupted(signal);
  Bodies out;
  p.read(out);
  check_finite(out, p.name(), steps);
  return out.pos;
}

// Each float rung's crossing dt: the largest dt at which its distance to the truth exceeds the
// reference's by sqrt(2) (float rounding, not the time step, then dominates). A tree's floor is its
// opening angle, which a time step does not cross: none.
void crossings(DtSweepResult& r, const std::string& reference) {
  const auto own = r.distance.find(reference);
  if (own == r.distance.end()) return;
  for (const auto& name : r.rungs) {
    if (rung(name).fp64_forces || rung(name).method == Method::Tree) continue;
    double crossing = 0;
    for (std::size_t i = 0; i < r.dts.size(); ++i)
      if (r.distance[name][i] > std::sqrt(2.0) * own->second[i] && crossing == 0) crossing = r.dts[i];
    r.crossing_dt[name] = crossing;
  }
}

}  // namespace

DtSweepResult dt_sweep(const DtSweep& s, Fp64Engine& engine, Reporter& report) {
  DtSweepResult r;
  r.time = s.time, r.dts = s.dts;
  r.truth_dt = s.dts.back() / s.truth_factor;
  for (double dt : s.dts) steps_to(s.time, dt);
  const long long truth_steps = steps_to(s.time, r.truth_dt);
  Made made = make_rungs(s.names, s.cfg.pipeline, s.policy, s.reference);
  decompose(made.pointers(), s.cfg.pipeline, s.cfg.params(), s.cfg.n);
  std::unique_ptr<Pipeline> truth = make_named(s.reference, s.cfg.pipeline);
  r.rungs = made.names;
  for (const auto& [name, why] : made.skipped) r.skipped[name] = why;
  // The estimate: the truth's steps and every rung's at every dt; its rates weigh the progress.
  double sweep_steps = 0;
  for (double dt : s.dts) sweep_steps += static_cast<double>(steps_to(s.time, dt));
  std::vector<Work> work{step_work(*truth, static_cast<double>(truth_steps), s.cfg.params(), s.cfg.n),
                         engine_work(engine, static_cast<double>(s.dts.size() + 1), s.cfg.params(), s.cfg.n, "set-up")};
  for (const auto& p : made.pipelines) work.push_back(step_work(*p, sweep_steps, s.cfg.params(), s.cfg.n));
  std::vector<double> rates = check_estimate(work, s.cfg.force);
  if (rates.empty())  // too little to estimate: measured all the same, for the progress (a probe or two each)
    for (const Work& w : work) rates.push_back(w.rate(w.interactions));
  if (s.on_made) s.on_made();
  r.truth = s.reference + " at dt = " + number_text(r.truth_dt);
  // Many short runs, each too short for its own progress: the sweep's, each run counted as it ends,
  // in the milliseconds its steps take at the rate the estimate measured (a halved dt's run takes
  // twice the steps; gl:forcequad's step costs many of cpu32's), or in steps where nothing was measured.
  const bool timed = std::all_of(rates.begin(), rates.end(), [](double r) { return r > 0; }) && !rates.empty();
  const auto units = [&](std::size_t item, double steps, double steps_in_item) {  // item: work's index
    if (!timed) return static_cast<long long>(steps);
    return std::max(1LL, std::llround(work[item].interactions * (steps / steps_in_item) / rates[item] * 1e3));
  };
  long long total = units(0, static_cast<double>(truth_steps), static_cast<double>(truth_steps));
  for (double dt : s.dts)
    for (std::size_t k = 0; k < made.pipelines.size(); ++k)
      total += units(2 + k, static_cast<double>(steps_to(s.time, dt)), sweep_steps);
  const std::unique_ptr<Task> sweep = report.begin(timed ? "dt-sweep (the runs, in ms of their steps at the measured rates)"
                                                         : "dt-sweep (steps of every run)",
                                                   total);
  long long done = units(0, static_cast<double>(truth_steps), static_cast<double>(truth_steps));
  const std::vector<Vec4> x_true = positions_at(*truth, s.cfg, r.truth_dt, truth_steps, engine, report);
  sweep->update(done);
  const auto ref = std::find(made.names.begin(), made.names.end(), s.reference);
  for (double dt : s.dts) {
    std::vector<std::vector<Vec4>> x(made.pipelines.size());
    for (std::size_t k = 0; k < made.pipelines.size(); ++k) {
      x[k] = positions_at(*made.pipelines[k], s.cfg, dt, steps_to(s.time, dt), engine, report);
      r.distance[made.names[k]].push_back(position_distance(x[k], x_true).max);
      sweep->update(done += units(2 + k, static_cast<double>(steps_to(s.time, dt)), sweep_steps));
    }
    if (ref == made.names.end()) continue;
    const std::vector<Vec4>& x_ref = x[static_cast<std::size_t>(ref - made.names.begin())];
    for (std::size_t k = 0; k < made.pipelines.size(); ++k) {
      const Rung& of = rung(made.names[k]);
      if (of.fp64_forces) continue;
      // The same dt on both sides: what is left is the rung's own force error, a tree's opening angle.
      auto& own = of.method == Method::Tree ? r.opening_angle : r.rounding;
      own[made.names[k]].push_back(position_distance(x[k], x_ref).max);
    }
  }
  crossings(r, s.reference);
  return r;
}

}  // namespace nbody
