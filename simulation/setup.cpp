#include "setup.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "error.hpp"
#include "options.hpp"
#include "hdf5_io.hpp"
#include "initial_conditions.hpp"
#include "io.hpp"
#include "key_ranges.hpp"
#include "parallel.hpp"
#include "world.hpp"
#include "cuda_pipeline.hpp"  // plain C++: devices() is linked only with CUDA, option_help() always

namespace nbody {

bool Config::ic_is_file() const {
  const auto& gens = generator_names();
  return std::find(gens.begin(), gens.end(), ic) == gens.end();
}

long long available_host_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return static_cast<long long>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
}

void resolve_body_count(Config& c) {
  if (!c.ic_is_file() || c.n_given) return;
  // A name that is neither a generator nor a body file is left to initial_bodies(), whose
  // message lists what --ic accepts.
  bool body_file = false;
  for (const char* ext : {".csv", ".bin", ".tipsy", ".std"}) body_file = body_file || ends_with_ci(c.ic, ext);
  if (body_file) c.n = static_cast<long long>(count_bodies(c.ic));
  if (ends_with_ci(c.ic, ".h5") || ends_with_ci(c.ic, ".hdf5"))
    c.n = static_cast<long long>(count_hdf5_bodies(c.ic));
  if ((body_file || ends_with_ci(c.ic, ".h5") || ends_with_ci(c.ic, ".hdf5")) && c.n == 0) {
    // The reader names what is wrong with the file (truncated, a folder, ...); one it reads
    // without complaint but finds empty holds no bodies. Never "--bodies 0", an option not given.
    make_initial_conditions(c.ic, 0, c.seed, Subset::First, nullptr);
    throw InputError(option("ic") + " '" + c.ic + "': the file holds no bodies");
  }
}

void check_chunk(long long chunk, long long n) {
  const long long chunks = chunk > 0 ? (n + chunk - 1) / chunk : 1;
  if (chunks > kMaxChunksPerSide)
    throw InputError(option("gl_chunk") + " " + std::to_string(chunk) + " cuts " + std::to_string(n) +
                     " bodies into " + std::to_string(chunks) + " chunks a side; the limit is " +
                     std::to_string(kMaxChunksPerSide) + " (" + option("gl_chunk") + " " +
                     std::to_string((n + kMaxChunksPerSide - 1) / kMaxChunksPerSide) + " or more, or 0)");
}

void check_config(const Config& c, int pipelines) {
  if (c.n <= 0)
    throw InputError(option("n") + " " + std::to_string(c.n) + ": must be > 0");
  // int32 indices on the GPUs; and the state must fit in memory, with room to spare.
  constexpr long long kMaxBodies = 2147483647LL;
  if (c.n > kMaxBodies)
    throw InputError(option("n") + " " + std::to_string(c.n) + ": the limit is " +
                     std::to_string(kMaxBodies) + " (32-bit body indices)");
  // The host's share: the state, its synchronised and staged copies, and each pipeline's own.
  const long long bytes_per_body = 56 /* Bodies */ + 64LL * std::max(pipelines, 1);
  const long long need = c.n * bytes_per_body;
  const long long avail = available_host_memory();
  if (avail > 0 && need > avail)
    throw InputError(option("n") + " " + std::to_string(c.n) + " needs about " + std::to_string(need >> 20) +
                     " MiB of host memory; this machine has " + std::to_string(avail >> 20) +
                     " MiB available (MemAvailable)");
  if (c.steps < 0) throw InputError(option("steps") + " " + std::to_string(c.steps) + ": must be >= 0");
  if (c.steps > kMaxSteps)
    throw InputError(option("steps") + " " + std::to_string(c.steps) + ": the limit is " + std::to_string(kMaxSteps));
  if (!std::isfinite(c.dt) || c.dt <= 0)
    throw InputError(option("dt") + " " + number_text(c.dt) + ": must be finite and > 0");
  if (!std::isfinite(c.softening) || c.softening < 0)
    throw InputError(option("softening") + " " + number_text(c.softening) + ": must be finite and > 0");
  if (c.softening == 0)
    throw InputError(option("softening") + " 0: must be > 0; the all-pairs sum includes j = i, whose term "
                     "is 0/0 without softening");
  if (!std::isnormal(c.params().eps2())) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %g: eps^2 = %g is out of double precision's range; "
                  "usable eps are about 1.5e-154 to 1e154", option("softening").c_str(), c.softening, c.params().eps2());
    throw InputError(buf);
  }
  if (c.subset != "first" && c.subset != "random")
    throw InputError(option("subset") + " '" + c.subset + "': must be first or random");
  if (c.subset == "random" && !c.ic_is_file())
    throw InputError(option("subset") + " random takes n bodies from a file " + option("ic") + "; " + option("ic") + " " + c.ic +
                     " generates exactly n");
  check_chunk(c.pipeline.gl_chunk, c.n);
  check_pipeline_options(c.pipeline);
}

