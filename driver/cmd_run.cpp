// nbody run: one pipeline, N steps, energy drift; optional PNG frames, snapshots, checkpoints and
// the final state. `--resume FILE` continues a checkpointed run bit for bit.
//
// Set-up, simulation and diagnostics are timed apart. The float64 all-pairs work (the stagger and
// E_0 at the start; E, and the synchronised velocities of a snapshot, at the end and every K
// steps) runs on the fp64 engine (config.hpp: CUDA where there is a device), one pass each.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "checkpoint.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "cost.hpp"
#include "error.hpp"
#include "io.hpp"
#include "metrics.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "snapshots.hpp"
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
  std::string colour = "speed";  // frames: plain | speed | species
  double view_radius = 0, view_tilt = 30, view_yaw = 0;
  std::string out;
  std::string save;
  long long energy_every = 0;  // 0 = at the start and the end only
  bool no_energy = false;
  long long snapshot_every = 0;
  std::string snapshot_format = "hdf5";
  long long checkpoint_every = 0;
  std::string resume;
  CLI::App* app = nullptr;
};

// What a checkpoint brings to a resumed run besides the state.
struct Resumed {
  Checkpoint checkpoint;
  long long step = 0;             // the step it was written at
  std::optional<Energy> e0;       // the run's E_0 (none under --no-energy)
  nlohmann::json samples = nlohmann::json::array();  // the energy samples so far
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool given(const RunArgs& a, const std::string& option) { return a.app->get_option(option)->count() > 0; }

// Options that define the simulation come from the checkpoint on a resume: a different value
// would not continue the same run. Outputs, --steps, --force and --device may be given.
constexpr const char* kFromCheckpoint[] = {
    "--bodies",     "--dt",          "--softening",  "--ic",          "--seed",
    "--subset",     "--gl-chunk",    "--gl-precision", "--cuda-block", "--cuda-unroll",
    "--cuda-q",     "--cuda-bodies", "--cuda-split", "--energy-every", "--no-energy"};

nlohmann::json checkpoint_meta(const RunArgs& a, const std::string& name, std::size_t n, long long step,
                               long long last, const std::optional<Energy>& e0, const nlohmann::json& samples) {
  return {{"format", "nbody run checkpoint"},
          {"pipeline", name},
          {"options", options_json(a.cfg.pipeline)},
          {"n", n},
          {"step", step},
          {"last_step", last},
          {"dt", a.cfg.dt},
          {"softening", a.cfg.softening},
          {"ic", a.cfg.ic},
          {"seed", a.cfg.seed},
          {"subset", a.cfg.subset},
          {"energy_every", a.energy_every},
          {"no_energy", a.no_energy},
          {"energy", e0 ? nlohmann::json{{"kinetic", e0->kinetic}, {"potential", e0->potential}} : nlohmann::json()},
          {"energy_samples", samples}};
}

// Reads --resume's checkpoint into `a` (pipeline, options, configuration). Throws InputError
// naming the block or field that is wrong, or the option that may not be given again.
Resumed apply_checkpoint(RunArgs& a) {
  Resumed r;
  r.checkpoint = read_checkpoint(a.resume);
  const std::string where = "checkpoint '" + a.resume + "'";
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(r.checkpoint.meta);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": block META is not valid JSON (" + e.what() + ")");
  }
  auto field = [&](const char* key, auto check) -> const nlohmann::json& {
    if (!m.is_object() || !m.contains(key) || !check(m[key]))
      throw InputError(where + ": block META lacks a valid '" + key + "'");
    return m[key];
  };
  auto is_int = [](const nlohmann::json& j) { return j.is_number_integer(); };
  auto is_num = [](const nlohmann::json& j) { return j.is_number(); };
  auto is_str = [](const nlohmann::json& j) { return j.is_string(); };
  auto is_bool = [](const nlohmann::json& j) { return j.is_boolean(); };
  if (field("format", is_str) != "nbody run checkpoint")
    throw InputError(where + ": block META is not a run checkpoint's");
  std::string name;
  try {
    name = canonical_name(field("pipeline", is_str).get<std::string>());
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  if (given(a, "--pipeline") && canonical_name(a.pipeline) != name)
    throw InputError(where + " is of " + name + ": it resumes on that pipeline, not on " +
                     canonical_name(a.pipeline) + " (leave out --pipeline)");
  for (const char* option : kFromCheckpoint)
    if (given(a, option))
      throw InputError(std::string(option) + " comes from the checkpoint on --resume (the resumed run "
                       "is the same run); give only outputs, --steps, --force and --device");
  const int bits = state_bits(name);
  if (r.checkpoint.bits != bits)
    throw InputError(where + " holds " + std::to_string(r.checkpoint.bits) + "-bit state, but " + name +
                     "'s is " + std::to_string(bits) + "-bit");
  const auto n = field("n", is_int).get<long long>();
  if (n != static_cast<long long>(r.checkpoint.state.size()))
    throw InputError(where + ": block META says n = " + std::to_string(n) + " but SHAPE holds " +
                     std::to_string(r.checkpoint.state.size()) + " bodies");
  r.step = field("step", is_int).get<long long>();
  const long long last = field("last_step", is_int).get<long long>();
  if (r.step < 0 || last < r.step)
    throw InputError(where + ": block META's step " + std::to_string(r.step) + " and last_step " +
                     std::to_string(last) + " disagree");

  a.pipeline = name;
  a.cfg.pipeline = options_from_json(field("options", [](const nlohmann::json& j) { return j.is_object(); }),
                                     where);
  a.cfg.n = n;
  a.cfg.n_given = true;
  a.cfg.dt = field("dt", is_num).get<double>();
  a.cfg.softening = field("softening", is_num).get<double>();
  a.cfg.ic = field("ic", is_str).get<std::string>();
  a.cfg.seed = field("seed", [](const nlohmann::json& j) { return j.is_number_unsigned(); }).get<std::uint64_t>();
  a.cfg.subset = field("subset", is_str).get<std::string>();
  a.energy_every = field("energy_every", is_int).get<long long>();
  a.no_energy = field("no_energy", is_bool).get<bool>();
  if (a.energy_every < 0 || (a.no_energy && a.energy_every > 0))
    throw InputError(where + ": block META's energy_every " + std::to_string(a.energy_every) + " and no_energy " +
                     (a.no_energy ? "true" : "false") + " do not go together");
  if (!given(a, "--steps")) {
    a.cfg.steps = last - r.step;
    if (a.cfg.steps == 0)
      throw InputError(where + " is at step " + std::to_string(r.step) + ", the last of its run: give "
                       "--steps M to run M more");
  }
  const nlohmann::json& e = field("energy", [](const nlohmann::json& j) { return j.is_null() || j.is_object(); });
  if (!a.no_energy) {
    if (!e.is_object() || !e.contains("kinetic") || !e.contains("potential") || !e["kinetic"].is_number() ||
        !e["potential"].is_number())
      throw InputError(where + ": block META lacks the energy baseline E_0");
    r.e0 = Energy{e["kinetic"].get<double>(), e["potential"].get<double>()};
  }
  r.samples = field("energy_samples", [](const nlohmann::json& j) { return j.is_array(); });
  return r;
}

