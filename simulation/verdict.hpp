// What a comparison's table means, in a few plain sentences: which rungs agree with the reference
// and how closely, against TR04-032 Fig. 9's bound and this project's goal, and whether the energy
// drift is each rung's own or the leapfrog's, shared by all of them.
#pragma once
#include <string>
#include <vector>

#include "comparison.hpp"

namespace nbody {

// The verdict's lines (no trailing newline; a line may hold a '\n' and an indented continuation),
// for `compare`'s output and the front ends. `dt` names the time step in the energy sentence.
std::vector<std::string> verdict(const CompareResult& r, const std::string& reference, double dt);

}  // namespace nbody
