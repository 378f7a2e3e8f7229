#include "rung.hpp"

namespace nbody {

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
  for (const RungOption& o : r.options) {
    need(o.field != nullptr, "an option without its field");
    need(o.accepts.lo <= o.accepts.hi, "an option with an empty range");
    need(o.zero_is == 0 || o.accepts.contains(o.zero_is), "an option whose 0 stands for a value it refuses");
  }
  return missing;
}

}  // namespace nbody
