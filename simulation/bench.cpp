#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "decomposition.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "estimate.hpp"
#include "initial_conditions.hpp"
#include "world.hpp"

namespace nbody {

namespace {

// ms per step over `reps` timed runs after one warm-up step: the median, the fastest and the
// slowest. `all_ranks`: every rank runs `p` (distributed or one process); otherwise this rank
// runs it alone.
struct Timing {
  double median = 0, min = 0, max = 0;
};
// `task`, where given, counts the warm-up step and each repetition's steps as done (after `before`).
Timing ms_per_step(Pipeline& p, long long reps, long long steps, Reporter& report, bool all_ranks = true,
                   Task* task = nullptr, long long before = 0, const std::function<void()>& warmed = {}) {
  time_steps(p, 1, all_ranks);  // warm-up: shader compile, allocation, clocks
  if (task) task->update(before + 1);  // the warm-up: one step
  if (warmed) warmed();
  std::vector<double> ms;
  for (long long r = 0; r < reps; ++r) {
    // every rank asks alike (all_ranks); rank 0 alone does not ask the others
    if (const int signal = all_ranks ? static_cast<int>(World::max(report.interrupted())) : 0) throw Interrupted(signal);
    ms.push_back(time_steps(p, static_cast<int>(steps), all_ranks) / static_cast<double>(steps));
    if (task) task->update(before + 1 + (r + 1) * steps);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// Validates the exact launch plan that is timed: the pipeline holds the timed bodies (same N, so
// the same tiles, j split and chunks), its accelerations are checked element-wise against the
// float64 engine on `validate_n` rows. Returns "" or the first mismatches.
std::string validate(Pipeline& p, const Bodies& bodies, const Params& params, Fp64Engine& engine, const Tolerance& tol,
                     long long validate_n, BenchRow& row) {
  std::vector<Vec3> acc, ref(bodies.size());
  p.accelerations(acc);
  double ref2 = 0, err2 = 0;
  std::size_t count = 0;
  const auto runs = checked_rows(bodies.size(), static_cast<std::size_t>(validate_n));
  row.checked_runs = runs;
  for (const auto& [b, e] : runs) {
    engine.evaluate_rows(bodies.pos, params.eps2(), b, e, &ref, nullptr);
    for (std::size_t i = b; i < e; ++i) ref2 += norm(ref[i]) * norm(ref[i]), ++count;
  }
  const double scale = count > 0 ? std::sqrt(ref2 / static_cast<double>(count)) : 1.0;
  std::string first;
  int mismatches = 0;
  row.worst = 0;
  for (const auto& [b, e] : runs)
    for (std::size_t i = b; i < e; ++i) {
      const Vec3 d{acc[i].x - ref[i].x, acc[i].y - ref[i].y, acc[i].z - ref[i].z};
      const double dn = norm(d), allowed = tol.atol * scale + tol.rtol * norm(ref[i]);
      err2 += dn * dn;
      row.worst = std::max(row.worst, std::isnan(dn) ? INFINITY : dn / allowed);
      if (!(dn <= allowed) && ++mismatches <= 3) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%sbody %zu: got (%.7g, %.7g, %.7g) want (%.7g, %.7g, %.7g)",
                      first.empty() ? "" : "; ", i, acc[i].x, acc[i].y, acc[i].z, ref[i].x, ref[i].y, ref[i].z);
        first += buf;
      }
    }
  row.checked = static_cast<long long>(count);
  row.err = std::sqrt(err2 / std::max(ref2, 1e-300));  // rms relative error over the checked rows
  if (mismatches == 0) return "";
  return std::to_string(mismatches) + " of " + std::to_string(count) + " checked bodies outside " +
         std::to_string(tol.atol) + " x rms|a| + " + std::to_string(tol.rtol) + " x |a|: " + first;
}

}  // namespace

// Rank 0's time alone gives the one-rank figure of a distributed bench, so that its speed-up
// compares like with like.
double time_steps(Pipeline& p, int steps, bool all_ranks) {
  if (World::size() == 1) return p.timed_steps(steps);
  if (!all_ranks) {
    const auto t0 = std::chrono::steady_clock::now();
    p.step(steps);
    p.finish();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  World::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  p.step(steps);
  p.finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return World::max(ms);
}

std::vector<std::pair<std::size_t, std::size_t>> checked_rows(std::size_t n, std::size_t m) {
  if (m >= n) return {{0, n}};
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  const std::size_t k = std::min<std::size_t>(4, m);
  for (std::size_t r = 0; r < k; ++r) {
    const std::size_t len = m / k + (r < m % k ? 1 : 0);
    const std::size_t begin = r + 1 == k ? n - len : (n - len) * r / (k - 1 > 0 ? k - 1 : 1);
    const std::size_t from = runs.empty() ? begin : std::max(begin, runs.back().second);
    runs.push_back({from, std::min(n, from + len)});
  }
  return runs;
}

Made plan_bench(const BenchSpec& spec, const std::vector<std::string>& names, const std::vector<long long>& sizes,
                IfUnavailable policy, Fp64Engine& engine) {
  Made made = make_rungs(names, spec.cfg.pipeline, policy);
  const Params params = spec.cfg.params();
  const long long largest = *std::max_element(sizes.begin(), sizes.end());
  PipelineOptions equal = spec.cfg.pipeline;  // the estimate's probes: equal blocks, no rates measured
  equal.balance = "equal";
  decompose(made.pointers(), equal, params, largest);
  double n2 = 0, rows = 0;  // rows: the float64 check of validate_n rows, before and after the timed steps
  for (long long n : sizes) {
    n2 += static_cast<double>(n) * static_cast<double>(n);
    rows += static_cast<double>(std::min(n, spec.validate_n)) * static_cast<double>(n);
  }
  const double l2 = static_cast<double>(largest) * static_cast<double>(largest);
  // The timed steps and their warm-up; distributed, also rank 0 alone (P times a rank's step) and,
  // for blocks that are not equal, equal blocks.
  const double timed = static_cast<double>((spec.reps + 1) * spec.cfg.steps);
  double steps = timed + 1;
  if (World::size() > 1) steps += timed * World::size() + (spec.cfg.pipeline.balance == "equal" ? 0 : timed);
  std::vector<Work> work;
  for (const auto& p : made.pipelines) work.push_back(step_work(*p, n2 / l2 * steps, params, largest));
  work.push_back(engine_work(engine, 2 * rows / l2 * static_cast<double>(made.pipelines.size()), params, largest,
                             "validation"));
  check_estimate(work, spec.cfg.force);
  return made;
}

namespace {

// Distributed, before the timed steps: rank 0 alone in the same allocation (one process's time);
// for blocks that are not equal, equal blocks timed the same way; the ideal N^2 / (sum of the
// measured rates).
// Leaves `p` with its own blocks, to be loaded again.
void time_baselines(const BenchSpec& a, const std::string& name, const Bodies& bodies, Pipeline& p, Reporter& report,
                    BenchRow& row) {
  const Params params = a.cfg.params();
  if (!p.partition().equal()) {
    const Partition balanced = p.partition();
    p.partition(Partition(World::size()));
    p.load(bodies, params);
    row.ms_equal = ms_per_step(p, a.reps, a.cfg.steps, report).median;
    p.partition(balanced);
  }
  if (!row.rates.empty()) {
    double sum = 0;
    for (const double r : row.rates) sum += r;
    row.ms_ideal = 1e3 * static_cast<double>(row.n) * static_cast<double>(row.n) / sum;
  }
  if (World::writer()) {
    auto one = make_pipeline(name, a.cfg.pipeline);
    one->load(bodies, params);
    row.ms_one = ms_per_step(*one, a.reps, a.cfg.steps, report, false).median;
  }
  World::barrier();
}

// Distributed, after the timed steps (`seconds` of them, from exchange time x0): the largest share
// over the ranks of the step spent waiting for the exchange, the share of all ranks' exchange time that
// compute hid, and each rank's share of the bodies.
void report_exchange(Exchange& ex, const Pipeline& p, ExchangeTime x0, double seconds, BenchRow& row) {
  const ExchangeTime x1 = p.exchange_time();
  const double total = x1.total - x0.total, hidden = x1.hidden - x0.hidden;
  row.comm_fraction = World::max((total - hidden) / seconds);
  double totals = 0, hiddens = 0;
  for (const double v : ex.all(total)) totals += v;
  for (const double v : ex.all(hidden)) hiddens += v;
  row.overlap = totals > 0 ? hiddens / totals : 0;
  row.overlaps = x1.overlaps;
  row.route = x1.route;
  for (std::size_t k = 0; k < x1.parts.size(); ++k) {
    const double before = k < x0.parts.size() ? x0.parts[k].second : 0;
    const double share = (x1.parts[k].second - before) / seconds;
    row.parts.push_back({x1.parts[k].first, World::min(share), World::max(share)});
  }
  for (std::size_t k = 0; k < x1.beside.size(); ++k) {
    const double before = k < x0.beside.size() ? x0.beside[k].second : 0;
    row.beside.emplace_back(x1.beside[k].first, World::max((x1.beside[k].second - before) / seconds));
  }
  if (x1.steps > x0.steps) {
    double moved = 0;
    for (const double v : ex.all(x1.moved - x0.moved)) moved += v;
    row.moved = moved / static_cast<double>(x1.steps - x0.steps) / static_cast<double>(row.n);
    row.recut = static_cast<double>(x1.recuts - x0.recuts) / static_cast<double>(x1.steps - x0.steps);  // every rank's
  }
  row.shares = block_shares(p, static_cast<std::size_t>(row.n));
  if (row.split != "key ranges") return;
  row.shares = shares_of(ex, static_cast<double>(p.held()));
  row.work = shares_of(ex, p.computed_interactions());
}

}  // namespace

BenchRow bench_one(const BenchSpec& a, const std::string& name, long long n, Fp64Engine& engine, Reporter& report) {
  BenchRow row;
  row.pipeline = name, row.n = n, row.steps = a.cfg.steps;
  // In steps: the set-up and validation as one, the warm-up's one, then each timed repetition's.
  const auto task = report.begin("timing " + name + " at N = " + std::to_string(n) + " (steps: set-up, warm-up, " +
                                     std::to_string(a.reps) + " x " + std::to_string(a.cfg.steps) + " timed)",
                                 2 + a.reps * a.cfg.steps);
  const Params params = a.cfg.params();
  // Realistic positions, not the exact leapfrog start: no O(N^2) stagger here.
  const Bodies bodies = plummer(static_cast<std::size_t>(n), a.cfg.seed);
  auto p = make_pipeline(name, a.cfg.pipeline);
  if (rung(name).method == Method::Tree) {
    const PipelineOptions o = resolve_options(rung(name), a.cfg.pipeline);
    row.theta = o.theta, row.leaf_size = o.leaf_size, row.multipole = o.multipole;
  }
  row.balance = a.cfg.pipeline.balance;
  const Decomposition d = decompose(*p, a.cfg.pipeline, params, n);
  row.rates = d.rates, row.split = d.kind;
  p->load(bodies, params);

  const std::string mismatch = validate(*p, bodies, params, engine, tolerance_for(name, a.cfg.pipeline), a.validate_n, row);
  if (!mismatch.empty()) {
    row.status = "FAILED validation";
    row.failure = mismatch;
    return row;
  }
  task->update(1);
  if (World::size() > 1) time_baselines(a, name, bodies, *p, report, row);
  p->load(bodies, params);  // the timed run starts from the validated state
  row.bound = bound_for(name, *p, n, a.cfg.pipeline);
  // The rate is the total of P devices, so is the bound: the sm and fetch bounds are one device's;
  // the fill bound already counts the texels this rank (rank 0, which reports) draws, its block's.
  if (row.bound && (row.bound->kind == "sm" || row.bound->kind == "fetch") && World::size() > 1) {
    row.bound->interactions_per_s *= World::size();
    row.bound->detail += ", x " + std::to_string(World::size()) + " ranks";
  }
  Exchange* ex = World::exchange();
  // The exchange's figures are of the timed steps: from after the warm-up.
  ExchangeTime x0;
  auto t0 = std::chrono::steady_clock::now();
  const Timing t = ms_per_step(*p, a.reps, a.cfg.steps, report, true, task.get(), 1, [&] {
    x0 = p->exchange_time();
    World::barrier();
    t0 = std::chrono::steady_clock::now();
  });
  row.ms = t.median, row.ms_min = t.min, row.ms_max = t.max, row.runs = a.reps;
  row.timer = World::size() > 1 ? "wall clock (slowest rank)" : p->timer();
  if (!(row.ms > 0)) {  // a timer that saw nothing must not post a rate
    row.status = "FAILED timing";
    row.failure = "the " + row.timer + " read " + std::to_string(row.ms) + " ms a step";
    return row;
  }
  if (ex) report_exchange(*ex, *p, x0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), row);
  row.computed = p->computed_interactions();
  if (ex) {  // every rank, a rank without bodies (and nothing computed) too
    double sum = 0;
    for (const double v : ex->all(row.computed)) sum += v;
    row.computed = sum;
  }
  // The timed steps queue more work between waits than one acceleration pass: check the state they
  // leave too (finite, and its accelerations as above), so a rung that stops computing mid-run
  // cannot post a time.
  Bodies after;
  p->read(after);
  bool finite = true;
  for (std::size_t i = 0; i < after.size() && finite; ++i)
    finite = std::isfinite(after.pos[i].x + after.pos[i].y + after.pos[i].z + after.vel[i].x + after.vel[i].y + after.vel[i].z);
  BenchRow again = row;
  const std::string late = finite ? validate(*p, after, params, engine, tolerance_for(name, a.cfg.pipeline), a.validate_n, again)
                                  : "the state is not finite after the timed steps";
  if (!late.empty()) {
    row.status = "FAILED after timing";
    row.failure = "after the timed steps: " + late;
    return row;
  }
  row.rate = static_cast<double>(n) * static_cast<double>(n) / (row.ms * 1e-3);
  row.computed_rate = row.computed / (row.ms * 1e-3);
  row.gflops = (row.computed > 0 ? row.computed_rate : row.rate) * rung(name).flops * 1e-9;
  return row;
}

int BenchTable::failed() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const BenchRow& r) { return r.status != "ok"; }));
}

