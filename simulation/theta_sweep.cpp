#include "theta_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "decomposition.hpp"
#include "bench.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "world.hpp"

namespace nbody {

double ThetaSweepResult::speedup(const std::string& t, std::size_t i, const std::string& all_pairs) const {
  const double mine = tree.at(t).at(i).ms, theirs = baseline.at(all_pairs).ms;
  return mine > 0 ? theirs / mine : 0;
}

namespace {

std::vector<std::string> tree_rungs() {
  std::vector<std::string> out;
  for (const Rung& r : rungs())
    if (r.method == Method::Tree) out.push_back(r.name);
  return out;
}

bool is_tree(const std::string& name) { return rung(name).method == Method::Tree; }

}  // namespace

std::string theta_sweep_label(const std::string& tree, const std::string& multipole) {
  return multipole == defaults::multipole ? tree : tree + "+" + multipole;
}

std::map<std::string, int> theta_sweep_leaf_sizes(const ThetaSweep& s) {
  std::map<std::string, int> out;
  // Only rungs that run here: a header naming cuda:tree's leaf size where there is no CUDA says
  // something about a run that does not happen.
  for (const std::string& name : s.names)
    if (rung(name).method == Method::Tree && unavailable_reason(name, s.cfg.pipeline).empty())
      out[name] = resolve_options(rung(name), s.cfg.pipeline).leaf_size;
  return out;
}

std::string theta_sweep_leaf_sizes_text(const ThetaSweep& s) {
  std::string text;
  for (const auto& [name, b] : theta_sweep_leaf_sizes(s))
    text += (text.empty() ? "" : ", ") + std::to_string(b) + " (" + name + ")";
  return text;
}

std::vector<std::string> theta_sweep_rungs() {
  std::vector<Family> with_tree;
  for (const Rung& r : rungs())
    if (r.method == Method::Tree) with_tree.push_back(r.family);
  std::vector<std::string> trees, all_pairs;
  for (const Rung& r : rungs()) {
    const bool family = std::find(with_tree.begin(), with_tree.end(), r.family) != with_tree.end();
    if (r.method == Method::Tree) trees.push_back(r.name);
    else if (family && r.ladder.on && r.state_bits == 32 && !r.fp64_forces) all_pairs.push_back(r.name);
  }
  all_pairs.insert(all_pairs.end(), trees.begin(), trees.end());
  return all_pairs;
}

namespace {

// Median, 99%, 99.9% and largest of |a_i - ref_k| / |ref_k| over the sampled bodies (NaN: infinite).
void errors(const std::vector<Vec3>& a, const std::vector<Vec3>& ref, const std::vector<std::size_t>& idx,
            SweepPoint& p) {
  std::vector<double> rel(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const Vec3& x = a[idx[k]];
    const double d = norm({x.x - ref[k].x, x.y - ref[k].y, x.z - ref[k].z}), r = norm(ref[k]);
    const double e = r > 0 ? d / r : d;
    rel[k] = std::isnan(e) ? INFINITY : e;
  }
  std::sort(rel.begin(), rel.end());
  if (rel.empty()) return;
  const std::size_t m = rel.size();
  p.median = rel[m / 2], p.p99 = rel[m * 99 / 100], p.p999 = rel[m * 999 / 1000], p.max = rel.back();
}

// The sweep's progress: one unit per pass (an acceleration pass, the warm-up, each timed step).
struct Units {
  Task& task;
  Reporter& report;
  long long done = 0;
  void next() {
    task.update(++done);
    if (const int signal = static_cast<int>(World::max(report.interrupted()))) throw Interrupted(signal);
  }
};

// One point: `p` loaded with `b`, its accelerations against the reference, then timed.
SweepPoint measure(Pipeline& p, const Bodies& b, const Params& params, const std::vector<Vec3>& ref,
                   const std::vector<std::size_t>& idx, long long steps, Units& units) {
  SweepPoint out;
  p.load(b, params);
  std::vector<Vec3> a;
  p.accelerations(a);
  errors(a, ref, idx, out);
  double computed = p.computed_interactions();
  if (Exchange* ex = World::exchange(); ex && computed > 0) {
    double sum = 0;
    for (const double v : ex->all(computed)) sum += v;
    computed = sum;
  }
  out.per_body = computed > 0 ? computed / static_cast<double>(b.size()) : static_cast<double>(b.size());
  units.next();
  time_steps(p, 1);  // warm-up: allocation, compile, clocks
  units.next();
  std::vector<double> ms;
  for (long long k = 0; k < steps; ++k) {
    ms.push_back(time_steps(p, 1));
    units.next();
  }
  std::sort(ms.begin(), ms.end());
  out.ms = ms[ms.size() / 2];
  return out;
}

// A pipeline of `name` with `o`, distributed and balanced as the bench makes its rows.
std::unique_ptr<Pipeline> made(const std::string& name, const PipelineOptions& o, const Params& params, long long n) {
  auto p = make_pipeline(name, o);
  decompose(*p, o, params, n);
  return p;
}

// Refuses a sweep that could not finish within the hour: each tree's points timed at theta = 0 (its
// slowest: all pairs), each all-pairs rung's one, and the float64 check of the sample.
void estimate(const ThetaSweep& s, const Made& m, Fp64Engine& engine, std::size_t sampled) {
  const Params params = s.cfg.params();
  const double passes = static_cast<double>(s.steps + 2);
  std::vector<Work> work{engine_work(engine, static_cast<double>(sampled) / static_cast<double>(s.cfg.n), params,
                                     s.cfg.n, "forces of the sample")};
  std::vector<std::unique_ptr<Pipeline>> slowest;  // kept alive: a Work measures its pipeline later
  for (std::size_t k = 0; k < m.pipelines.size(); ++k) {
    if (!is_tree(m.names[k])) {
      work.push_back(step_work(*m.pipelines[k], passes, params, s.cfg.n));
      continue;
    }
    PipelineOptions o = s.cfg.pipeline;
    o.theta = 0;
    slowest.push_back(make_pipeline(m.names[k], o));
    const double points = static_cast<double>(s.thetas.size() * s.multipoles.size());
    work.push_back(step_work(*slowest.back(), passes * points, params, s.cfg.n));
  }
  check_estimate(work, s.cfg.force);
}

}  // namespace

void check_theta_sweep_rungs(const std::vector<std::string>& names) {
  if (std::none_of(names.begin(), names.end(), is_tree))
    throw InputError("--preset theta-sweep sweeps a tree rung's theta, and " + option("pipelines") +
                     " names none (the tree rungs: " + joined_names(tree_rungs(), ", ") + ")");
}

ThetaSweepResult theta_sweep(const ThetaSweep& s, Fp64Engine& engine, Reporter& report) {
  check_theta_sweep_rungs(s.names);
  ThetaSweepResult r;
  r.thetas = s.thetas;
  r.engine = engine.name();
  const Params params = s.cfg.params();
  const Made m = make_rungs(s.names, s.cfg.pipeline, s.policy);
  for (const auto& [name, why] : m.skipped) r.skipped[name] = why;
  if (std::none_of(m.names.begin(), m.names.end(), is_tree))
    throw std::runtime_error("--preset theta-sweep: no tree rung can run here (" + joined_names(tree_rungs(), ", ") + ")");
  decompose(m.pointers(), s.cfg.pipeline, params, s.cfg.n);
  const Bodies bodies = initial_bodies(s.cfg);
  for (const std::string& name : m.names) check_state_fits(bodies, name, option("ic") + " " + s.cfg.ic);
  r.n = bodies.size();
  const std::vector<std::size_t> idx = sampled_bodies(r.n, static_cast<std::size_t>(s.sample));
  r.sampled = idx.size();
  // One task from here to the end, so that its lines (every few seconds) cover the estimate and the
  // float64 pass too: two units for those, then each point's passes.
  long long points = 0;
  for (const auto& name : m.names)
    points += is_tree(name) ? static_cast<long long>(s.thetas.size() * s.multipoles.size()) : 1;
  const std::unique_ptr<Task> task = report.begin("theta-sweep (passes)", 2 + points * (s.steps + 2));
  Units units{*task, report};
  estimate(s, m, engine, r.sampled);
  if (s.on_made) s.on_made();
  units.next();
  std::vector<Vec3> ref;
  sampled_reference(bodies.pos, idx, params.eps2(), engine, &ref, nullptr);
  units.next();
  for (std::size_t k = 0; k < m.pipelines.size(); ++k) {
    const std::string& name = m.names[k];
    if (is_tree(name)) continue;
    r.all_pairs.push_back(name);
    r.baseline[name] = measure(*m.pipelines[k], bodies, params, ref, idx, s.steps, units);
    r.timer[name] = World::size() > 1 ? "wall clock (slowest rank)" : m.pipelines[k]->timer();
  }
  for (const auto& name : m.names) {
    if (!is_tree(name)) continue;
    for (const std::string& far : s.multipoles) {
      const std::string label = theta_sweep_label(name, far);
      r.trees.push_back(label);
      for (const double theta : s.thetas) {
        PipelineOptions o = s.cfg.pipeline;
        o.theta = theta;
        o.multipole = far;
        const auto p = made(name, o, params, s.cfg.n);
        r.tree[label].push_back(measure(*p, bodies, params, ref, idx, s.steps, units));
        r.tree[label].back().theta = theta;
        r.timer[label] = World::size() > 1 ? "wall clock (slowest rank)" : p->timer();
      }
    }
  }
  return r;
}

}  // namespace nbody