namespace {

// Distributed runs: each rank evaluates its own block of rows and the ranks gather the rest, so
// the float64 set-up is spread like the steps (never one host doing it for all).
class DistributedEngine final : public Fp64Engine {
 public:
  DistributedEngine(std::unique_ptr<Fp64Engine> inner, Exchange& ex)
      : inner_(std::move(inner)), ex_(ex) {}
  // The rows [begin, end) asked for, split in blocks across the ranks, then gathered.
  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t m = end - begin;
    const Partition part(ex_.ranks());
    const std::size_t b = begin + part.begin(m, ex_.rank()), e = begin + part.begin(m, ex_.rank() + 1);
    if (acc) acc->resize(pos.size());
    if (phi) phi->resize(pos.size());
    inner_->on_progress = on_progress;
    inner_->evaluate_rows(pos, eps2, b, e, acc, phi);
    if (acc) ex_.allgather(acc->data() + begin, sizeof(Vec3), m, part);
    if (phi) ex_.allgather(phi->data() + begin, sizeof(double), m, part);
  }
  // A sample (the tree's check: 1024 rows) split in blocks of its rows across the ranks, each rank's
  // block evaluated by its engine's own evaluate_sample (the front built where it runs), then
  // gathered: no rank copies or zeroes arrays of N for it (through evaluate_rows, the base class's
  // front and outputs of N took 3 s at 2^26 on every rank, 22 s at 2^28). The same bits for a
  // given number of ranks; against one process, a row's j are summed in another order.
  void evaluate_sample(const std::vector<Vec4>& pos, double eps2, const std::vector<std::size_t>& idx,
                       std::vector<Vec3>* acc, std::vector<double>* phi) override {
    const std::size_t m = idx.size();
    const Partition part(ex_.ranks());
    const std::size_t b = part.begin(m, ex_.rank()), e = part.begin(m, ex_.rank() + 1);
    const std::vector<std::size_t> mine(idx.begin() + static_cast<std::ptrdiff_t>(b), idx.begin() + static_cast<std::ptrdiff_t>(e));
    std::vector<Vec3> a;
    std::vector<double> p;
    inner_->on_progress = on_progress;
    inner_->evaluate_sample(pos, eps2, mine, acc ? &a : nullptr, phi ? &p : nullptr);
    if (acc) {
      acc->resize(m);
      std::copy(a.begin(), a.end(), acc->begin() + static_cast<std::ptrdiff_t>(b));
      ex_.allgather(acc->data(), sizeof(Vec3), m, part);
    }
    if (phi) {
      phi->resize(m);
      std::copy(p.begin(), p.end(), phi->begin() + static_cast<std::ptrdiff_t>(b));
      ex_.allgather(phi->data(), sizeof(double), m, part);
    }
  }
  Fp64Engine& local() override { return inner_->local(); }
  std::string name() const override { return inner_->name(); }
  std::string where() const override {
    return inner_->where() + ", " + std::to_string(ex_.ranks()) + " ranks";
  }

 private:
  std::unique_ptr<Fp64Engine> inner_;
  Exchange& ex_;
};

// cpu64 on a machine whose CUDA device cannot run this binary's kernels: where() says why.
class FallbackEngine final : public Fp64Engine {
 public:
  FallbackEngine(std::unique_ptr<Fp64Engine> inner, std::string why) : inner_(std::move(inner)), why_(std::move(why)) {}
  void evaluate_rows(const std::vector<Vec4>& pos, double eps2, std::size_t begin, std::size_t end,
                     std::vector<Vec3>* acc, std::vector<double>* phi) override {
    inner_->on_progress = on_progress;
    inner_->evaluate_rows(pos, eps2, begin, end, acc, phi);
  }
  std::string name() const override { return inner_->name(); }
  std::string where() const override { return inner_->where() + "; not on the GPU: " + why_; }

 private:
  std::unique_ptr<Fp64Engine> inner_;
  std::string why_;
};

}  // namespace

