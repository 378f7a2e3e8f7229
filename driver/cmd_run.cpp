// nbody run: one pipeline, N steps, energy drift, optional PNG frames and final state.
//
// Set-up, simulation and diagnostics are timed apart. The float64 all-pairs work (the stagger and
// E_0 at the start, E at the end and every --energy-every K steps) runs on the fp64 engine
// (config.hpp: CUDA where there is a device), one pass each.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "config.hpp"
#include "cost.hpp"
#include "error.hpp"
#include "io.hpp"
#include "metrics.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "gl_pipeline.hpp"
#endif

namespace nbody {

namespace {

struct RunArgs {
  Config cfg;
  std::string pipeline = "gl";
  long long frames = 0;
  std::string out;
  std::string save;
  long long energy_every = 0;  // 0 = at the start and the end only
  bool no_energy = false;
  CLI::App* app = nullptr;
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void check_args(RunArgs& a, const std::string& name) {
  resolve_body_count(a.cfg);
  check_config(a.cfg, 1);
  check_output_path(a.save, "--save");
  check_distinct_outputs({{"--json", a.cfg.json}, {"--save", a.save}});
  if (a.frames < 0) throw InputError("--frames " + std::to_string(a.frames) + ": must be >= 0");
  if (a.frames > 0 && a.out.empty()) throw InputError("--frames needs --out DIR");
  if (a.frames == 0 && !a.out.empty())
    throw InputError("--out '" + a.out + "' is the folder for --frames, which was not given");
  if (a.frames > 0 && !name.starts_with("gl:"))
    throw InputError("--frames renders through GL: it needs a gl:* pipeline, not " + name);
  std::error_code ec;
  if (!a.out.empty() && std::filesystem::exists(a.out, ec) && !std::filesystem::is_directory(a.out, ec))
    throw InputError("--out '" + a.out + "' exists and is not a folder");
  if (a.frames > 0)  // the frames are outputs too: no other output may be one of them
    for (const auto& [option, path] : {std::pair{"--json", a.cfg.json}, std::pair{"--save", a.save}}) {
      const std::filesystem::path f(resolve_output(path)), dir(resolve_output(a.out + "/x"));
      if (!path.empty() && f.parent_path() == dir.parent_path() &&
          f.filename().string().starts_with("frame_") && f.extension() == ".png")
        throw InputError(std::string(option) + " '" + path + "' would be overwritten by a --frames PNG");
    }
  if (a.energy_every < 0)
    throw InputError("--energy-every " + std::to_string(a.energy_every) + ": must be >= 0");
  if (a.no_energy && a.energy_every > 0)
    throw InputError("--no-energy and --energy-every contradict each other: give one");
  if (a.frames > 0 && World::writer()) {  // made now, so that a folder that cannot be is bad input
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw InputError("--out '" + a.out + "': cannot create the folder: " + ec.message());
  }
  if (names_stdout(a.cfg.json) || names_stdout(a.save)) summary_to_stderr();
}

int run(RunArgs& a) {
  const auto t_start = Clock::now();
  const std::string name = canonical_name(a.pipeline);
  check_args(a, name);
  place_on_device(a.cfg.pipeline);
  const bool with_energy = !a.no_energy;
  const Params params = a.cfg.params();

  // Where the time goes, phase by phase (the JSON's "phases_s").
  nlohmann::json phases = nlohmann::json::object();
  auto t_phase = Clock::now();
  auto phase = [&](const char* what) {
    phases[what] = since(t_phase);
    t_phase = Clock::now();
  };
  std::unique_ptr<Fp64Engine> engine = make_engine(a.cfg.pipeline);
  std::unique_ptr<Pipeline> p;
  try {
    p = make_pipeline(name, a.cfg.pipeline);
  } catch (const Unavailable& e) {
    throw Unavailable(name + " cannot run here: " + std::string(e.what()));
  }
  p->distribute(World::exchange());
  World::validated();
  phase("devices");
  const long long steps = a.cfg.steps;
  {  // Refuse what cannot finish before an hour, before the initial state is even made.
    const double n2 = static_cast<double>(a.cfg.n) * static_cast<double>(a.cfg.n);
    const long long passes = 1 + (with_energy ? 1 + (a.energy_every > 0 ? steps / a.energy_every : 0) : 0) +
                             (a.save.empty() ? 0 : 1);
    // (a file --ic without -n has its count in a.cfg.n: resolve_body_count)
    std::vector<CostItem> cost{{engine->name() + " float64 passes", n2 * static_cast<double>(passes)},
                               {name + " steps", n2 * static_cast<double>(steps)}};
    if (total_interactions(cost) > kTrivialInteractions) {
      cost[0].per_s = measure_engine_rate(*engine, params, a.cfg.n);
      cost[1].per_s = measure_step_rate(*p, params, a.cfg.n);
      check_cost(cost, a.cfg.force);
    }
  }
  phase("estimate");

  Start start = initial_state(a.cfg, *engine, with_energy);
  const Deadline deadline(a.cfg.force, steps);
  Bodies& bodies = start.bodies;
  phases["initial_conditions"] = start.ic_s;
  phases["stagger"] = start.stagger_s;
  t_phase = Clock::now();
  p->load(bodies, params);
  phase("load");

#ifdef NBODY_HAVE_GL
  std::unique_ptr<gl::FrameWriter> frames;
  if (a.frames > 0) {
    frames = std::make_unique<gl::FrameWriter>(bodies);
  }
  auto frame = [&](long long step) {
    if (!frames) return;
    char file[32];
    std::snprintf(file, sizeof file, "frame_%06lld.png", step);
    write_output((std::filesystem::path(a.out) / file).string(), frames->png(*p));
  };
#else
  auto frame = [](long long) {};
#endif

  // Energy samples: E_0, every --energy-every K steps, and the end.
  nlohmann::json samples = nlohmann::json::array();
  if (with_energy) samples.push_back({{"step", 0}, {"total", start.energy.total()}});
  double diag_s = 0;  // float64 passes during the run, not counted as simulation
  auto sample = [&](long long step) -> Energy {
    const auto t0 = Clock::now();
    const Synchronised s = synchronise_shown(bodies, params, *engine, true, "energy at step " + std::to_string(step));
    check_energy(s.energy, bodies, name, step);
    samples.push_back({{"step", step}, {"total", s.energy.total()}});
    diag_s += since(t0);
    return s.energy;
  };

  // Step in batches; after each one the state is read back and checked for NaN and inf. A batch
  // doubles while it takes under a second, so that the read-backs cost little against the steps
  // (N = 2^20 on the H100: 4 read-backs in 10 steps). Frames and energy samples end batches too.
  long long batch = 1;
  const double setup_s = since(t_start);
  Progress progress("run " + name, steps);
  const auto t_sim = Clock::now();
  frame(0);
  for (long long done = 0; done < steps;) {
    long long k = std::min(batch, steps - done);
    if (a.frames > 0) k = std::min(k, a.frames - done % a.frames);
    if (a.energy_every > 0) k = std::min(k, a.energy_every - done % a.energy_every);
    const auto t_batch = Clock::now();
    p->step(static_cast<int>(k));
    done += k;
    p->read(bodies);
    check_finite(bodies, name, done);
    if (World::max(since(t_batch)) < 1.0) batch = std::min(2 * batch, steps);  // every rank alike
    deadline.check(since(t_sim), done);
    if (a.frames > 0 && done % a.frames == 0) frame(done);
    if (a.energy_every > 0 && done % a.energy_every == 0 && done < steps) sample(done);
    progress.update(done);
  }
  const double sim_s = since(t_sim) - diag_s;
  phases["simulation"] = sim_s;
  phases["energy_samples"] = diag_s;
  t_phase = Clock::now();

  Energy e1;
  Synchronised last;
  const bool need_sync = with_energy || !a.save.empty();
  if (need_sync) {
    last = synchronise_shown(bodies, params, *engine, with_energy, "final synchronise and energy");
    if (with_energy) {
      e1 = last.energy;
      check_energy(e1, bodies, name, steps);
      if (steps > 0) samples.push_back({{"step", steps}, {"total", e1.total()}});
    }
  }
  phase("final_energy");
  const double wall_s = since(t_start);
  const Energy e0 = start.energy;
  const double drift = relative_drift(e0.total(), e1.total());

  std::printf("%s: n=%zu steps=%lld dt=%g eps=%g ic=%s  set-up %.3f s, simulation %.3f s "
              "(%.3f ms/step), total %.3f s\n",
              name.c_str(), bodies.size(), steps, params.dt, params.softening, a.cfg.ic.c_str(),
              setup_s, sim_s, steps > 0 ? 1e3 * sim_s / steps : 0.0, wall_s);
  std::printf("fp64 engine: %s (%s)\n", engine->name().c_str(), engine->where().c_str());
  if (World::size() > 1) std::printf("ranks: %d (each computes and integrates its own block of bodies)\n", World::size());
  if (with_energy)
    std::printf("energy: initial %.10g  final %.10g  relative drift %.3e\n", e0.total(), e1.total(),
                drift);
  else
    std::printf("energy: not measured (--no-energy)\n");
  if (a.frames > 0) std::printf("frames: %s\n", a.out.c_str());

  if (!a.save.empty()) {
    Bodies out = bodies;
    out.vel = last.vel;  // save v_n, not the leapfrog's v_{n-1/2}
    write_csv(a.save, out);
    phase("save");
  }
  nlohmann::json j = {{"pipeline", name}};
  j.update(config_json(a.cfg, bodies.size()));
  j["fp64_engine"] = engine->name();
  j["setup_s"] = setup_s;
  j["sim_s"] = sim_s;
  j["wall_s"] = since(t_start);
  j["phases_s"] = phases;
  if (with_energy) {
    j["energy"] = {{"initial", e0.total()}, {"final", e1.total()}, {"rel_drift", drift}};
    j["energy_samples"] = samples;
  } else {
    j["energy"] = nullptr;
  }
  write_json(a.cfg.json, j);
  return 0;
}

}  // namespace

Command add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run one pipeline and report its energy drift");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("-p,--pipeline", a->pipeline,
                  "Pipeline: cpu64 | cpu32 | gl[:forcequad|gather|compute] | cuda[:tuned|tuned-fp64|"
                  "gems31|gems31-fp64|symmetric]")
      ->capture_default_str();
  add_common_options(*sub, a->cfg);
  add_pipeline_options(*sub, a->cfg.pipeline);
  sub->add_option("--frames", a->frames, "Write a PNG every K steps (gl:* pipelines; 0: none)")
      ->capture_default_str();
  sub->add_option("--out", a->out, "Folder for --frames (created if missing)");
  sub->add_option("--save", a->save, "Write the final state as CSV (x,y,z,vx,vy,vz,m; - for stdout)");
  sub->add_option("--energy-every", a->energy_every,
                  "Also measure the energy every K steps (one float64 pass each; 0: start and end only)")
      ->capture_default_str();
  sub->add_flag("--no-energy", a->no_energy,
                "Measure no energy: skips the float64 pass at the end (E_0 costs nothing extra: it "
                "comes with the stagger's pass, which every run makes)");
  a->app = sub;
  return [a] { return run(*a); };
}

}  // namespace nbody