BenchTable bench_table(const BenchSpec& spec, const std::vector<std::string>& names, const std::vector<long long>& sizes,
                       bool ladder, Fp64Engine& engine, Reporter& report,
                       const std::function<void(const BenchTable&)>& planned,
                       const std::function<void(const BenchRow&, double)>& row) {
  BenchTable t;
  t.ladder = ladder;
  std::vector<std::string> runnable;
  {  // the rungs made for the plan are let go: each row makes its own
    const Made plan = plan_bench(spec, names, sizes, ladder ? IfUnavailable::Skip : IfUnavailable::Fail, engine);
    runnable = plan.names, t.absent = plan.skipped;
  }
  t.device = device_line();
  if (planned) planned(t);
  double below = 0;  // the rate of the rung below
  std::map<Family, double> fastest;  // per family: the fastest float32 all-pairs rate so far (a tree's peers)
  for (const auto& name : runnable)
    for (long long n : sizes) {
      if (const int signal = static_cast<int>(World::max(report.interrupted()))) throw Interrupted(signal);
      t.rows.push_back(bench_one(spec, name, n, engine, report));
      const BenchRow& r = t.rows.back();
      const Rung& g = rung(name);
      double speedup = 0;
      if (ladder && g.method == Method::Tree) {  // beside the ladder: over its family's fastest all pairs
        if (fastest[g.family] > 0 && r.rate > 0) speedup = r.rate / fastest[g.family];
      } else {
        if (ladder && below > 0 && !g.ladder.restart && r.rate > 0) speedup = r.rate / below;
        if (r.rate > 0) below = r.rate;
        if (r.rate > 0 && g.state_bits == 32 && !g.fp64_forces) fastest[g.family] = std::max(fastest[g.family], r.rate);
      }
      t.speedups.push_back(speedup);
      if (row) row(r, speedup);
    }
  return t;
}

}  // namespace nbody