std::unique_ptr<Fp64Engine> make_engine([[maybe_unused]] const PipelineOptions& o) {
  std::unique_ptr<Fp64Engine> engine;
#ifdef NBODY_HAVE_CUDA
  std::string no_device;
  if (!cuda::devices(no_device).empty()) {  // a device, but perhaps not one this binary fits
    try {
      engine = cuda::make_fp64_engine(o.device);
    } catch (const Unavailable& e) {
      engine = std::make_unique<FallbackEngine>(make_cpu64_engine(), e.what());
    }
  }
#endif
  if (!engine) engine = make_cpu64_engine();
  if (Exchange* ex = World::exchange()) return std::make_unique<DistributedEngine>(std::move(engine), *ex);
  return engine;
}

void place_on_device(PipelineOptions& o) {
  if (o.device_given || World::size() == 1) return;
  o.device = World::local_rank();  // GL takes it mod its EGL device count
#ifdef NBODY_HAVE_CUDA
  std::string reason;
  const auto devs = cuda::devices(reason);
  if (!devs.empty()) o.device = World::local_rank() % static_cast<int>(devs.size());
#endif
}

std::vector<Pipeline*> Made::pointers() const {
  std::vector<Pipeline*> out;
  for (const auto& p : pipelines) out.push_back(p.get());
  return out;
}

namespace {

// Every rung under IfUnavailable::Fail, else only `must`: one that cannot run is an error.
bool must_run(IfUnavailable policy, const std::string& must, const std::string& name) {
  return policy == IfUnavailable::Fail || name == must;
}

// Each rung made, or why it cannot be (why[k] empty where made[k] is).
struct Attempts {
  std::vector<std::unique_ptr<Pipeline>> made;
  std::vector<std::string> why;
  std::exception_ptr must_failed;  // Skip: thrown once the ranks have agreed (no rank leaves them waiting)
};

Attempts make_each(const std::vector<std::string>& names, const PipelineOptions& options, IfUnavailable policy,
                   const std::string& must) {
  Attempts a;
  a.made.resize(names.size());
  a.why.resize(names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    try {
      // The rung's own rules alone: an option for other rungs of the set is theirs, not refused here.
      if (!must_run(policy, must, names[k])) resolve_options(rung(names[k]), options);
      a.made[k] = make_pipeline(names[k], options);
    } catch (const Unavailable& e) {
      a.why[k] = e.what();
    } catch (const InputError& e) {  // skipped only: a rung that cannot take the options
      if (policy == IfUnavailable::Fail) throw;
      if (must_run(policy, must, names[k])) a.must_failed = std::current_exception();
      a.why[k] = e.what();
    }
  }
  return a;
}

// Distributed, a rung that may be skipped runs only if every rank could make it (the ranks must
// step the same list), so the ranks agree first and only then throw or skip. Where every rung
// must run, the rank that cannot throws its own reason (World::fail() agrees on the exit).
void agree_across_ranks(IfUnavailable policy, std::vector<std::string>& why) {
  for (std::size_t k = 0; policy == IfUnavailable::Skip && World::size() > 1 && k < why.size(); ++k)
    if (World::min(why[k].empty() ? 1 : 0) == 0 && why[k].empty())
      why[k] = "cannot run on every rank (another rank reports it unavailable)";
}

// The rungs made, in the order asked (under mpirun only those that run distributed); those that may be skipped and cannot run are
// listed with the reason.
Made keep_runnable(const std::vector<std::string>& names, IfUnavailable policy, const std::string& must,
                   Attempts& a) {
  Made out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    if (!a.why[k].empty()) {
      if (must_run(policy, must, name)) throw Unavailable(name + " cannot run here: " + a.why[k]);
      out.skipped.emplace_back(name, a.why[k]);
      continue;
    }
    if (World::size() > 1 && !rung(name).distributable()) {  // the registry's fact (decomposition.hpp)
      if (must_run(policy, must, name)) throw InputError(name + " does not run distributed (one process only)");
      out.skipped.emplace_back(name, "does not run distributed (one process only)");
      continue;
    }
    out.pipelines.push_back(std::move(a.made[k]));
    out.names.push_back(name);
  }
  return out;
}

}  // namespace

Made make_rungs(const std::vector<std::string>& names, const PipelineOptions& options, IfUnavailable policy,
                const std::string& must, const std::function<void(const Made&)>& check) {
  Attempts tried = make_each(names, options, policy, must);
  agree_across_ranks(policy, tried.why);
  if (tried.must_failed) std::rethrow_exception(tried.must_failed);
  Made out = keep_runnable(names, policy, must, tried);
  if (check) check(out);
  World::validated();
  return out;
}

