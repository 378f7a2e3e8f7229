// The leapfrog contract, the same in every pipeline (DESIGN.md, "Numerical contract").
//
// State: positions x_n at t_n, velocities v_{n-1/2} half a step behind. One step is the
// kick-drift of the seeds (GPU Gems 3 §31.3, TR04-032 §3: velocity program, then position program):
//     v_{n+1/2} = v_{n-1/2} + a(x_n) dt        (kick: the velocity program / integrate kernel)
//     x_{n+1}   = x_n + v_{n+1/2} dt           (drift: the position program)
// Initial conditions come with synchronised velocities v_0; stagger() turns them into v_{-1/2}
// once, in float64 (on the fp64 engine: fp64_engine.hpp), so every pipeline starts from the same
// bits. Energy is measured at
// synchronised times: synchronise() returns v_n = v_{n-1/2} + a(x_n) dt/2.
#pragma once
#include <vector>

#include "bodies.hpp"

namespace nbody {

// v_0 -> v_{-1/2}, with float64 accelerations computed here on the CPU (fp64_engine.hpp has the
// versions that take an engine, CUDA's where there is a device, and give the energy from the same
// pass: what the front ends use).
void stagger(Bodies& bodies, const Params& params);

// v_{n-1/2} -> v_n (returned; the state is untouched), with float64 accelerations.
std::vector<Vec3> synchronise(const Bodies& bodies, const Params& params);

}  // namespace nbody
