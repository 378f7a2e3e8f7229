// nbody._core's functions: info, the initial conditions, and the library's comparisons, explain and
// bench, each returning the JSON document the CLI writes (the Python layer turns it into objects).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "bench.hpp"
#include "comparison.hpp"
#include "core.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "explain.hpp"
#include "info.hpp"
#include "hdf5_io.hpp"
#include "leapfrog.hpp"
#include "results_json.hpp"
#include "setup.hpp"
#include "shared_run.hpp"
#include "world.hpp"

namespace nbody::python {

namespace {

// Whether `names` may make a gl:* rung (the default set does).
bool uses_gl(const std::vector<std::string>& names, bool every) {
  if (every) return true;
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return rung(n).family == Family::Gl; });
}

std::string info() {
  claim_gl_thread("info()");  // it makes every rung, the GL ones included
  return info_json().dump();
}

Config config(long long n, bool n_given, long long steps, double dt, double softening, const std::string& ic,
              std::uint64_t seed, const std::string& subset, bool force, const nb::dict& options) {
  Config c;
  c.n = n, c.n_given = n_given, c.steps = steps, c.dt = dt, c.softening = softening, c.ic = ic, c.seed = seed;
  c.subset = subset, c.force = force, c.pipeline = options_from(options);
  resolve_body_count(c);
  return c;
}

// x, v (synchronised), m and the species (name, count, luminous) of a generator or a file.
nb::tuple initial_conditions(const std::string& ic, long long n, bool n_given, std::uint64_t seed,
                             const std::string& subset) {
  Config c = config(n, n_given, 0, defaults::dt, defaults::softening, ic, seed, subset, false, nb::dict());
  check_config(c, 1);
  std::vector<Species> species;
  Bodies b = initial_bodies(c, &species);
  nb::list kinds;
  for (const Species& k : species) kinds.append(nb::make_tuple(k.name, k.count, k.luminous));
  Array1 m = masses(b.pos);
  return nb::make_tuple(xyz(std::move(b.pos)), xyz(std::move(b.vel)), m, kinds);
}

std::string compare(const std::vector<std::string>& names, bool skip, long long n, bool n_given, long long steps,
                    double dt, double softening, const std::string& ic, std::uint64_t seed, const std::string& subset,
                    long long every, long long energy_every, long long validate_n, bool force,
                    const nb::dict& options) {
  Comparison c;
  c.cfg = config(n, n_given, steps, dt, softening, ic, seed, subset, force, options);
  check_config(c.cfg, 3);
  check_compare_options(every, energy_every, validate_n);
  c.names = names;
  check_reference(c.names.front());
  // The default set (skip) is not named: an option for some of its rungs is theirs.
  check_pipeline_options(skip ? std::vector<std::string>{} : c.names, c.cfg.pipeline);
  resolve_options(rung(c.names.front()), c.cfg.pipeline);  // the reference must run: its own rules
  check_softening(c.names, c.cfg.softening);
  c.policy = skip ? IfUnavailable::Skip : IfUnavailable::Fail;
  c.validate_n = validate_n;
  c.energy_every = energy_every;
  c.stops = compared_steps(steps, every, 0, energy_every);
  if (uses_gl(names, skip)) claim_gl_thread("compare()");
  return interruptible([&](Reporter& report) {
    place_on_device(c.cfg.pipeline);
    auto engine = make_engine(c.cfg.pipeline);
    return to_json(c, compare(c, *engine, report), engine->name()).dump();
  });
}

std::string explain_rows(long long n, bool n_given, long long steps, double dt, double softening, const std::string& ic,
                         std::uint64_t seed, const std::string& subset, bool force) {
  Config c = config(n, n_given, steps, dt, softening, ic, seed, subset, force, nb::dict());
  check_config(c, 9);
  return interruptible([&](Reporter& report) {
    auto engine = make_engine(c.pipeline);
    Bodies b = initial_bodies(c);
    stagger(b, c.params(), *engine, false);
    return to_json(explain(b, c.params(), c.steps, report)).dump();
  });
}

std::string bench(const std::vector<std::string>& names, const std::vector<long long>& sizes, long long steps,
                  long long reps, long long validate_n, std::uint64_t seed, double dt, double softening, bool force,
                  const nb::dict& options, bool ladder) {
  BenchSpec spec;
  spec.cfg.steps = steps, spec.cfg.dt = dt, spec.cfg.softening = softening, spec.cfg.seed = seed;
  spec.cfg.force = force, spec.cfg.pipeline = options_from(options);
  spec.reps = reps, spec.validate_n = validate_n;
  if (sizes.empty()) throw InputError("n: give at least one body count");
  check_pipeline_options(names, spec.cfg.pipeline);
  check_softening(names, spec.cfg.softening);
  for (long long n : sizes) {
    spec.cfg.n = n;
    check_config(spec.cfg, 1);
  }
  if (steps < 1 || reps < 1 || validate_n < 1) throw InputError("steps, reps and validate_n must be >= 1");
  if (uses_gl(names, false)) claim_gl_thread(ladder ? "ladder()" : "bench()");
  return interruptible([&](Reporter& report) {
    place_on_device(spec.cfg.pipeline);
    auto engine = make_engine(spec.cfg.pipeline);
    return to_json(bench_table(spec, names, sizes, ladder, *engine, report)).dump();
  });
}

}  // namespace

void register_runs(nb::module_& m) {
  m.def("info", &info);
  m.def("version", [] { return std::string(NBODY_VERSION); });
  m.def("pipeline_names", [] { return pipeline_names(); });
  m.def("ladder_names", [] { return ladder_names(); });
  m.def("ladder_table_names", [] { return ladder_table_names(); });
  m.def("option_defaults", [] {  // each option offered in Python: its key -> its default, from the option table
    nb::dict d;
    for (const OptionRow& row : option_table()) {
      if (row.python.empty()) continue;
      std::visit([&](auto v) {
        if constexpr (std::is_same_v<decltype(v), std::string_view>) d[std::string(row.key).c_str()] = std::string(v);
        else d[std::string(row.key).c_str()] = v;
      }, row.fallback);
    }
    return d;
  });
  m.def("canonical_name", &canonical_name, nb::arg("name"));
  m.def("initial_conditions", &initial_conditions, nb::arg("ic"), nb::arg("n"), nb::arg("n_given"), nb::arg("seed"),
        nb::arg("subset"));
  m.def("compare", &compare, nb::arg("names"), nb::arg("skip"), nb::arg("n"), nb::arg("n_given"), nb::arg("steps"),
        nb::arg("dt"), nb::arg("softening"), nb::arg("ic"), nb::arg("seed"), nb::arg("subset"), nb::arg("every"),
        nb::arg("energy_every"), nb::arg("validate_n"), nb::arg("force"), nb::arg("options"));
  m.def("explain", &explain_rows, nb::arg("n"), nb::arg("n_given"), nb::arg("steps"), nb::arg("dt"),
        nb::arg("softening"), nb::arg("ic"), nb::arg("seed"), nb::arg("subset"), nb::arg("force"));
  m.def("bench", &bench, nb::arg("names"), nb::arg("sizes"), nb::arg("steps"), nb::arg("reps"),
        nb::arg("validate_n"), nb::arg("seed"), nb::arg("dt"), nb::arg("softening"), nb::arg("force"),
        nb::arg("options"), nb::arg("ladder"));
}

}  // namespace nbody::python