void check_args(RunArgs& a, const std::string& name) {
  expect_folder(a.out);  // made once every check (and the estimate) has passed
  if (a.resume.empty()) {
    resolve_body_count(a.cfg);
    check_config(a.cfg, 1);
    check_pipeline_options({name}, a.cfg.pipeline);
  } else {
    try {
      check_config(a.cfg, 1);
      check_pipeline_options({name}, a.cfg.pipeline);
    } catch (const InputError& e) {  // a value from the checkpoint, or --json
      throw InputError("on --resume '" + a.resume + "' (the run's options come from it): " + e.what());
    }
  }
  check_output_path(a.save, "--save");
  check_distinct_outputs({{"--json", a.cfg.json}, {"--save", a.save}});
  for (const auto& [option, value] : {std::pair{"--frames", a.frames}, std::pair{"--snapshot-every", a.snapshot_every},
                                      std::pair{"--checkpoint-every", a.checkpoint_every}}) {
    if (value < 0) throw InputError(std::string(option) + " " + std::to_string(value) + ": must be >= 0");
    if (value > 0 && a.out.empty()) throw InputError(std::string(option) + " needs --out DIR");
  }
  if (a.snapshot_every > 0) check_snapshot_format(a.snapshot_format);
  else if (given(a, "--snapshot-format"))
    throw InputError("--snapshot-format is for --snapshot-every K, which was not given");
  if (!given(a, "--frames") || a.frames == 0)
    for (const char* option : {"--colour", "--view-radius", "--view-tilt", "--view-yaw"})
      if (given(a, option)) throw InputError(std::string(option) + " is for --frames K, which was not given");
  if (a.colour != "speed" && a.colour != "species" && a.colour != "plain")
    throw InputError("--colour '" + a.colour + "': frames take plain, speed or species");
  if (!(a.view_radius >= 0) || !std::isfinite(a.view_radius) || !std::isfinite(a.view_tilt) ||
      !std::isfinite(a.view_yaw))
    throw InputError("--view-radius must be >= 0 (0: fit) and --view-tilt, --view-yaw finite");
#ifndef NBODY_HAVE_GL
  if (a.frames > 0) throw Unavailable("--frames renders through GL, which this build does not have");
#endif
  std::error_code ec;
  if (!a.out.empty() && std::filesystem::exists(a.out, ec) && !std::filesystem::is_directory(a.out, ec))
    throw InputError("--out '" + a.out + "' exists and is not a folder");
  if (!a.out.empty()) {  // the files written there are outputs too: no other output may be one of them
    const std::filesystem::path dir(resolve_output(a.out + "/x"));
    for (const auto& [option, path] : {std::pair{"--json", a.cfg.json}, std::pair{"--save", a.save}}) {
      if (path.empty()) continue;
      const std::filesystem::path f(resolve_output(path));
      const std::string file = f.filename().string();
      const std::string snapshot_ext = std::filesystem::path(snapshot_path("", a.snapshot_format, 0)).extension();
      const bool ours = (a.frames > 0 && file.starts_with("frame_") && f.extension() == ".png") ||
                        (a.snapshot_every > 0 && file.starts_with("snapshot_") && f.extension() == snapshot_ext) ||
                        file == "checkpoint.nbck" || file == "checkpoint.nbck.prev" || file == "checkpoint.nbck.prev.tmp";
      if (f.parent_path() == dir.parent_path() && ours)
        throw InputError(std::string(option) + " '" + path + "' would be overwritten by a file run writes in --out");
    }
  }
  if (a.energy_every < 0)
    throw InputError("--energy-every " + std::to_string(a.energy_every) + ": must be >= 0");
  if (a.no_energy && a.energy_every > 0)
    throw InputError("--no-energy and --energy-every contradict each other: give one");
  if (names_stdout(a.cfg.json) || names_stdout(a.save)) summary_to_stderr();
}

