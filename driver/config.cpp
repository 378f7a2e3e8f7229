#include "config.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "error.hpp"
#include "hdf5_io.hpp"
#include "initial_conditions.hpp"
#include "io.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "world.hpp"
#include "cuda_pipeline.hpp"  // plain C++: devices() is linked only with CUDA, option_help() always

namespace nbody {

namespace {

// A decimal integer in 0..2^64-1, nothing else: "-1" and "18446744073709551616" are refused
// instead of wrapping or saturating.
std::uint64_t parse_seed(const std::string& s) {
  const std::string t = s.size() > 1 ? s.substr(std::min(s.find_first_not_of('0'), s.size() - 1)) : s;
  const bool digits = !t.empty() && t.size() <= 20 &&
                      std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(t.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw CLI::ValidationError("--seed '" + s + "': must be an integer in 0..18446744073709551615");
  return v;
}

}  // namespace

bool Config::ic_is_file() const {
  const auto& gens = generator_names();
  return std::find(gens.begin(), gens.end(), ic) == gens.end();
}

void add_seed_option(CLI::App& app, Config& c, const std::string& help) {
  app.add_option_function<std::string>(
         "--seed", [&c](const std::string& s) { c.seed = parse_seed(s); }, help + " (0..2^64-1)")
      ->type_name("UINT64")
      ->default_str(std::to_string(c.seed));
}

void add_common_options(CLI::App& app, Config& c) {
  app.add_option("-n,--bodies", c.n,
                 "Number of bodies (for a file --ic: n of its bodies by --subset; default all)")
      ->capture_default_str()
      ->each([&c](const std::string&) { c.n_given = true; });
  app.add_option("--steps", c.steps, "Leapfrog steps")->capture_default_str();
  app.add_option("--dt", c.dt, "Time step")->capture_default_str();
  app.add_option("--softening", c.softening, "Softening length eps (> 0)")->capture_default_str();
  app.add_option("--ic", c.ic,
                 "Initial conditions: plummer | uniform | shell | expand | collision | FILE.bin "
                 "(Tipsy) | FILE.csv (x,y,z,vx,vy,vz,m) | FILE.h5 (HDF5 snapshot, ours or GADGET-style)")
      ->capture_default_str();
  add_seed_option(app, c, "Random seed for generated initial conditions and --subset random");
  app.add_option("--subset", c.subset,
                 "With -n below a file's count: first (the first n bodies, file order) | random "
                 "(n drawn with --seed, each species in proportion, masses scaled to the file's total)")
      ->capture_default_str();
  app.add_option("--json", c.json, "Write the results as JSON to FILE (- for stdout)");
  app.add_flag("--force", c.force,
               "Start even when the estimated time is above the limit (1 hour)");
}

void add_pipeline_options(CLI::App& app, PipelineOptions& o) {
  app.add_option("--gl-chunk", o.gl_chunk,
                 "GL force-quad chunk size in bodies per side (0: the largest the device allows)")
      ->capture_default_str();
  app.add_option("--gl-precision", o.gl_precision,
                 "GL body and force-quad storage: float (RGBA32F) | half (RGBA16F)")
      ->capture_default_str();
  auto help = [](const char* option) { return cuda::option_help(option); };  // the rungs' own rules
  app.add_option("--cuda-block", o.cuda_block, help("block"))->capture_default_str();
  app.add_option("--cuda-unroll", o.cuda_unroll, help("unroll"))->capture_default_str();
  app.add_option("--cuda-q", o.cuda_q, help("q"))->capture_default_str();
  app.add_option("--cuda-bodies", o.cuda_bodies, help("bodies"))->capture_default_str();
  app.add_option("--cuda-split", o.cuda_split, help("split"))->capture_default_str();
  app.add_option("--device", o.device,
                 "CUDA device index, and the EGL device tried first for gl:* (under mpirun: "
                 "default local rank mod the device count)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.device_given = true; });
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
    throw InputError("--ic '" + c.ic + "': the file holds no bodies");
  }
}

void check_config(const Config& c, int pipelines) {
  if (c.n <= 0)
    throw InputError("--bodies " + std::to_string(c.n) + ": must be > 0");
  // int32 indices on the GPUs; and the state must fit in memory, with room to spare.
  constexpr long long kMaxBodies = 2147483647LL;
  if (c.n > kMaxBodies)
    throw InputError("--bodies " + std::to_string(c.n) + ": the limit is " +
                     std::to_string(kMaxBodies) + " (32-bit body indices)");
  // The host's share: the state, its synchronised and staged copies, and each pipeline's own.
  const long long bytes_per_body = 56 /* Bodies */ + 64LL * std::max(pipelines, 1);
  const long long need = c.n * bytes_per_body;
  const long long avail = available_host_memory();
  if (avail > 0 && need > avail)
    throw InputError("--bodies " + std::to_string(c.n) + " needs about " + std::to_string(need >> 20) +
                     " MiB of host memory; this machine has " + std::to_string(avail >> 20) +
                     " MiB available (MemAvailable)");
  if (c.steps < 0) throw InputError("--steps " + std::to_string(c.steps) + ": must be >= 0");
  if (c.steps > 100000000)
    throw InputError("--steps " + std::to_string(c.steps) + ": the limit is 100000000");
  if (!std::isfinite(c.dt) || c.dt <= 0)
    throw InputError("--dt " + number_text(c.dt) + ": must be finite and > 0");
  if (!std::isfinite(c.softening) || c.softening < 0)
    throw InputError("--softening " + number_text(c.softening) + ": must be finite and > 0");
  if (c.softening == 0)
    throw InputError("--softening 0: must be > 0; the all-pairs sum includes j = i, whose term "
                     "is 0/0 without softening");
  if (!std::isnormal(c.params().eps2())) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "--softening %g: eps^2 = %g is out of double precision's range; "
                  "usable eps are about 1.5e-154 to 1e154", c.softening, c.params().eps2());
    throw InputError(buf);
  }
  if (c.subset != "first" && c.subset != "random")
    throw InputError("--subset '" + c.subset + "': must be first or random");
  if (c.subset == "random" && !c.ic_is_file())
    throw InputError("--subset random takes n bodies from a file --ic; --ic " + c.ic +
                     " generates exactly n");
  check_pipeline_options(c.pipeline);
  check_output_path(c.json, "--json");
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
    const std::size_t b = begin + block_begin(m, ex_.ranks(), ex_.rank());
    const std::size_t e = begin + block_begin(m, ex_.ranks(), ex_.rank() + 1);
    if (acc) acc->resize(pos.size());
    if (phi) phi->resize(pos.size());
    inner_->on_progress = on_progress;
    inner_->evaluate_rows(pos, eps2, b, e, acc, phi);
    if (acc) ex_.allgather(acc->data() + begin, sizeof(Vec3), m);
    if (phi) ex_.allgather(phi->data() + begin, sizeof(double), m);
  }
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

