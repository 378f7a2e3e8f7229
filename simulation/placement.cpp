#include "placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "error.hpp"
#include "world.hpp"

namespace nbody {

std::vector<double> balance_weights(const std::string& mode) {
  if (mode == "equal" || mode == "rate" || mode == "auto") return {};
  const std::string usage = option("balance") + " '" + mode +
                            "': must be equal, rate, auto or weights W0:W1:... (one per rank, each > 0)";
  std::vector<double> w;
  std::size_t at = 0;
  while (true) {
    const std::size_t colon = std::min(mode.find(':', at), mode.size());
    const std::string part = mode.substr(at, colon - at);
    // Decimal numbers only (strtod alone would take spaces, hex and "inf").
    const bool decimal = !part.empty() && part.find_first_not_of("0123456789.eE+-") == std::string::npos;
    char* end = nullptr;
    const double v = decimal ? std::strtod(part.c_str(), &end) : 0;
    if (!decimal || end != part.c_str() + part.size() || !(std::isfinite(v) && v > 0))
      throw InputError(usage + (part.empty() ? ": a weight is missing" : ": weight '" + part + "' is not a number above 0"));
    w.push_back(v);
    if (colon == mode.size()) break;
    at = colon + 1;
  }
  if (w.size() < 2) throw InputError(usage);
  if (World::size() > 1 && static_cast<int>(w.size()) != World::size())
    throw InputError(option("balance") + " '" + mode + "': " + std::to_string(w.size()) + " weights for " +
                     std::to_string(World::size()) + " ranks (give one per rank)");
  return w;
}

void check_placement(const PipelineOptions& o) {
  if (o.device < 0) throw InputError(option("device") + " " + std::to_string(o.device) + ": must be >= 0");
  balance_weights(o.balance);  // throws for anything but equal, rate, auto and one weight per rank
}

PipelineOptions with_placement(PipelineOptions from_file, const PipelineOptions& given) {
  from_file.device = given.device;
  from_file.device_given = given.device_given;
  from_file.balance = given.balance;
  return from_file;
}

}  // namespace nbody
