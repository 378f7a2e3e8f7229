#include "comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "decomposition.hpp"
#include "estimate.hpp"
#include "options.hpp"
#include "initial_conditions.hpp"
#include "leapfrog.hpp"
#include "reference.hpp"
#include "stepper.hpp"
#include "world.hpp"

namespace nbody {

std::string pair_name(const PairRecord& r) { return r.a + "|" + r.b; }

std::vector<long long> compared_steps(long long steps, long long every, long long also, long long energy_every) {
  std::vector<long long> out;
  for (long long s = every; s < steps; s += every) out.push_back(s);
  for (long long s = energy_every; energy_every > 0 && s < steps; s += energy_every) out.push_back(s);
  if (also > 0) out.push_back(also);
  if (steps > 0) out.push_back(steps);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Checks a reference other than cpu64 against cpu64 (accelerations at validate_n bodies) and
// returns the rms relative error; throws above kReferenceTolerance.
double validate_reference(Pipeline& ref, const Comparison& c) {
  const Params params = c.cfg.params();
  Bodies small = plummer(static_cast<std::size_t>(std::min(c.cfg.n, c.validate_n)), c.cfg.seed + 7);
  std::vector<Vec3> want, got;
  accelerations_fp64(small.pos, params.eps2(), want);
  ref.load(small, params);
  ref.accelerations(got);
  const double e = accel_error(got, want).rms_rel;
  if (!(e <= kReferenceTolerance)) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s %s: acceleration error against cpu64 at %zu bodies "
                  "is %.3e rms relative; a reference must be within %.0e", option("reference").c_str(), ref.name().c_str(),
                  small.size(), e, kReferenceTolerance);
    throw std::runtime_error(buf);
  }
  return e;
}

// Refuses what cannot finish before an hour: every size of the preset at once.
void estimate(const Comparison& c, const Made& made, Fp64Engine& engine) {
  const Params params = c.cfg.params();
  double n2 = 0;
  for (long long n : c.sizes.empty() ? std::vector<long long>{c.cfg.n} : c.sizes)
    n2 += static_cast<double>(n) * static_cast<double>(n);
  const double scale = n2 / (static_cast<double>(c.cfg.n) * static_cast<double>(c.cfg.n));
  const double steps = static_cast<double>(c.cfg.steps);
  const double energy_points = 1 + (c.energy_every > 0 ? steps / static_cast<double>(c.energy_every) : 0);
  std::vector<Work> work{
      engine_work(engine, scale * (1 + energy_points * static_cast<double>(made.pipelines.size())), params, c.cfg.n)};
  for (const auto& p : made.pipelines) work.push_back(step_work(*p, scale * (steps + 1), params, c.cfg.n));
  std::unique_ptr<Fp64Engine> cpu64;
  if (c.explain) {  // cpu64 and the float32 CPU variants step alongside, on this host
    cpu64 = make_cpu64_engine();
    Work variants = engine_work(*cpu64, 16 * scale * steps, params, c.cfg.n);  // 9 recipes, cpu64, /2, /4
    variants.what = "--explain (CPU variants, cpu64 at dt, dt/2, dt/4)";
    work.push_back(std::move(variants));
    for (std::size_t k = 0; k < made.pipelines.size(); ++k)  // and each tree rung again, beside them
      if (rung(made.names[k]).method == Method::Tree) {
        Work again = step_work(*made.pipelines[k], scale * (steps + 1), params, c.cfg.n);
        again.what = "--explain: " + again.what + " again";
        work.push_back(std::move(again));
      }
  }
  check_estimate(work, c.cfg.force);
}

Conserved conserved(const Bodies& b, const Params& p, Fp64Engine& engine, Reporter& report) {
  const Synchronised s = synchronise_reported(b, p, engine, true, "energy", report);
  return {s.energy, linear_momentum(b.pos, s.vel), angular_momentum(b.pos, s.vel)};
}

// The record of one compared step: every pair's distance, and the energies where due.
StepRecord record(const Comparison& c, const std::vector<std::string>& names, std::vector<Pipeline*>& ps,
                  long long step, Fp64Engine& engine, Reporter& report, CompareResult& r) {
  std::vector<Bodies> state(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps[i]->read(state[i]);
    check_finite(state[i], names[i], step);
  }
  StepRecord rec{step, {}, {}};
  for (const Bodies& b : state)
    for (const Vec4& x : b.pos) rec.extent = std::max({rec.extent, std::fabs(x.x), std::fabs(x.y), std::fabs(x.z)});
  for (std::size_t i = 0; i < ps.size(); ++i)
    for (std::size_t j = i + 1; j < ps.size(); ++j)
      rec.pairs.push_back({names[i], names[j], position_distance(state[i].pos, state[j].pos)});
  const bool last = step == c.cfg.steps;
  if (last || (c.energy_every > 0 && step % c.energy_every == 0))
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const Conserved e = conserved(state[i], c.cfg.params(), engine, report);
      check_energy(e.e, state[i], names[i], step);
      rec.energy[names[i]] = e.e.total();
      if (last) r.final_[names[i]] = e;
    }
  return rec;
}

}  // namespace

void check_compare_options(long long every, long long energy_every, long long validate_n) {
  if (every < 1) throw InputError(option("every") + " " + std::to_string(every) + ": must be >= 1");
  if (energy_every < 0) throw InputError(option("energy_every") + " " + std::to_string(energy_every) + ": must be >= 0");
  if (validate_n < 1) throw InputError(option("validate_n") + " " + std::to_string(validate_n) + ": must be >= 1");
}

