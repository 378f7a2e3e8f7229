// Long work's progress for Python: the library's tasks (the set-up pass, a run's steps, a sweep)
// reported to the hook nbody.set_progress() gave, a callable (label, done, total). The package's
// default hook draws a line on stderr when a terminal or a notebook shows it (nbody/__init__.py).
#include <chrono>

#include "core.hpp"

namespace nbody::python {

namespace {

PyObject* g_hook = nullptr;  // a new reference, or nullptr: no progress (never released: it lives as long as the module)

// One task: calls the hook at its start, then at most every kEvery, and at its end.
class PyTask final : public Task {
 public:
  PyTask(std::string label, long long total, PyReporter& report)
      : label_(std::move(label)), total_(total), report_(report) {
    call(0);
  }
  ~PyTask() override {
    if (last_done_ != total_) call(total_);
  }
  void update(long long done) override {
    const auto now = std::chrono::steady_clock::now();
    if (done != total_ && now - last_ < kEvery) return;
    call(done);
  }

 private:
  static constexpr std::chrono::milliseconds kEvery{200};

  void call(long long done) {
    last_ = std::chrono::steady_clock::now();
    last_done_ = done;
    nb::gil_scoped_acquire gil;
    if (!g_hook) return;
    PyObject* result = PyObject_CallFunction(g_hook, "sLL", label_.c_str(), done, total_);
    if (result) Py_DECREF(result);
    else report_.keep_error();  // raised once the work has stopped, at its next batch
  }

  std::string label_;
  long long total_;
  PyReporter& report_;
  long long last_done_ = -1;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

std::unique_ptr<Task> PyReporter::begin(const std::string& label, long long total) {
  {
    nb::gil_scoped_acquire gil;
    if (!g_hook) return std::make_unique<Task>();
  }
  return std::make_unique<PyTask>(label, total, *this);
}

void register_progress(nb::module_& m) {
  m.def("set_progress", [](nb::object hook) {
    if (!hook.is_none() && !PyCallable_Check(hook.ptr()))
      throw InputError("progress must be a callable (label, done, total), 'auto' or None");
    PyObject* old = g_hook;
    g_hook = hook.is_none() ? nullptr : hook.inc_ref().ptr();
    Py_XDECREF(old);
  }, nb::arg("hook").none());
}

}  // namespace nbody::python
