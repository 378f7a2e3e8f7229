// A build without CUDA: no CUDA-GL interop; every pane is drawn from the host.
#include "error.hpp"
#include "viewer.hpp"

namespace nbody::viewer {

GlShare::GlShare(Pipeline& pipeline, unsigned, unsigned) : pipeline_(pipeline), why_("this build has no CUDA pipeline") {}
GlShare::~GlShare() = default;
void GlShare::copy() { throw Unavailable("CUDA-GL interop is not active: " + why_); }

}  // namespace nbody::viewer