Bodies initial_bodies(const Config& c, std::vector<Species>* species) {
  // A file gives all its bodies unless -n asks for fewer.
  const auto n = static_cast<std::size_t>(!c.ic_is_file() || c.n_given ? c.n : 0);
  Bodies b = make_initial_conditions(c.ic, n, c.seed,
                                     c.subset == "random" ? Subset::Random : Subset::First, species);
  validate_bodies(b, "--ic " + c.ic);
  return b;
}

Start initial_state(const Config& c, Fp64Engine& engine, bool energy) {
  const auto t0 = std::chrono::steady_clock::now();
  Start s;
  s.bodies = initial_bodies(c, &s.species);
  s.vel0 = s.bodies.vel;
  const auto t1 = std::chrono::steady_clock::now();
  s.ic_s = std::chrono::duration<double>(t1 - t0).count();
  Progress progress("set-up (" + engine.name() + ": stagger" + (energy ? " and E_0" : "") + ")",
                    static_cast<long long>(s.bodies.size()));
  engine.on_progress = [&](std::size_t done, std::size_t) { progress.update(static_cast<long long>(done)); };
  s.energy = stagger(s.bodies, c.params(), engine, energy);
  engine.on_progress = nullptr;
  s.stagger_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  check_finite(s.bodies, "the initial state", 0);
  if (energy) {
    check_energy(s.energy, s.bodies, "the initial state", 0);
    const bool subset = c.ic_is_file() && c.n_given;
    if (subset && s.energy.total() > 0 && World::writer())
      std::fprintf(stderr,
                   "warning: the %zu bodies taken from %s by --subset %s are unbound (E_0 = %+.4g > 0)%s\n",
                   s.bodies.size(), c.ic.c_str(), c.subset.c_str(), s.energy.total(),
                   c.subset == "first" ? "; --subset random keeps the file's mix of species" : "");
  }
  return s;
}

