#include "diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "catalogue.hpp"
#include "error.hpp"
#include "key_ranges.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "setup.hpp"

namespace nbody {

Diagnostics diagnostics_method(const std::string& choice, const std::string& name, long long n) {
  const bool tree = rung(name).tree_engine != nullptr;
  if (choice == "all-pairs") return Diagnostics::AllPairs;
  if (choice == "auto") return tree && n >= kTreeDiagnosticsFrom ? Diagnostics::Tree : Diagnostics::AllPairs;
  if (choice != "tree")
    throw InputError(option("diagnostics") + " '" + choice + "': expected " + std::string(option_row("diagnostics").range));
  if (!tree) {
    std::string trees;
    for (const Rung& r : rungs())
      if (r.tree_engine) trees += (trees.empty() ? "" : ", ") + r.name;
    throw InputError(option("diagnostics") + " tree: " + name + " is not a tree rung (" + trees +
                     " are); its diagnostics are all pairs");
  }
  return Diagnostics::Tree;
}

const char* diagnostics_name(Diagnostics d) { return d == Diagnostics::Tree ? "tree" : "all-pairs"; }

std::unique_ptr<Fp64Engine> make_diagnostics_engine(Diagnostics d, const std::string& name, const PipelineOptions& o) {
  if (d == Diagnostics::AllPairs) return make_engine(o);
  const Rung& r = rung(name);
  return r.tree_engine(resolve_options(r, o));
}

std::vector<std::size_t> sampled_bodies(std::size_t n, std::size_t sample) {
  const std::size_t m = std::min(n, sample);
  std::vector<std::size_t> out(m);
  for (std::size_t k = 0; k < m; ++k) out[k] = static_cast<std::size_t>(static_cast<unsigned long long>(k) * n / m);
  return out;
}

void sampled_reference(const std::vector<Vec4>& pos, const std::vector<std::size_t>& idx, double eps2,
                       Fp64Engine& engine, std::vector<Vec3>* acc, std::vector<double>* phi) {
  engine.evaluate_sample(pos, eps2, idx, acc, phi);
}

Percentiles percentiles(std::vector<double> v) {
  if (v.empty()) return {};
  for (double& x : v)
    if (std::isnan(x)) x = INFINITY;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return {v[m / 2], v[m * 99 / 100], v.back()};
}

namespace {

double relative(double d, double r) { return r > 0 ? d / r : d; }

}  // namespace

EngineCheck check_engine(const std::vector<Vec4>& pos, double eps2, Fp64Engine& engine, Fp64Engine& exact,
                         std::size_t sample) {
  Evaluation pass;
  engine.evaluate(pos, eps2, &pass.acc, &pass.phi);
  return check_engine(pos, eps2, pass, exact, sample);
}

EngineCheck check_engine(const std::vector<Vec4>& pos, double eps2, const Evaluation& pass, Fp64Engine& exact,
                         std::size_t sample) {
  const std::vector<std::size_t> idx = sampled_bodies(pos.size(), sample);
  Evaluation at{std::vector<Vec3>(idx.size()), std::vector<double>(idx.size())};
  for (std::size_t k = 0; k < idx.size(); ++k) at.acc[k] = pass.acc[idx[k]], at.phi[k] = pass.phi[idx[k]];
  return check_sampled(pos, eps2, at, exact, sample);
}

namespace {

// The check's figures from the pass's values `at` the sampled bodies (masses `mass`) and float64's.
EngineCheck compared(const std::vector<double>& mass, const Evaluation& at, const std::vector<Vec3>& ref_acc,
                     const std::vector<double>& ref_phi) {
  EngineCheck c;
  c.sampled = mass.size();
  std::vector<double> ea(mass.size()), ep(mass.size());
  double dw = 0, dw_abs = 0, w = 0;
  for (std::size_t k = 0; k < mass.size(); ++k) {
    const Vec3& a = at.acc[k];
    const Vec3& r = ref_acc[k];
    ea[k] = relative(norm({a.x - r.x, a.y - r.y, a.z - r.z}), norm(r));
    ep[k] = relative(std::abs(at.phi[k] - ref_phi[k]), std::abs(ref_phi[k]));
    dw += mass[k] * (at.phi[k] - ref_phi[k]);
    dw_abs += mass[k] * std::abs(at.phi[k] - ref_phi[k]);
    w += mass[k] * ref_phi[k];
  }
  c.accel = percentiles(std::move(ea));
  c.potential = percentiles(std::move(ep));
  c.potential_energy_error = w != 0 ? std::abs(dw / w) : (dw == 0 ? 0 : INFINITY);
  c.potential_energy_bound = w != 0 ? dw_abs / std::abs(w) : (dw_abs == 0 ? 0 : INFINITY);
  return c;
}

}  // namespace

EngineCheck check_sampled(const std::vector<Vec4>& pos, double eps2, const Evaluation& at, Fp64Engine& exact,
                          std::size_t sample) {
  const std::vector<std::size_t> idx = sampled_bodies(pos.size(), sample);
  std::vector<Vec3> ref_acc;
  std::vector<double> ref_phi, mass(idx.size());
  sampled_reference(pos, idx, eps2, exact, &ref_acc, &ref_phi);
  for (std::size_t k = 0; k < idx.size(); ++k) mass[k] = pos[idx[k]].w;
  EngineCheck c = compared(mass, at, ref_acc, ref_phi);
  c.against = exact.name();
  return c;
}

void sampled_reference_split(Exchange& ex, std::vector<Vec4>& mine, std::size_t first,
                             const std::vector<std::size_t>& idx, double eps2, Fp64Engine& local, std::vector<Vec3>& acc,
                             std::vector<double>& phi, std::vector<double>& mass) {
  namespace kr = key_ranges;
  const std::size_t m = idx.size(), count = mine.size(), end = first + count;
  const auto held_here = [&](std::size_t i) { return i >= first && i < end; };
  struct Held {
    std::uint64_t k;
    Vec4 p;
  };
  std::vector<Held> held;
  for (std::size_t k = 0; k < m; ++k)
    if (held_here(idx[k])) held.push_back({k, mine[idx[k] - first]});
  std::vector<Vec4> sampled(m);
  mass.assign(m, 0.0);
  for (const Held& h : kr::records_of<Held>(ex.allgatherv(kr::bytes_of(held)))) sampled[h.k] = h.p, mass[h.k] = h.p.w;
  // The rows: this rank's sampled bodies where they lie, then the others' appended massless (their
  // ranks count them), so that each row meets every body this rank holds once and itself never.
  std::vector<std::size_t> rows, order;  // order[t]: the sampled body of row t
  for (std::size_t k = 0; k < m; ++k)
    if (held_here(idx[k])) rows.push_back(idx[k] - first), order.push_back(k);
  struct Restore {  // `mine` as it was, however this ends
    std::vector<Vec4>& v;
    std::size_t n;
    ~Restore() { v.resize(n); }
  } restore{mine, count};
  for (std::size_t k = 0; k < m; ++k)
    if (!held_here(idx[k])) {
      rows.push_back(mine.size()), order.push_back(k);
      mine.push_back({sampled[k].x, sampled[k].y, sampled[k].z, 0.0});
    }
  std::vector<Vec3> a;
  std::vector<double> p;
  local.evaluate_sample(mine, eps2, rows, &a, &p);
  struct Row {
    Vec3 a;
    double phi;
  };
  std::vector<Row> by_k(m);
  for (std::size_t t = 0; t < m; ++t) by_k[order[t]] = {a[t], p[t]};
  acc.assign(m, Vec3{});
  phi.assign(m, 0.0);
  const std::vector<Row> every = kr::records_of<Row>(ex.allgatherv(kr::bytes_of(by_k)));  // in rank order
  for (std::size_t r = 0; r + m <= every.size(); r += m)
    for (std::size_t k = 0; k < m; ++k) {
      const Row& row = every[r + k];
      acc[k] = {acc[k].x + row.a.x, acc[k].y + row.a.y, acc[k].z + row.a.z};
      phi[k] += row.phi;
    }
}

EngineCheck check_sampled_split(Exchange& ex, std::vector<Vec4>& mine, std::size_t first, std::size_t n,
                                double eps2, const Evaluation& at, Fp64Engine& exact, std::size_t sample) {
  const std::vector<std::size_t> idx = sampled_bodies(n, sample);
  std::vector<Vec3> ref_acc;
  std::vector<double> ref_phi, mass;
  sampled_reference_split(ex, mine, first, idx, eps2, exact.local(), ref_acc, ref_phi, mass);
  EngineCheck c = compared(mass, at, ref_acc, ref_phi);
  c.against = exact.name();
  return c;
}

RunDiagnostics::RunDiagnostics(const std::string& choice, const std::string& rung, long long n,
                               const PipelineOptions& o)
    : method(diagnostics_method(choice, rung, n)), engine(make_diagnostics_engine(method, rung, o)) {
  if (tree()) exact = make_engine(o);
}

void RunDiagnostics::make_check(const std::vector<Vec4>& pos, double eps2, const Evaluation* pass) {
  if (!tree()) return;
  check = pass ? check_engine(pos, eps2, *pass, *exact) : check_engine(pos, eps2, *engine, *exact);
}

void RunDiagnostics::make_check(const std::vector<Vec4>& pos, double eps2, const Evaluation& at,
                                const std::string& of) {
  if (!tree()) return;
  check = check_sampled(pos, eps2, at, *exact);
  check->of = of;
}

void RunDiagnostics::make_check(Exchange& ex, std::vector<Vec4>& mine, std::size_t first, std::size_t n,
                                double eps2, const Evaluation& at, const std::string& of) {
  if (!tree()) return;
  check = check_sampled_split(ex, mine, first, n, eps2, at, *exact);
  check->of = of;
}

double RunDiagnostics::drift_floor(const Energy& e0) const {
  if (!check) return 0;
  return 2 * check->potential_energy_bound * std::abs(e0.potential) / std::abs(e0.total());
}

std::string RunDiagnostics::text() const {
  if (!check) return "fp64 engine: " + engine->name() + " (" + engine->where() + ")";
  const EngineCheck& c = *check;
  const std::string what = c.of.empty() ? engine->name() + " (" + engine->where() + ")" : c.of;
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "diagnostics: tree, %s, O(N log N) a pass; against float64 all pairs (%s) on %zu sampled bodies: "
                "potential error median %.2e, 99%% %.2e, max %.2e; acceleration error median %.2e, 99%% %.2e, max "
                "%.2e; W (the potential energy) off by about %.1e here, by at most %.1e (relative)",
                what.c_str(), c.against.c_str(), c.sampled, c.potential.median,
                c.potential.p99, c.potential.max, c.accel.median, c.accel.p99, c.accel.max, c.potential_energy_error,
                c.potential_energy_bound);
  return buf;
}

nlohmann::json RunDiagnostics::to_json(const Energy* e0) const {
  nlohmann::json j = {{"method", diagnostics_name(method)}, {"engine", engine->name()}};
  if (!check) return j;
  const EngineCheck& c = *check;
  const auto stats = [](const Percentiles& p) {
    return nlohmann::json{{"median_rel", p.median}, {"p99_rel", p.p99}, {"max_rel", p.max}};
  };
  j["check"] = {{"against", c.against},
                {"pass", c.of.empty() ? engine->name() : c.of},
                {"sampled_bodies", c.sampled},
                {"potential_error", stats(c.potential)},
                {"accel_error", stats(c.accel)},
                {"potential_energy_rel", c.potential_energy_error},
                {"potential_energy_bound_rel", c.potential_energy_bound}};
  if (e0) j["check"]["drift_floor"] = drift_floor(*e0);
  return j;
}

}  // namespace nbody