Bodies initial_bodies(const Config& c, std::vector<Species>* species) {
  // A file gives all its bodies unless -n asks for fewer.
  const auto n = static_cast<std::size_t>(!c.ic_is_file() || c.n_given ? c.n : 0);
  Bodies b = make_initial_conditions(c.ic, n, c.seed,
                                     c.subset == "random" ? Subset::Random : Subset::First, species);
  // A subset of a file is named as one: its bodies may be wrong where the whole file is not.
  validate_bodies(b, option("ic") + " " + c.ic +
                         (c.ic_is_file() && c.n_given ? " (" + option("n") + " " + std::to_string(c.n) + ", " +
                                                            option("subset") + " " + c.subset + ")"
                                                      : ""));
  return b;
}

namespace {

// s.bodies staggered by one pass of `engine` (E_0 from it when `energy`), checked.
void stagger_start(Start& s, const Params& params, Fp64Engine& engine, bool energy, Reporter& report,
                   Evaluation* keep) {
  const auto t1 = std::chrono::steady_clock::now();
  const auto task = report.begin("set-up (" + engine.name() + ": stagger" + (energy ? " and E_0" : "") + ")",
                                 static_cast<long long>(s.bodies.size()));
  engine.on_progress = [&](std::size_t done, std::size_t) { task->update(static_cast<long long>(done)); };
  s.energy = stagger(s.bodies, params, engine, energy, keep);
  engine.on_progress = nullptr;
  s.stagger_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  check_finite(s.bodies, "the initial state", 0);
  if (energy) check_energy(s.energy, s.bodies, "the initial state", 0);
}

}  // namespace

Start staggered_state(Bodies bodies, const Params& params, Fp64Engine& engine, bool energy, Reporter& report,
                      Evaluation* keep) {
  Start s = unstaggered_state(std::move(bodies));
  stagger_start(s, params, engine, energy, report, keep);
  return s;
}

Start unstaggered_state(Bodies bodies) {
  Start s;
  s.bodies = std::move(bodies);
  s.vel0 = parallel_copy(s.bodies.vel);
  return s;
}

Start made_state(const Config& c, const std::vector<std::string>& held_by) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Species> species;
  Bodies bodies = initial_bodies(c, &species);
  for (const std::string& name : held_by) check_state_fits(bodies, name, option("ic") + " " + c.ic);
  Start s = unstaggered_state(std::move(bodies));
  s.species = std::move(species);
  s.ic_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

Start initial_state(const Config& c, Fp64Engine& engine, bool energy, Reporter& report, Evaluation* keep,
                    const std::vector<std::string>& held_by) {
  Start s = made_state(c, held_by);
  stagger_start(s, c.params(), engine, energy, report, keep);
  if (energy) warn_if_unbound(c, s.bodies.size(), s.energy, report);
  return s;
}

