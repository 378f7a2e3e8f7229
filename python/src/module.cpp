// nbody._core: the module, its exceptions and what the files share.
#include <nanobind/stl/string.h>

#include <algorithm>
#include <csignal>
#include <type_traits>

#include "core.hpp"
#include "error.hpp"
#include "options.hpp"
#include "output.hpp"

namespace nbody::python {

Array1 masses(const std::vector<Vec4>& pos) {
  auto* owned = new std::vector<double>(pos.size());
  for (std::size_t i = 0; i < pos.size(); ++i) (*owned)[i] = pos[i].w;
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return Array1(owned->data(), 1, shape, owner);
}

Bodies bodies_from(const In2& x, const In2& v, const In1& m) {
  const std::size_t n = m.shape(0);
  if (x.shape(0) != n || v.shape(0) != n || x.shape(1) != 3 || v.shape(1) != 3)
    throw InputError("x and v must be (n, 3) and m (n,) for the same n");
  Bodies b;
  b.resize(n);
  const double* px = x.data();
  const double* pv = v.data();
  const double* pm = m.data();
  for (std::size_t i = 0; i < n; ++i) {
    b.pos[i] = {px[3 * i], px[3 * i + 1], px[3 * i + 2], pm[i]};
    b.vel[i] = {pv[3 * i], pv[3 * i + 1], pv[3 * i + 2]};
  }
  return b;
}

nb::ndarray<nb::numpy, float, nb::ndim<3>> rgb(std::vector<float>&& rgba, int width, int height) {
  auto* owned = new std::vector<float>(std::move(rgba));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  const std::size_t shape[3] = {static_cast<std::size_t>(height), static_cast<std::size_t>(width), 3};
  const std::int64_t strides[3] = {4LL * width, 4, 1};  // RGBA texels: the alpha left out
  return {owned->data(), 3, shape, owner, strides};
}

PipelineOptions options_from(const nb::dict& options) {
  PipelineOptions o;
  for (const auto& [key, value] : options) {
    const std::string k = nb::cast<std::string>(key);
    const auto f = std::find_if(pipeline_fields().begin(), pipeline_fields().end(),
                                [&](const PipelineField& p) { return p.key == k && !option_row(p.key).python.empty(); });
    if (f == pipeline_fields().end()) {
      std::string known;
      for (const PipelineField& p : pipeline_fields())
        if (!option_row(p.key).python.empty()) known += (known.empty() ? "" : ", ") + std::string(p.key);
      throw InputError("unknown rung option '" + k + "' (known: " + known + ")");
    }
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(o.*member)>;
          if constexpr (std::is_same_v<T, int>) {
            if (!PyIndex_Check(value.ptr()) || PyBool_Check(value.ptr())) throw InputError(k + " must be an integer");
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(nb::steal(PyNumber_Index(value.ptr())).ptr(), &overflow);
            if (overflow || v < -2147483647LL || v > 2147483647LL)
              throw InputError(k + " = " + nb::cast<std::string>(nb::str(value)) + " is out of range");
            o.*member = static_cast<int>(v);
          } else if constexpr (std::is_same_v<T, double>) {
            if (PyBool_Check(value.ptr()) || !PyNumber_Check(value.ptr())) throw InputError(k + " must be a number");
            o.*member = nb::cast<double>(nb::float_(value));
          } else {
            if (!nb::isinstance<nb::str>(value)) throw InputError(k + " must be one of " + std::string(option_row(k).range));
            o.*member = nb::cast<std::string>(value);
          }
        },
        f->field);
    if (k == "device") o.device_given = true;
  }
  return o;
}

int PyReporter::interrupted() {
  nb::gil_scoped_acquire gil;
  if (type_) return SIGINT;         // a progress hook raised: stop here
  if (PyErr_CheckSignals() != 0) {  // the handler raised: kept, and raised once the work has stopped
    PyErr_Fetch(&type_, &value_, &trace_);
    return SIGINT;
  }
  return 0;
}

void PyReporter::keep_error() {
  if (type_) {  // the first error wins
    PyErr_Clear();
    return;
  }
  PyErr_Fetch(&type_, &value_, &trace_);
}

void PyReporter::warn(const std::string& text) {
  nb::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) != 0) PyErr_Clear();  // warnings as errors: not here
}

void PyReporter::raise(const std::string& note) {
  const bool keyboard = !type_ || PyErr_GivenExceptionMatches(type_, PyExc_KeyboardInterrupt);
  if (keyboard && !note.empty()) {
    Py_XDECREF(type_), Py_XDECREF(value_), Py_XDECREF(trace_);
    PyErr_SetString(PyExc_KeyboardInterrupt, note.c_str());
  } else if (type_) {
    PyErr_Restore(type_, value_, trace_);
  } else {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
  }
  type_ = value_ = trace_ = nullptr;
  throw nb::python_error();
}

}  // namespace nbody::python

NB_MODULE(_core, m) {
  namespace nb = nanobind;
  m.doc() = "nbody's C++ core: the library under the nbody CLI (use the nbody package, not this module)";
  nbody::set_front_end(nbody::FrontEnd::Python);  // the library's messages name the keyword arguments
  nb::exception<nbody::InputError>(m, "InputError", PyExc_ValueError);
  nb::exception<nbody::Unavailable>(m, "Unavailable", PyExc_RuntimeError);
  nb::exception<nbody::NonFinite>(m, "NonFinite", PyExc_FloatingPointError);
  nb::exception<nbody::OutputError>(m, "OutputError", PyExc_OSError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {  // Ctrl-C between batches
    try {
      std::rethrow_exception(p);
    } catch (const nbody::Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  nbody::python::register_simulation(m);
  nbody::python::register_runs(m);
  nbody::python::register_progress(m);
}
