// nbody run: one pipeline, N steps, energy drift, optional PNG frames and final state.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "config.hpp"
#include "error.hpp"
#include "io.hpp"
#include "leapfrog.hpp"
#include "metrics.hpp"
#include "progress.hpp"
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
};

Energy energy_now(const Bodies& b, const Params& p) {
  return energy(b.pos, synchronise(b, p), p.eps2());
}

int run(RunArgs& a) {
  const std::string name = canonical_name(a.pipeline);
  check_config(a.cfg, 1);
  check_output_path(a.save, "--save");
  if (a.frames < 0) throw InputError("--frames " + std::to_string(a.frames) + ": must be >= 0");
  if (a.frames > 0 && a.out.empty()) throw InputError("--frames needs --out DIR");
  if (a.frames > 0 && !name.starts_with("gl:"))
    throw InputError("--frames renders through GL: it needs a gl:* pipeline, not " + name);

  Bodies bodies = initial_state(a.cfg);
  const Params params = a.cfg.params();
  std::unique_ptr<Pipeline> p = make_pipeline(name, a.cfg.pipeline);
  p->load(bodies, params);
  const Energy e0 = energy_now(bodies, params);

#ifdef NBODY_HAVE_GL
  std::unique_ptr<gl::FrameWriter> frames;
  if (a.frames > 0) {
    std::filesystem::create_directories(a.out);
    frames = std::make_unique<gl::FrameWriter>(bodies);
  }
  auto frame = [&](long long step) {
    if (!frames) return;
    char file[32];
    std::snprintf(file, sizeof file, "frame_%06lld.png", step);
    frames->write(*p, (std::filesystem::path(a.out) / file).string());
  };
#else
  auto frame = [](long long) {};
#endif

  const long long steps = a.cfg.steps;
  const long long batch = a.frames > 0 ? a.frames : std::max(1LL, steps / 100);
  Progress progress("run " + name, steps);
  const auto t0 = std::chrono::steady_clock::now();
  frame(0);
  for (long long done = 0; done < steps;) {
    const long long k = std::min(batch, steps - done);
    p->step(static_cast<int>(k));
    done += k;
    if (a.frames > 0) frame(done);
    progress.update(done);
  }
  p->read(bodies);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Energy e1 = energy_now(bodies, params);
  const double drift = relative_drift(e0.total(), e1.total());

  std::printf("%s: n=%zu steps=%lld dt=%g eps=%g ic=%s  wall %.3f s (%.3f ms/step)\n",
              name.c_str(), bodies.size(), steps, params.dt, params.softening, a.cfg.ic.c_str(),
              wall, steps > 0 ? 1e3 * wall / steps : 0.0);
  std::printf("energy: initial %.10g  final %.10g  relative drift %.3e\n", e0.total(), e1.total(),
              drift);
  if (a.frames > 0) std::printf("frames: %s\n", a.out.c_str());

  if (!a.save.empty()) {
    Bodies out = bodies;
    out.vel = synchronise(bodies, params);  // save v_n, not the leapfrog's v_{n-1/2}
    write_csv(a.save, out);
  }
  nlohmann::json j = {{"pipeline", name}};
  j.update(config_json(a.cfg, bodies.size()));
  j["wall_s"] = wall;
  j["energy"] = {{"initial", e0.total()}, {"final", e1.total()}, {"rel_drift", drift}};
  write_json(a.cfg.json, j);
  return 0;
}

}  // namespace

Command add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run one pipeline and report its energy drift");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("-p,--pipeline", a->pipeline,
                  "Pipeline: cpu64 | cpu32 | gl[:forcequad|gather|compute] | cuda[:gems31|...]")
      ->capture_default_str();
  add_common_options(*sub, a->cfg);
  add_pipeline_options(*sub, a->cfg.pipeline);
  sub->add_option("--frames", a->frames, "Write a PNG every K steps (gl:* pipelines)");
  sub->add_option("--out", a->out, "Folder for --frames (created if missing)");
  sub->add_option("--save", a->save, "Write the final state as CSV (x,y,z,vx,vy,vz,m)");
  return [a] { return run(*a); };
}

}  // namespace nbody
