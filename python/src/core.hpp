// The Python module's C++ side (nbody._core): what its files share. The module is a front end on
// the library (simulation/) as the CLI is: it parses no command line and prints nothing; NumPy
// arrays in and out, the library's errors as Python exceptions.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bodies.hpp"
#include "catalogue.hpp"
#include "error.hpp"
#include "report.hpp"

namespace nbody::python {

namespace nb = nanobind;

using Array2 = nb::ndarray<nb::numpy, double, nb::ndim<2>>;
using Array1 = nb::ndarray<nb::numpy, double, nb::ndim<1>>;
using In2 = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using In1 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// An (n, 3) array of the x, y, z of each element of `v` (Vec3 or Vec4), viewing the vector's own
// storage (no copy): the array owns the vector.
template <class V>
Array2 xyz(std::vector<V>&& v) {
  auto* owned = new std::vector<V>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<V>*>(p); });
  const std::size_t shape[2] = {owned->size(), 3};
  const std::int64_t strides[2] = {static_cast<std::int64_t>(sizeof(V) / sizeof(double)), 1};
  return Array2(reinterpret_cast<double*>(owned->data()), 2, shape, owner, strides);
}
// The same as a read-only view of `v`, which `keep` keeps alive (the state read back once).
using View2 = nb::ndarray<nb::numpy, const double, nb::ndim<2>>;
template <class V>
View2 xyz_view(const std::vector<V>& v, std::shared_ptr<const void> keep) {
  auto* held = new std::shared_ptr<const void>(std::move(keep));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
  const std::size_t shape[2] = {v.size(), 3};
  const std::int64_t strides[2] = {static_cast<std::int64_t>(sizeof(V) / sizeof(double)), 1};
  return View2(reinterpret_cast<const double*>(v.data()), 2, shape, owner, strides);
}
// An image of RGBA texels (row by row) as a (height, width, 3) array of its RGB, owning the texels.
nb::ndarray<nb::numpy, float, nb::ndim<3>> rgb(std::vector<float>&& rgba, int width, int height);
// The masses (w) of `pos`, as an (n,) array.
Array1 masses(const std::vector<Vec4>& pos);
// Bodies from x (n, 3), v (n, 3), m (n,): the Python layer has checked shapes and dtypes.
Bodies bodies_from(const In2& x, const In2& v, const In1& m);
// Rung options from keyword arguments (gl_chunk, gl_precision, cuda_block, cuda_unroll, cuda_q,
// cuda_bodies, cuda_split, theta, leaf_size, multipole, device). Throws InputError for an unknown one or a wrong type.
PipelineOptions options_from(const nb::dict& options);

// Stops long work between batches when a signal handler raised (Ctrl-C: KeyboardInterrupt), and
// passes the library's warnings to Python's warnings (RuntimeWarning) and long work's progress to
// the hook nbody.set_progress() gave (progress.cpp). Takes the GIL for each.
class PyReporter final : public Reporter {
 public:
  std::unique_ptr<Task> begin(const std::string& label, long long total) override;
  int interrupted() override;
  void warn(const std::string& text) override;
  // With the GIL: keeps the exception now raised (a progress hook's), to raise once the work has
  // stopped; interrupted() then stops it.
  void keep_error();
  bool kept() const { return type_ != nullptr; }
  // With the GIL: raises what the handler raised (KeyboardInterrupt, or the handler's own exception);
  // a KeyboardInterrupt carries `note` (where the work stopped) when one is given.
  [[noreturn]] void raise(const std::string& note = "");

 private:
  PyObject *type_ = nullptr, *value_ = nullptr, *trace_ = nullptr;
};
// Runs `work` (without the GIL) and turns the library's Interrupted into the Python exception the
// signal handler raised.
template <class F>
auto interruptible(F&& work) {
  PyReporter report;
  try {
    auto result = [&] {
      nb::gil_scoped_release release;
      return work(report);
    }();
    if (report.kept()) report.raise();  // a progress hook raised at the work's end
    return result;
  } catch (const Interrupted&) {
    report.raise();
  }
}

void register_simulation(nb::module_& m);
void register_progress(nb::module_& m);
void register_runs(nb::module_& m);

}  // namespace nbody::python