OwnBlock own_block(const Config& c, const Bodies* given, Exchange& ex, const std::string& held_by, std::size_t spare) {
  namespace kr = key_ranges;
  const auto t0 = std::chrono::steady_clock::now();
  OwnBlock o;
  const auto cut = [&](const Bodies& whole) {
    o.n = whole.size();
    o.first = block_begin(o.n, ex.ranks(), ex.rank());
    const std::size_t end = block_begin(o.n, ex.ranks(), ex.rank() + 1);
    o.bodies.pos.reserve(end - o.first + spare);
    o.bodies.pos.assign(whole.pos.begin() + static_cast<std::ptrdiff_t>(o.first), whole.pos.begin() + static_cast<std::ptrdiff_t>(end));
    o.bodies.vel.assign(whole.vel.begin() + static_cast<std::ptrdiff_t>(o.first), whole.vel.begin() + static_cast<std::ptrdiff_t>(end));
  };
  if (given) {
    cut(*given);
  } else if (is_generator(c.ic)) {
    o.n = static_cast<std::size_t>(c.n);
    o.first = block_begin(o.n, ex.ranks(), ex.rank());
    o.bodies = generated_part(
        c.ic, o.n, c.seed, o.first, block_begin(o.n, ex.ranks(), ex.rank() + 1),
        [&](const std::vector<MassSums>& mine) {  // every rank's, in rank order
          return kr::records_of<MassSums>(ex.allgatherv(kr::bytes_of(mine)));
        },
        spare);
    o.species = {{"bodies", o.n, true}};
    // (A generator's bodies are finite with positive masses, and fit float32: nothing to check.)
  } else {
    Start whole = made_state(c, {held_by});
    o.species = std::move(whole.species);
    cut(whole.bodies);
  }
  double massive = 0;  // every rank's, added: the energies' check is the same on every rank
  for (const double m : ex.all(static_cast<double>(massive_bodies(o.bodies)))) massive += m;
  o.massive = static_cast<std::size_t>(massive);
  o.ic_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

void warn_if_unbound(const Config& c, std::size_t n, const Energy& e0, Reporter& report) {
  if (!(c.ic_is_file() && c.n_given) || e0.total() <= 0) return;  // a subset of a file, unbound
  char buf[300];
  const std::string subset_option = option("subset");
  const std::string hint = c.subset == "first" ? "; " + subset_option + " random keeps the file's mix of species" : "";
  std::snprintf(buf, sizeof buf, "the %zu bodies taken from %s by %s %s are unbound (E_0 = %+.4g > 0)%s", n,
                c.ic.c_str(), subset_option.c_str(), c.subset.c_str(), e0.total(), hint.c_str());
  report.warn(buf);
}

Synchronised synchronise_reported(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy,
                                  const std::string& label, Reporter& report, std::vector<Vec3>* acc) {
  const auto task = report.begin(label + " (" + engine.name() + ")", static_cast<long long>(b.size()));
  engine.on_progress = [&](std::size_t done, std::size_t) { task->update(static_cast<long long>(done)); };
  Synchronised s = synchronise(b, p, engine, energy, acc);
  engine.on_progress = nullptr;
  return s;
}

void check_finite(const Bodies& b, const std::string& what, long long step) {
  const std::size_t i = first_where(b.size(), [&](std::size_t k) {
    const Vec4& p = b.pos[k];
    const Vec3& v = b.vel[k];
    return !(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(v.x) &&
             std::isfinite(v.y) && std::isfinite(v.z));
  });
  if (i < b.size()) {
    const Vec4& p = b.pos[i];
    const Vec3& v = b.vel[i];
    char buf[256];
    std::snprintf(buf, sizeof buf, "at step %lld: body %zu is not finite (x = %g %g %g, v = %g %g %g)",
                  step, i, p.x, p.y, p.z, v.x, v.y, v.z);
    throw NonFinite(what + " " + buf + "; the integration is unstable (a smaller " + option("dt") + " or a larger " +
                    option("softening") + " may help)");
  }
}

void check_state_fits(const Bodies& b, const std::string& name, const std::string& where) {
  if (rung(name).fp64_forces) return;
  constexpr double kMax = std::numeric_limits<float>::max();
  const auto values = [&](std::size_t i) {
    return std::array<double, 7>{b.pos[i].x, b.pos[i].y, b.pos[i].z, b.vel[i].x, b.vel[i].y, b.vel[i].z, b.pos[i].w};
  };
  const auto beyond = [&](double x) { return std::abs(x) > kMax; };  // (NaN: validate_bodies')
  const std::size_t i = first_where(b.size(), [&](std::size_t k) {
    const auto v = values(k);
    return std::any_of(v.begin(), v.end(), beyond);
  });
  if (i == b.size()) return;
  static const char* const kNames[7] = {"x", "y", "z", "vx", "vy", "vz", "mass"};
  const auto v = values(i);
  const auto k = static_cast<std::size_t>(std::find_if(v.begin(), v.end(), beyond) - v.begin());
  throw InputError(where + ": body " + std::to_string(i) + "'s " + kNames[k] + " = " + number_text(v[k]) +
                   " is beyond float32's range (3.4e+38), in which " + name +
                   " computes; a rung with float64 forces (cpu64 and the -fp64 rungs) takes it");
}

std::size_t massive_bodies(const Bodies& b) {
  // (counted on every core: a whole number)
  return static_cast<std::size_t>(block_sum(b.size(), [&](std::size_t begin, std::size_t end) {
    double k = 0;
    for (std::size_t i = begin; i < end; ++i) k += b.pos[i].w > 0;
    return k;
  }));
}

void check_energy(const Energy& e, const Bodies& b, const std::string& what, long long step) {
  check_energy(e, massive_bodies(b), what, step);
}

void check_energy(const Energy& e, std::size_t massive, const std::string& what, long long step) {
  // Two massive bodies at a finite distance have W < 0.
  char buf[200];
  if (!std::isfinite(e.total())) {
    std::snprintf(buf, sizeof buf, " at step %lld: the energy is not finite (kinetic %g, potential %g)",
                  step, e.kinetic, e.potential);
    throw NonFinite(what + buf);
  }
  if (massive >= 2 && e.potential == 0) {
    std::snprintf(buf, sizeof buf, " at step %lld: the potential energy of %zu massive bodies is "
                  "exactly 0 (it underflowed)", step, massive);
    throw NonFinite(what + buf);
  }
}

}  // namespace nbody
