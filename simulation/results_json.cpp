#include "results_json.hpp"

#include <algorithm>
#include <cmath>

#include "world.hpp"

namespace nbody {

nlohmann::json energy_json(double initial, double final_value) {
  const double drift = relative_drift(initial, final_value);
  nlohmann::json j{{"initial", initial}, {"final", final_value}, {"rel_drift", nullptr}};
  if (std::isnan(drift)) j["rel_drift_undefined"] = kUndefinedDrift;
  else j["rel_drift"] = drift;
  return j;
}

nlohmann::json config_json(const Config& c, std::size_t n) {
  nlohmann::json j = {{"n", n},   {"steps", c.steps}, {"dt", c.dt},     {"softening", c.softening},
                      {"ic", c.ic}, {"seed", c.seed},   {"subset", c.subset}, {"ranks", World::size()}};
  if (World::size() > 1) j["balance"] = c.pipeline.balance;
  return j;
}

nlohmann::json to_json(const Comparison& c, const CompareResult& r, const std::string& engine) {
  nlohmann::json j = config_json(c.cfg, r.n);
  j["reference"] = c.names.front();
  if (r.reference_error)
    j["reference_validation"] = {{"against", "cpu64"},
                                 {"n", std::min(c.cfg.n, c.validate_n)},
                                 {"accel_rms_rel", *r.reference_error}};
  j["fp64_engine"] = engine;
  j["pipelines"] = r.pipelines;
  j["skipped"] = nlohmann::json::object();
  for (const auto& [name, why] : r.skipped) j["skipped"][name] = why;
  j["accel_error"] = nlohmann::json::object();
  for (const auto& [name, e] : r.accel) {
    j["accel_error"][name] = {{"rms_rel", e.rms_rel},       {"max_rel", e.max_rel}, {"worst", e.worst},
                              {"median_rel", e.median_rel}, {"p99_rel", e.p99_rel},
                              {"p999_rel", e.p999_rel}};
    if (e.undefined)  // as the drift's: null where relative means 0/0, and why
      for (const char* k : {"rms_rel", "max_rel", "median_rel", "p99_rel", "p999_rel"}) j["accel_error"][name][k] = nullptr;
    if (e.undefined) j["accel_error"][name]["undefined"] = kUndefinedAccelError;
  }
  j["compared_steps"] = nlohmann::json::array();
  j["divergence"] = nlohmann::json::array();
  for (const auto& s : r.steps) {
    j["compared_steps"].push_back(s.step);
    nlohmann::json pairs = nlohmann::json::object();
    for (const auto& p : s.pairs) pairs[pair_name(p)] = {{"max", p.d.max}, {"rms", p.d.rms}};
    nlohmann::json entry = {{"step", s.step}, {"pairs", pairs}};
    if (!s.energy.empty()) entry["energy"] = s.energy;
    j["divergence"].push_back(entry);
  }
  j["energy"] = nlohmann::json::object();
  j["momentum"] = nlohmann::json::object();
  for (const auto& name : r.pipelines) {
    const Conserved& i = r.initial.at(name);
    const Conserved& f = r.final_.at(name);
    j["energy"][name] = energy_json(i.e.total(), f.e.total());
    j["momentum"][name] = {
        {"linear_change", norm({f.p.x - i.p.x, f.p.y - i.p.y, f.p.z - i.p.z})},
        {"angular_change", norm({f.l.x - i.l.x, f.l.y - i.l.y, f.l.z - i.l.z})}};
  }
  return j;
}

nlohmann::json to_json(const Explanation& e) {
  nlohmann::json j = nlohmann::json::array();
  for (const ExplainRow& r : e.rows)
    j.push_back({{"factor", r.cause}, {"variant", r.variant},
                 {"accel_rms_rel_vs_cpu64", r.accel_vs_cpu64}, {"accel_rms_rel_vs_baseline", r.accel_vs_baseline},
                 {"max_distance_vs_cpu64", r.distance_vs_cpu64}, {"max_distance_vs_baseline", r.distance_vs_baseline}});
  for (const ThetaRow& t : e.theta)
    j.push_back({{"factor", theta_factor(t)}, {"variant", t.rung}, {"theta", t.theta},
                 {"accel_rms_rel_vs_cpu64", t.accel.rms_rel}, {"accel_median_rel_vs_cpu64", t.accel.median_rel},
                 {"accel_p99_rel_vs_cpu64", t.accel.p99_rel}, {"accel_max_rel_vs_cpu64", t.accel.max_rel},
                 {"accel_rms_rel_vs_baseline", t.accel_vs_baseline}, {"expected_distance", t.expected},
                 {"max_distance_vs_cpu64", t.distance_vs_cpu64}, {"max_distance_vs_baseline", t.distance_vs_baseline},
                 {"theta_part", t.theta_part}});
  if (e.steps > 0) {
    j.push_back({{"factor", "time step: cpu64 at dt against cpu64 at dt/2"}, {"max_distance", e.dt_vs_half}});
    j.push_back({{"factor", "time step: cpu64 at dt/2 against cpu64 at dt/4"}, {"max_distance", e.half_vs_quarter},
                 {"measured_order", e.order}});
    j.push_back({{"factor", "time step: Richardson estimate of cpu64's error at dt (order 2)"},
                 {"max_distance", e.richardson}});
    j.push_back({{"factor", "verdict"}, {"text", e.verdict}, {"limit", e.limit}});
  }
  nlohmann::json chaos = {{"factor", "chaos: nearby trajectories separate exponentially"}};
  if (e.efold_steps > 0) {
    chaos["efold_steps"] = e.efold_steps;
    chaos["efold_time"] = e.efold_time;
  } else {
    chaos["efold_steps"] = nullptr;
  }
  j.push_back(chaos);
  return j;
}

nlohmann::json to_json(const BenchRow& row, bool ladder, double speedup) {
  nlohmann::json j = {{"pipeline", row.pipeline}, {"n", row.n},       {"steps", row.steps},
                      {"ms_per_step", row.ms},    {"ms_per_step_min", row.ms_min},
                      {"ms_per_step_max", row.ms_max}, {"timer", row.timer},
                      {"interactions_per_s", row.rate},
                      {"gflops", row.gflops},     {"accel_rms_rel", row.err},
                      {"validated_bodies", row.checked}, {"validated_rows", row.checked_runs},
                      {"worst_over_tolerance", row.worst},
                      {"status", row.status},     {"bound", nullptr}};
  j["interactions_counted"] = row.computed > 0 ? "N^2-equivalent" : "N^2";
  if (row.computed > 0) {
    j["computed_interactions_per_step"] = row.computed;
    j["computed_interactions_per_s"] = row.computed_rate;
  }
  if (!row.multipole.empty()) j["tree"] = {{"theta", row.theta}, {"leaf_size", row.leaf_size}, {"multipole", row.multipole}};
  // A tree's, beside the ladder: over its family's fastest float32 all-pairs rung (bench.hpp).
  if (ladder)
    j[rung(row.pipeline).method == Method::Tree ? "speedup_over_all_pairs" : "speedup_over_rung_below"] =
        speedup > 0 ? nlohmann::json(speedup) : nlohmann::json(nullptr);
  if (World::size() > 1) {
    j["ms_per_step_one_rank"] = row.ms_one;
    j["speedup"] = row.speedup();
    j["parallel_efficiency"] = row.speedup() / World::size();
    j["comm_fraction"] = row.comm_fraction;
    j["overlap"] = row.overlaps ? nlohmann::json(row.overlap) : nlohmann::json(nullptr);
    j["balance"] = row.balance;
    j["split"] = row.split;
    j["shares"] = row.shares;
    if (!row.work.empty()) j["work_shares"] = row.work;
    if (!row.route.empty()) j["exchange_route"] = row.route;
    for (const BenchRow::Part& part : row.parts)  // a step's order: [name, on the slowest rank, on the fastest]
      j["step_parts"].push_back({part.name, part.most, part.least});
    if (!row.parts.empty()) j["moved_share_per_step"] = row.moved;
    if (!row.parts.empty()) j["recut_share_of_steps"] = row.recut;
    for (const auto& [what, share] : row.beside) j["from_walk_start"].push_back({what, share});
    j["rates"] = row.rates;
    j["ms_per_step_equal_blocks"] = row.ms_equal > 0 ? nlohmann::json(row.ms_equal) : nlohmann::json(nullptr);
    j["ms_per_step_ideal"] = row.ms_ideal > 0 ? nlohmann::json(row.ms_ideal) : nlohmann::json(nullptr);
  }
  if (row.bound)
    j["bound"] = {{"kind", row.bound->kind},
                  {"interactions_per_s", row.bound->interactions_per_s},
                  {"fraction", row.fraction()},
                  {"detail", row.bound->detail}};
  return j;
}

nlohmann::json to_json(const BenchTable& t) {
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t k = 0; k < t.rows.size(); ++k) results.push_back(to_json(t.rows[k], t.ladder, t.speedups[k]));
  nlohmann::json out = {{"device", t.device}, {"ranks", World::size()}, {"results", results}};
  if (t.ladder) {
    out["unavailable"] = nlohmann::json::array();
    for (const auto& [name, why] : t.absent) out["unavailable"].push_back({{"pipeline", name}, {"reason", why}});
  }
  return out;
}

