// `nbody compare --explain`: the causes of float32 divergence, one factor at a time.
#pragma once
#include <nlohmann/json.hpp>

#include "bodies.hpp"

namespace nbody {

// Runs cpu64, the cpu32 baseline recipe and one variant per factor from `start` for `steps`
// steps; prints what each factor contributes to the step-1 acceleration error and to the
// divergence at the last step, and the e-folding time of the divergence. Returns the same as JSON.
nlohmann::json explain(const Bodies& start, const Params& params, long long steps);

}  // namespace nbody
