#include "version.hpp"

#include "architectures.hpp"
#include "hdf5_io.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "viewer.hpp"
#endif

namespace nbody {

namespace {

std::string built(bool yes, const std::string& what, const std::string& why_not) {
  return yes ? "yes (" + what + ")" : "no (" + why_not + ")";
}

}  // namespace

std::string version_text() {
#ifdef NBODY_HAVE_CUDA
  const std::string cuda = "yes (kernels for " + cuda::describe(cuda::built_architectures()) + ")";
#else
  const std::string cuda = "no (no nvcc at configure time)";
#endif
#ifdef NBODY_HAVE_GL
  const bool gl = true;
  const std::string no_window = viewer::window_unavailable();
#else
  const bool gl = false;
  const std::string no_window = "no GL pipeline in this build";
#endif
  return std::string("nbody ") + NBODY_VERSION + " (commit " + build_commit() + ")\n" +
         "cuda:   " + cuda + "\n" +
         "gl:     " + built(gl, "OpenGL through EGL", "OpenGL, EGL, GLEW or stb missing at configure time") + "\n" +
         "hdf5:   " + built(have_hdf5(), "HDF5 snapshots", "HDF5 missing at configure time") + "\n" +
         "mpi:    " + built(World::built_with_mpi(), "mpirun -np P nbody ...", "MPI missing at configure time") + "\n" +
         "window: " + built(no_window.empty(), "nbody view through GLFW", no_window);
}

}  // namespace nbody
