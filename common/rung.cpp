#include "rung.hpp"

#include "error.hpp"

namespace nbody {

const std::vector<PipelineField>& pipeline_fields() {
  using P = PipelineOptions;
  static const std::vector<PipelineField> fields{
      {"gl_chunk", &P::gl_chunk},
      {"gl_precision", &P::gl_precision},
      {"cuda_block", &P::cuda_block},
      {"cuda_unroll", &P::cuda_unroll},
      {"cuda_q", &P::cuda_q},
      {"cuda_bodies", &P::cuda_bodies},
      {"cuda_split", &P::cuda_split},
      {"theta", &P::theta},
      {"leaf_size", &P::leaf_size},
      {"multipole", &P::multipole, true, "monopole"},  // a file without it holds monopole cells
      {"webgpu_p", &P::webgpu_p, false},
      {"webgpu_k", &P::webgpu_k, false},
      {"device", &P::device, false},
      {"balance", &P::balance, false},
  };
  return fields;
}

bool Accepts::contains(int v) const {
  if (v < lo || v > hi) return false;
  switch (kind) {
    case PowersOfTwo: return v >= 1 && (v & (v - 1)) == 0;
    case MultiplesOf: return v % step == 0;
    case Interval: return true;
  }
  return false;
}

std::string Accepts::describe() const {
  switch (kind) {
    case PowersOfTwo: {
      std::string s;
      for (int v = 1; v <= hi; v *= 2) {
        if (v < lo) continue;
        s += s.empty() ? "" : (2 * v > hi ? " or " : ", ");
        s += std::to_string(v);
      }
      return s;
    }
    case MultiplesOf:
      return "a multiple of " + std::to_string(step) + " in " + std::to_string(lo) + ".." + std::to_string(hi);
    case Interval: return std::to_string(lo) + ".." + std::to_string(hi);
  }
  return "";
}

std::string Reals::describe() const { return "a number in " + number_text(lo) + ".." + number_text(hi); }

std::string RungOption::describe() const {
  if (is_real()) return reals.describe();
  if (zero_is != 0) return accepts.describe() + " (0: " + std::to_string(zero_is) + ")";
  if (!zero_note.empty()) return accepts.describe() + " (0: " + std::string(zero_note) + ")";
  return accepts.describe();
}

void RungOption::copy(const PipelineOptions& from, PipelineOptions& to) const {
  std::visit([&](auto f) { to.*f = from.*f; }, field);
}

std::vector<std::string> missing_facts(const Rung& r) {
  std::vector<std::string> missing;
  const auto need = [&](bool ok, const char* what) {
    if (!ok) missing.emplace_back(what);
  };
  need(!r.name.empty(), "no name");
  need(r.summary.size() > 0, "no summary");
  need(r.state_bits == 32 || r.state_bits == 64, "state_bits neither 32 nor 64");
  need(!r.fp64_forces || r.state_bits == 64, "float64 forces with float state");
  need(r.tolerance.atol > 0 && r.tolerance.rtol > 0, "no tolerance");
  need(r.flops > 0, "no flop count");
  need(r.make != nullptr, "no factory");
  need((r.bound != BoundModel::Issue && r.bound != BoundModel::IssueIfCudaGl) || r.slots > 0,
       "an issue bound without its slots");
  need(!r.ladder.on || r.ladder.above != r.name, "stands on itself in the ladder");
  need(!r.ladder.on || r.method == Method::AllPairs, "a tree on the all-pairs ladder");
  need((r.method == Method::Tree) == (r.tree_engine != nullptr), "a tree without its diagnostics engine, or one "
                                                                  "that is not a tree with one");
  for (const RungOption& o : r.options) {
    need(std::visit([](auto f) { return f != nullptr; }, o.field), "an option without its field");
    need(o.is_real() ? o.reals.lo <= o.reals.hi : o.accepts.lo <= o.accepts.hi, "an option with an empty range");
    need(o.zero_is == 0 || (!o.is_real() && o.accepts.contains(o.zero_is)),
         "an option whose 0 stands for a value it refuses");
  }
  return missing;
}

std::vector<RungOption> tree_options(int leaf_size) {
  return {{.key = "theta", .field = &PipelineOptions::theta, .reals = {0, 1}},
          {.key = "leaf_size", .field = &PipelineOptions::leaf_size, .accepts = {Accepts::Interval, 1, 4096},
           .zero_is = leaf_size}};
}

Multipole multipole_of(const std::string& value) {
  if (value == "monopole") return Multipole::Monopole;
  if (value == "quadrupole") return Multipole::Quadrupole;
  throw InputError(option("multipole") + " '" + value + "': must be monopole or quadrupole");
}

// On a Plummer sphere of 4096 cpu:tree's largest relative error is 0.016 at theta 0.5 (0.125
// allowed) and 0.38 at theta 1 with leaves of one body, the loosest setting (0.5 allowed):
// docs/tree.md.
Tolerance tree_tolerance(const PipelineOptions& o) {
  const double t = o.theta * o.theta / 2;
  return {kFloatTolerance.atol + t, kFloatTolerance.rtol + t};
}

}  // namespace nbody