CompareResult compare(const Comparison& c, Fp64Engine& engine, Reporter& report) {
  const Params params = c.cfg.params();
  const std::string& reference = c.names.front();
  Made made = make_rungs(c.names, c.cfg.pipeline, c.policy, reference, [&](const Made& m) {
    if (c.need_pair && m.pipelines.size() < 2)
      throw std::runtime_error("--fail-above: nothing to check: only " + reference + " can run (" +
                               std::to_string(m.skipped.size()) + " skipped), so no pair with it "
                               "would be compared; name the pipelines to test");
  });
  CompareResult r;
  r.pipelines = made.names;
  for (const auto& [name, why] : made.skipped) r.skipped[name] = why;
  std::vector<Pipeline*> ps = made.pointers();
  decompose(ps, c.cfg.pipeline, params, c.cfg.n);
  if (rung(reference).family != Family::Cpu) r.reference_error = validate_reference(*ps[0], c);
  if (!c.estimated) estimate(c, made, engine);
  if (c.on_made) c.on_made();

  // E_0 from the stagger's own pass
  const Start start = initial_state(c.cfg, engine, true, report, nullptr, r.pipelines);
  const Bodies& s0 = start.bodies;
  r.n = s0.size();
  for (Pipeline* p : ps) p->load(s0, params);
  std::vector<Vec3> ref, acc;
  ps[0]->accelerations(ref);
  for (std::size_t k = 1; k < ps.size(); ++k) {
    ps[k]->accelerations(acc);
    r.accel[r.pipelines[k]] = accel_error(acc, ref);
  }
  const std::vector<Vec3> v0(start.vel0.begin(), start.vel0.end());
  const Conserved c0{start.energy, linear_momentum(s0.pos, v0), angular_momentum(s0.pos, v0)};
  for (const auto& name : r.pipelines) r.initial[name] = c0;

  Stepper stepper(ps, 0, c.cfg.steps);
  stepper.at(c.stops, [&](long long step) { r.steps.push_back(record(c, r.pipelines, ps, step, engine, report, r)); });
  if (const int signal = stepper.run(report, "compare", c.cfg.force)) throw Interrupted(signal);
  if (c.cfg.steps == 0) r.final_ = r.initial;
  return r;
}

std::vector<Fig9Row> fig9_rows(const CompareResult& r, const std::string& reference) {
  std::vector<Fig9Row> rows;
  for (std::size_t k = 0; k < (r.steps.empty() ? 0 : r.steps[0].pairs.size()); ++k) {
    const PairRecord& first = r.steps[0].pairs[k];
    if (first.a != reference && first.b != reference) continue;
    Fig9Row row{pair_name(first)};
    for (const auto& s : r.steps) {
      if (s.step <= 15) row.max15 = std::max(row.max15, s.pairs[k].d.max);
      if (s.step <= 100) row.max100 = std::max(row.max100, s.pairs[k].d.max);
      row.max_run = std::max(row.max_run, s.pairs[k].d.max);
      row.extent = std::max(row.extent, s.extent);
    }
    row.at_end = r.steps.back().pairs[k].d.max;
    rows.push_back(row);
  }
  return rows;
}

std::vector<AgainstRow> repeat_run(const Config& cfg, const std::vector<std::string>& names, const Bodies& stored,
                                   Fp64Engine& engine, Reporter& report, const std::function<void()>& started,
                                   const std::function<void(const AgainstRow&)>& row) {
  const Made made = make_rungs(names, cfg.pipeline, IfUnavailable::Fail);
  const Params params = cfg.params();
  decompose(made.pointers(), cfg.pipeline, params, cfg.n);
  std::vector<Work> work{engine_work(engine, 1, params, cfg.n, "stagger")};
  for (const auto& p : made.pipelines) work.push_back(step_work(*p, static_cast<double>(cfg.steps), params, cfg.n));
  check_estimate(work, cfg.force);
  if (started) started();
  const Start start = initial_state(cfg, engine, false, report, nullptr, names);
  std::vector<AgainstRow> rows;
  for (std::size_t k = 0; k < made.pipelines.size(); ++k) {
    Pipeline& p = *made.pipelines[k];
    p.load(start.bodies, params);
    Stepper stepper({&p}, 0, cfg.steps);
    if (const int signal = stepper.run(report, "compare --against: " + names[k], cfg.force)) throw Interrupted(signal);
    Bodies state;
    p.read(state);
    check_finite(state, names[k], cfg.steps);
    rows.push_back({names[k], position_distance(state.pos, stored.pos)});
    if (row) row(rows.back());
  }
  return rows;
}

Fig9Judgement fig9_judgement(const Fig9Row& row) {
  if (row.meets_goal()) return Fig9Judgement::Goal;
  if (row.meets_paper()) return Fig9Judgement::Paper;
  return row.at_float32_resolution() ? Fig9Judgement::Rounding : Fig9Judgement::Beyond;
}

std::string fig9_words(const Fig9Row& row) {
  switch (fig9_judgement(row)) {
    case Fig9Judgement::Goal: return "meets the goal and Fig. 9's bound";
    case Fig9Judgement::Paper: return "within Fig. 9's bound, not the goal";
    case Fig9Judgement::Rounding: return "float32 rounding of the coordinates, not parting";
    case Fig9Judgement::Beyond: break;
  }
  return "beyond Fig. 9's bound";
}

}  // namespace nbody