Synchronised synchronise_shown(const Bodies& b, const Params& p, Fp64Engine& engine, bool energy,
                               const std::string& label) {
  Progress progress(label + " (" + engine.name() + ")", static_cast<long long>(b.size()));
  engine.on_progress = [&](std::size_t done, std::size_t) { progress.update(static_cast<long long>(done)); };
  Synchronised s = synchronise(b, p, engine, energy);
  engine.on_progress = nullptr;
  return s;
}

void check_finite(const Bodies& b, const std::string& what, long long step) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Vec4& p = b.pos[i];
    const Vec3& v = b.vel[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(v.x) &&
        std::isfinite(v.y) && std::isfinite(v.z))
      continue;
    char buf[256];
    std::snprintf(buf, sizeof buf, "at step %lld: body %zu is not finite (x = %g %g %g, v = %g %g %g)",
                  step, i, p.x, p.y, p.z, v.x, v.y, v.z);
    throw NonFinite(what + " " + buf + "; the integration is unstable (a smaller --dt or a larger "
                    "--softening may help)");
  }
}

void check_energy(const Energy& e, const Bodies& b, const std::string& what, long long step) {
  std::size_t massive = 0;  // two massive bodies at a finite distance have W < 0
  for (const auto& p : b.pos) massive += p.w > 0;
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

void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) write_output(path, j.dump(2) + "\n");
}

nlohmann::json options_json(const PipelineOptions& o) {
  return {{"gl_chunk", o.gl_chunk},       {"gl_precision", o.gl_precision}, {"cuda_block", o.cuda_block},
          {"cuda_unroll", o.cuda_unroll}, {"cuda_q", o.cuda_q},             {"cuda_bodies", o.cuda_bodies},
          {"cuda_split", o.cuda_split}};
}

PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where) {
  PipelineOptions o;
  if (!j.is_object()) throw InputError(where + ": the pipeline options are not an object");
  auto integer = [&](const char* key, int& out) {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw InputError(where + ": pipeline option " + key + " is missing or not an integer");
    const long long v = j[key].get<long long>();
    if (v < -2147483647LL || v > 2147483647LL) throw InputError(where + ": pipeline option " + key + " is out of range");
    out = static_cast<int>(v);
  };
  integer("gl_chunk", o.gl_chunk);
  integer("cuda_block", o.cuda_block);
  integer("cuda_unroll", o.cuda_unroll);
  integer("cuda_q", o.cuda_q);
  integer("cuda_bodies", o.cuda_bodies);
  integer("cuda_split", o.cuda_split);
  if (!j.contains("gl_precision") || !j["gl_precision"].is_string())
    throw InputError(where + ": pipeline option gl_precision is missing or not a string");
  o.gl_precision = j["gl_precision"].get<std::string>();
  return o;
}

nlohmann::json config_json(const Config& c, std::size_t n) {
  return {{"n", n},   {"steps", c.steps}, {"dt", c.dt},     {"softening", c.softening},
          {"ic", c.ic}, {"seed", c.seed},   {"subset", c.subset}, {"ranks", World::size()}};
}

}  // namespace nbody