bool due(long long every, long long step) { return every > 0 && step % every == 0; }

std::string quoted(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The checkpoint and the outputs this run was asked for: what the resume command repeats.
std::string resume_outputs(const RunArgs& a) {
  std::string s = quoted(checkpoint_path(a.out)) + " --out " + quoted(a.out);
  if (a.checkpoint_every > 0) s += " --checkpoint-every " + std::to_string(a.checkpoint_every);
  if (a.snapshot_every > 0) s += " --snapshot-every " + std::to_string(a.snapshot_every) + " --snapshot-format " + a.snapshot_format;
  if (a.frames > 0) {
    s += " --frames " + std::to_string(a.frames) + " --colour " + a.colour;
    char view[160];
    std::snprintf(view, sizeof view, " --view-radius %.17g --view-tilt %.17g --view-yaw %.17g", a.view_radius,
                  a.view_tilt, a.view_yaw);
    s += view;
  }
  if (!a.save.empty()) s += " --save " + quoted(a.save);
  if (!a.cfg.json.empty()) s += " --json " + quoted(a.cfg.json);
  if (a.cfg.force) s += " --force";
  if (a.cfg.pipeline.device_given) s += " --device " + std::to_string(a.cfg.pipeline.device);
  return s;
}

int run(RunArgs& a) {
  const auto t_start = Clock::now();
  std::optional<Resumed> resumed;
  if (given(a, "--resume") && a.resume.empty()) throw InputError("--resume '': name a checkpoint file");
  if (!a.resume.empty()) resumed = apply_checkpoint(a);
  const std::string name = canonical_name(a.pipeline);
  check_args(a, name);
  place_on_device(a.cfg.pipeline);
  const bool with_energy = !a.no_energy;
  const Params params = a.cfg.params();
  const long long first = resumed ? resumed->step : 0;  // global step numbers: a resume continues them
  const long long last = first + a.cfg.steps;

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
    const long long snapshots = a.snapshot_every > 0 ? last / a.snapshot_every - first / a.snapshot_every + 1 : 0;
    const long long passes = (resumed ? 0 : 1) +
                             (with_energy ? 1 + (a.energy_every > 0 ? steps / a.energy_every : 0) : 0) +
                             (a.save.empty() ? 0 : 1) + snapshots;
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

  // The state: made and staggered, or the checkpoint's, exactly as the pipeline held it.
  Start start;
  std::optional<Energy> e0;
  nlohmann::json samples = nlohmann::json::array();  // E_0, every --energy-every K steps, the end
  if (resumed) {
    start.bodies = std::move(resumed->checkpoint.state);
    e0 = resumed->e0;
    samples = resumed->samples;
  } else {
    start = initial_state(a.cfg, *engine, with_energy);
    phases["initial_conditions"] = start.ic_s;
    phases["stagger"] = start.stagger_s;
    if (with_energy) {
      e0 = start.energy;
      samples.push_back({{"step", 0}, {"total", start.energy.total()}});
    }
  }
  const Deadline deadline(a.cfg.force, steps);
  Bodies& bodies = start.bodies;
  t_phase = Clock::now();
  p->load(bodies, params);
  if (!resumed) p->read(bodies);  // x_0 as the pipeline holds it: what a step-0 snapshot or checkpoint keeps
  phase("load");
  if (!a.out.empty() && World::writer()) {  // only now: a command refused for its input leaves no folder
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw InputError("--out '" + a.out + "': cannot create the folder: " + ec.message());
  }

#ifdef NBODY_HAVE_GL
  std::unique_ptr<gl::FrameWriter> frames;
  if (a.frames > 0) {  // the camera and scales from the state at the start (resumed: the checkpoint's)
    // A resumed run's species: the checkpoint's --ic read again (its META gave ic, n, subset, seed).
    if (resumed && start.species.empty() && a.cfg.ic_is_file()) initial_bodies(a.cfg, &start.species);
    frames = std::make_unique<gl::FrameWriter>(
        gl::make_scene(bodies, start.species, {a.view_radius, a.view_tilt, a.view_yaw}), gl::parse_colour(a.colour));
  }
  double frames_s = 0;  // drawing and writing frames: not simulation time
  auto frame = [&](long long step) {
    if (!frames) return;
    const auto t0 = Clock::now();
    char file[32];
    std::snprintf(file, sizeof file, "frame_%06lld.png", step);
    char when[96];
    std::snprintf(when, sizeof when, "step %lld   t = %.4g   N = %zu", step, static_cast<double>(step) * params.dt,
                  bodies.size());
    const std::string png = frames->png(*p, {name, when});
    write_output((std::filesystem::path(a.out) / file).string(), png);
    frames_s += since(t0);
  };
#else
  const double frames_s = 0;
  auto frame = [](long long) {};
#endif

  // The synchronised state of one step (one float64 pass), shared by the energy sample, the
  // snapshot and the final report of that step.
  double diag_s = 0;  // float64 passes during the run, not counted as simulation
  std::optional<std::pair<long long, Synchronised>> synced;
  auto synchronised_at = [&](long long step, const std::string& label) -> const Synchronised& {
    if (synced && synced->first == step) return synced->second;
    const auto t0 = Clock::now();
    if (step == 0 && !resumed) {  // the initial conditions' own v_0 and E_0
      synced.emplace(step, Synchronised{start.vel0, start.energy});
    } else {
      synced.emplace(step, synchronise_shown(bodies, params, *engine, with_energy, label));
      if (with_energy) check_energy(synced->second.energy, bodies, name, step);
    }
    diag_s += since(t0);
    return synced->second;
  };
  auto sample = [&](long long step) {
    const Synchronised& s = synchronised_at(step, "energy at step " + std::to_string(step));
    samples.push_back({{"step", step}, {"total", s.energy.total()}});
  };
  long long snapshotted = -1, snapshots_written = 0;
  const std::string ic_crc = a.cfg.ic_is_file() ? file_crc32c(a.cfg.ic) : "";
  auto snapshot = [&](long long step) {
    const Synchronised& s = synchronised_at(step, "snapshot at step " + std::to_string(step));
    const auto t0 = Clock::now();
    Bodies out = bodies;
    out.vel = s.vel;
    const double time = static_cast<double>(step) * params.dt;
    Hdf5Attributes ours{{"format", std::string("nbody snapshot 1")},
                        {"pipeline", name},
                        {"options", options_json(a.cfg.pipeline).dump()},
                        {"n", static_cast<long long>(bodies.size())},
                        {"step", step},
                        {"dt", params.dt},
                        {"softening", params.softening},
                        {"time", time},
                        {"velocities", std::string("synchronised: v(t) at the snapshot's time")},
                        {"velocities_time", time},
                        {"ic", a.cfg.ic},
                        {"seed", std::to_string(a.cfg.seed)},
                        {"subset", a.cfg.subset}};
    if (with_energy) ours.emplace_back("energy", s.energy.total());
    if (!ic_crc.empty()) ours.emplace_back("ic_crc32c", ic_crc);  // compare --against checks the file
    write_snapshot(snapshot_path(a.out, a.snapshot_format, step), a.snapshot_format, out, time,
                   params.softening, ours);
    snapshotted = step;
    ++snapshots_written;
    diag_s += since(t0);
  };
  long long checkpointed = -1;
  auto checkpoint = [&](long long step) {
    const auto t0 = Clock::now();
    Checkpoint c;
    c.meta = checkpoint_meta(a, name, bodies.size(), step, last, e0, samples).dump();
    c.bits = state_bits(name);
    c.state = bodies;
    write_checkpoint(checkpoint_path(a.out), c);
    checkpointed = step;
    diag_s += since(t0);
  };

  // Step in batches; after each one the state is read back and checked for NaN and inf. A batch
  // doubles while it takes under a second, so that the read-backs cost little against the steps
  // (N = 2^20 on the H100: 4 read-backs in 10 steps). Frames, energy samples, snapshots and
  // checkpoints end batches too; they fall on multiples of their K in the run's global steps.
  long long batch = 1;
  const double setup_s = since(t_start);
  Progress progress("run " + name, steps);
  const auto t_sim = Clock::now();
  if (!resumed) frame(0);
  if (!resumed && a.snapshot_every > 0) snapshot(0);
  int interrupted = 0;
  defer_interrupts(true);  // Ctrl-C or SIGTERM: finish the batch, write a checkpoint, exit 130/143
  long long done = first;
  for (; done < last;) {
    long long k = std::min(batch, last - done);
    for (long long every : {a.frames, a.energy_every, a.snapshot_every, a.checkpoint_every})
      if (every > 0) k = std::min(k, every - done % every);
    const auto t_batch = Clock::now();
    p->step(static_cast<int>(k));
    done += k;
    p->read(bodies);
    check_finite(bodies, name, done);
    if (World::max(since(t_batch)) < 1.0) batch = std::min(2 * batch, steps);  // every rank alike
    deadline.check(since(t_sim), done - first);
    if (due(a.frames, done)) frame(done);
    if (with_energy && due(a.energy_every, done)) sample(done);  // before a checkpoint of this step
    if (due(a.snapshot_every, done) || (a.snapshot_every > 0 && done == last)) snapshot(done);
    if (due(a.checkpoint_every, done) || (a.checkpoint_every > 0 && done == last)) checkpoint(done);
    progress.update(done - first);
    interrupted = static_cast<int>(World::max(pending_interrupt()));  // every rank stops at one step
    if (interrupted) break;
  }
  defer_interrupts(false);
  if (!interrupted) interrupted = pending_interrupt();  // arrived after the last batch
  if (!interrupted && a.snapshot_every > 0 && snapshotted != last) snapshot(last);  // --steps 0
  if (!interrupted && a.checkpoint_every > 0 && checkpointed != last) checkpoint(last);
  if (interrupted) {
    std::fflush(stdout);
    if (a.out.empty()) {
      std::fprintf(stderr, "nbody: interrupted at step %lld: no checkpoint written (give --out DIR to keep one)\n",
                   done);
    } else {
      if (checkpointed != done) checkpoint(done);
      if (World::writer())
        std::fprintf(stderr, "nbody: interrupted at step %lld: checkpoint written to %s\n"
                     "resume with: nbody run --resume %s%s\n", done, checkpoint_path(a.out).c_str(),
                     resume_outputs(a).c_str(), done < last ? "" : " --steps M");
    }
    return 128 + interrupted;  // 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as a shell reports them
  }
  const double sim_s = since(t_sim) - diag_s - frames_s;
  phases["simulation"] = sim_s;
  phases["diagnostics"] = diag_s;
  if (a.frames > 0) phases["frames"] = frames_s;
  t_phase = Clock::now();

  Energy e1;
  std::vector<Vec3> vel_last;
  if (with_energy || !a.save.empty()) {
    const Synchronised& s = synchronised_at(last, "final synchronise and energy");
    vel_last = s.vel;
    if (with_energy) {
      e1 = s.energy;
      if (last > first && !due(a.energy_every, last)) samples.push_back({{"step", last}, {"total", e1.total()}});
    }
  }
  phase("final_energy");
  const double wall_s = since(t_start);
  const double drift = e0 ? relative_drift(e0->total(), e1.total()) : 0.0;

  std::printf("%s: n=%zu steps=%lld dt=%g eps=%g ic=%s  set-up %.3f s, simulation %.3f s "
              "(%.3f ms/step), total %.3f s\n",
              name.c_str(), bodies.size(), steps, params.dt, params.softening, a.cfg.ic.c_str(),
              setup_s, sim_s, steps > 0 ? 1e3 * sim_s / steps : 0.0, wall_s);
  if (resumed)
    std::printf("resumed: from %s at step %lld, now at step %lld\n", a.resume.c_str(), first, last);
  std::printf("fp64 engine: %s (%s)\n", engine->name().c_str(), engine->where().c_str());
  if (World::size() > 1) std::printf("ranks: %d (each computes and integrates its own block of bodies)\n", World::size());
  if (with_energy)
    std::printf("energy: initial %.10g  final %.10g  relative drift %.3e\n", e0->total(), e1.total(), drift);
  else
    std::printf("energy: not measured (--no-energy)\n");
  if (a.frames > 0) std::printf("frames: %s\n", a.out.c_str());
  if (snapshots_written > 0)
    std::printf("snapshots: %lld in %s (the last %s)\n", snapshots_written, a.out.c_str(),
                snapshot_path(a.out, a.snapshot_format, last).c_str());
  if (checkpointed >= 0) std::printf("checkpoint: %s (step %lld)\n", checkpoint_path(a.out).c_str(), checkpointed);

  if (!a.save.empty()) {
    Bodies out = bodies;
    out.vel = vel_last;  // save v_n, not the leapfrog's v_{n-1/2}
    write_csv(a.save, out);
    phase("save");
  }
  nlohmann::json j = {{"pipeline", name}};
  j.update(config_json(a.cfg, bodies.size()));
  j["first_step"] = first;
  j["last_step"] = last;
  if (resumed) j["resumed_from"] = a.resume;
  j["fp64_engine"] = engine->name();
  j["setup_s"] = setup_s;
  j["sim_s"] = sim_s;
  j["wall_s"] = since(t_start);
  j["phases_s"] = phases;
  if (with_energy) {
    j["energy"] = {{"initial", e0->total()}, {"final", e1.total()}, {"rel_drift", drift}};
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
                  "Pipeline: cpu64 | cpu32 | gl[:forcequad|gather|compute|compute-ds] | cuda[:tuned|tuned-fp64|"
                  "gems31|gems31-fp64|symmetric|mixed]")
      ->capture_default_str();
  add_common_options(*sub, a->cfg);
  add_pipeline_options(*sub, a->cfg.pipeline);
  sub->add_option("--out", a->out,
                  "Folder for frames, snapshots and checkpoints (created if missing); with it, Ctrl-C, "
                  "SIGTERM or SIGHUP writes a checkpoint there before the run exits 130, 143 or 129");
  sub->add_option("--frames", a->frames,
                  "Write DIR/frame_NNNNNN.png every K steps, labelled (rendered through GL, headless; a "
                  "gl:* pipeline is drawn from its textures, any other read back first; 0: none)")
      ->capture_default_str();
  sub->add_option("--colour,--color", a->colour, "Frames: plain | speed | species (a file's gas, dark, star)")
      ->capture_default_str();
  sub->add_option("--view-radius", a->view_radius,
                  "Frames: half the picture's height in world units (0: fit 90% of the luminous bodies)")
      ->capture_default_str();
  sub->add_option("--view-tilt", a->view_tilt, "Frames: camera tilt about x in degrees (0: looking down z)")
      ->capture_default_str();
  sub->add_option("--view-yaw", a->view_yaw, "Frames: camera turn about z in degrees")->capture_default_str();
  sub->add_option("--snapshot-every", a->snapshot_every,
                  "Write DIR/snapshot_NNNNNN.h5 (.bin, .csv) at step 0, every K steps and the last "
                  "(synchronised velocities: one float64 pass each; 0: none)")
      ->capture_default_str();
  sub->add_option("--snapshot-format", a->snapshot_format,
                  "hdf5 (GADGET-4/SWIFT layout, PartType1) | tipsy (standard big-endian, floats) | csv")
      ->capture_default_str();
  sub->add_option("--checkpoint-every", a->checkpoint_every,
                  "Write DIR/checkpoint.nbck every K steps and at the last (the one before kept as "
                  ".prev; 0: only on Ctrl-C, SIGTERM or SIGHUP)")
      ->capture_default_str();
  sub->add_option("--resume", a->resume,
                  "Continue the run a checkpoint holds, bit for bit: --steps M more (default: what "
                  "remains of its --steps); outputs are asked for again, the rest comes from the file");
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