nlohmann::json to_json(const DtSweep& s, const DtSweepResult& r) {
  nlohmann::json j = config_json(s.cfg, static_cast<std::size_t>(s.cfg.n));
  j.erase("steps");
  j.erase("dt");
  j["preset"] = "dt-sweep";
  j["time"] = r.time;
  j["truth"] = {{"pipeline", s.reference}, {"dt", r.truth_dt}};
  j["dts"] = r.dts;
  j["pipelines"] = r.rungs;
  j["skipped"] = r.skipped;
  j["distance"] = r.distance;
  j["rounding"] = r.rounding;
  j["opening_angle"] = r.opening_angle;
  j["crossing_dt"] = nlohmann::json::object();
  for (const auto& [name, dt] : r.crossing_dt) j["crossing_dt"][name] = dt > 0 ? nlohmann::json(dt) : nlohmann::json(nullptr);
  return j;
}

namespace {

nlohmann::json point_json(const SweepPoint& p) {
  return {{"ms_per_step", p.ms},
          {"interactions_per_body", p.per_body},
          {"accel_error", {{"median_rel", p.median}, {"p99_rel", p.p99}, {"p999_rel", p.p999}, {"max_rel", p.max}}}};
}

}  // namespace

nlohmann::json to_json(const ThetaSweep& s, const ThetaSweepResult& r) {
  nlohmann::json j = config_json(s.cfg, r.n);
  j.erase("steps");
  j.erase("dt");
  j["preset"] = "theta-sweep";
  j["leaf_size"] = theta_sweep_leaf_sizes(s);  // by tree rung, as it ran (0 resolved)
  j["timed_steps"] = s.steps;
  j["sampled_bodies"] = r.sampled;
  j["fp64_engine"] = r.engine;
  j["thetas"] = r.thetas;
  j["multipoles"] = s.multipoles;  // each tree's cells: "NAME" monopole, "NAME+quadrupole" (theta_sweep_label)
  std::vector<std::string> ran = r.all_pairs;
  ran.insert(ran.end(), r.trees.begin(), r.trees.end());
  j["pipelines"] = ran;
  j["skipped"] = r.skipped;
  j["timer"] = r.timer;
  j["all_pairs"] = nlohmann::json::object();
  for (const auto& name : r.all_pairs) j["all_pairs"][name] = point_json(r.baseline.at(name));
  j["tree"] = nlohmann::json::object();
  for (const auto& name : r.trees) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < r.thetas.size(); ++i) {
      nlohmann::json p = point_json(r.tree.at(name)[i]);
      p["theta"] = r.thetas[i];
      p["speedup"] = nlohmann::json::object();
      for (const auto& base : r.all_pairs) p["speedup"][base] = r.speedup(name, i, base);
      points.push_back(p);
    }
    j["tree"][name] = points;
  }
  return j;
}

}  // namespace nbody
