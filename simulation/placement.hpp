// Where a run's bodies are computed, which changes nothing in its result: --device (the CUDA
// device, and the EGL device tried first) and, under mpirun, --balance (each rank's block). A run
// read from a file (a checkpoint, a snapshot) takes these from the command line, not the file.
#pragma once
#include <string>
#include <vector>

#include "rung.hpp"

namespace nbody {

// The weights of a --balance W0:W1:... value; empty for equal, rate and auto. Throws InputError for
// anything else, and under mpirun for a number of weights other than the number of ranks.
std::vector<double> balance_weights(const std::string& mode);

// Throws InputError for a --device or --balance no run could take.
void check_placement(const PipelineOptions& o);

// A run's options read from a file, with the choices that place it taken from `given`.
PipelineOptions with_placement(PipelineOptions from_file, const PipelineOptions& given);

}  // namespace nbody
