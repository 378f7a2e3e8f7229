// `nbody run`'s arguments: the options, their checks before any work, and the checkpoint a
// resumed run reads them from.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <unistd.h>

#include "checkpoint.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "options.hpp"
#include "output.hpp"
#include "run_args.hpp"
#include "snapshots.hpp"

namespace nbody {

namespace {

std::string shell_quoted(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A double as the resume command writes it: every digit it holds.
std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// The options that draw --frames' pictures, each by its key in the option table with its value as
// the resume command repeats it ("": not repeated, left at its default). Each is refused without
// --frames, and repeated with it.
struct FrameOption {
  std::string_view key;
  std::string (*text)(const RunArgs&);
};
constexpr FrameOption kFrameOptions[] = {
    {"colour", [](const RunArgs& a) { return a.colour; }},
    {"view_radius", [](const RunArgs& a) { return exact(a.view_radius); }},
    {"view_tilt", [](const RunArgs& a) { return exact(a.view_tilt); }},
    {"view_yaw", [](const RunArgs& a) { return exact(a.view_yaw); }},
    {"tree_cells", [](const RunArgs& a) { return a.tree_cells > 0 ? std::to_string(a.tree_cells) : std::string(); }},
    {"received_cells",
     [](const RunArgs& a) { return a.received_cells >= 0 ? std::to_string(a.received_cells) : std::string(); }},
};

// --received-cells' value, before the rung and the ranks are known (check_received_cells).
void check_received_value(const RunArgs& a) {
  if (a.received_cells < -1)
    throw InputError("--received-cells " + std::to_string(a.received_cells) +
                     ": expected a rank (0..P-1 under mpirun -np P) or -1 (none)");
  if (a.received_cells >= 0 && a.tree_cells > 0)
    throw InputError("--tree-cells and --received-cells would draw cells over each other in the same colours: give one");
}

// Frames, snapshots and checkpoints need --out; their companions need them.
void check_kept_outputs(const RunArgs& a) {
  for (const auto& [option, value] : {std::pair{"--frames", a.frames}, std::pair{"--snapshot-every", a.snapshot_every},
                                      std::pair{"--checkpoint-every", a.checkpoint_every}}) {
    if (value < 0) throw InputError(std::string(option) + " " + std::to_string(value) + ": must be >= 0");
    if (value > 0 && a.out.empty()) throw InputError(std::string(option) + " needs --out DIR");
  }
  if (a.snapshot_every > 0) check_snapshot_format(a.snapshot_format);
  else if (a.given("--snapshot-format"))
    throw InputError("--snapshot-format is for --snapshot-every K, which was not given");
  // The frames options' values first (a bad one is named as such with or without --frames), then
  // whether they have frames to draw.
  if (a.colour != "speed" && a.colour != "species" && a.colour != "plain" && a.colour != "rank")
    throw InputError(long_names(option_row("colour")) + " '" + a.colour + "': frames take plain, speed, species or rank");
  check_camera(a.view_radius, a.view_tilt, a.view_yaw);
  check_tree_cells(a.tree_cells);
  check_received_value(a);
  if (!a.given("--frames") || a.frames == 0)
    for (const FrameOption& o : kFrameOptions)
      if (const OptionRow& row = option_row(o.key); a.given(row.cli))
        throw InputError(long_names(row) + " is for --frames K" +
                         (a.given("--frames") ? " with K >= 1 (--frames 0 draws none)" : ", which was not given"));
#ifndef NBODY_HAVE_GL
  if (a.frames > 0) throw Unavailable("--frames renders through GL, which this build does not have");
#endif
}

// A file run writes in --out: frames, snapshots, the checkpoint and its previous copy.
bool written_by_run(const std::string& file) {
  const std::filesystem::path f(file);
  const std::string ext = f.extension().string();
  return (file.starts_with("frame_") && ext == ".png") ||
         (file.starts_with("snapshot_") && (ext == ".h5" || ext == ".bin" || ext == ".csv")) ||
         file.starts_with("checkpoint.nbck");
}

// --out: a folder this run can write, holding no other run's files (a resume writes on in the
// folder of its own checkpoint); no other output may be one of the files written there.
// A file can be made in `dir` (a probe file, made and removed: root ignores the mode bits, not an
// immutable folder or a read-only file system).
void check_writable(const std::filesystem::path& dir, const std::string& what) {
  std::string probe = (dir / ".nbody-write-test-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw InputError("--out '" + what + "' cannot be written: " + std::strerror(errno));
  ::close(fd);
  std::error_code ec;
  std::filesystem::remove(probe, ec);
}

// A checkpoint's step, read from its META alone; -1 where it cannot be read.
long long checkpoint_step(const std::string& path) {
  const std::optional<std::string> meta = read_checkpoint_meta(path);
  if (!meta) return -1;
  const nlohmann::json j = nlohmann::json::parse(*meta, nullptr, false);
  return j.is_object() && j.contains("step") && j["step"].is_number_integer() ? j["step"].get<long long>() : -1;
}

// A resume of another checkpoint in --out's folder (its .prev, a copy) goes on there only from a
// state no older than the folder's own checkpoint, which its checkpoints would replace (an
// unreadable one is no state to keep: resuming an older one is the way back from it).
void check_not_going_back(const RunArgs& a) {
  if (resumes_the_latest(a)) return;
  const std::string latest = checkpoint_path(a.out);
  const long long kept = checkpoint_step(latest), resumed = checkpoint_step(a.resume);
  if (kept < 0 || resumed < 0 || resumed >= kept) return;
  throw InputError("--resume '" + a.resume + "' is at step " + std::to_string(resumed) + ", and --out '" + a.out +
                   "' keeps this run's checkpoint at step " + std::to_string(kept) +
                   ": the checkpoints it writes would replace that later state (give a new --out, or --resume " +
                   latest + ")");
}

void check_out_folder(const RunArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (a.out.empty()) return;
  if (a.out.size() > 1 && a.out[0] == '-')  // "--out --no-energy": the parser gave it the next option
    throw InputError("--out '" + a.out + "': looks like an option, not a folder (--out takes the next word as its "
                     "folder; name such a folder ./" + a.out + ")");
  if (!fs::exists(a.out, ec)) {  // made once every check has passed: its nearest existing folder must take it
    fs::path up = fs::absolute(a.out, ec).parent_path();
    while (!up.empty() && !fs::exists(up, ec) && up != up.parent_path()) up = up.parent_path();
    if (!fs::is_directory(up, ec)) throw InputError("--out '" + a.out + "': '" + up.string() + "' is not a folder");
    check_writable(up, a.out);
    return;
  }
  if (!fs::is_directory(a.out, ec)) throw InputError("--out '" + a.out + "' exists and is not a folder");
  check_writable(a.out, a.out);
  if (resumes_in_its_folder(a)) {  // the run goes on in its own folder
    check_not_going_back(a);
    return;
  }
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(a.out, ec))
    if (written_by_run(entry.path().filename().string())) found.push_back(entry.path().filename().string());
  if (found.empty()) return;
  std::sort(found.begin(), found.end());
  std::string names;
  for (std::size_t k = 0; k < std::min<std::size_t>(found.size(), 3); ++k) names += (k ? ", " : "") + found[k];
  if (found.size() > 3) names += " and " + std::to_string(found.size() - 3) + " more";
  const bool checkpoint = std::find(found.begin(), found.end(), "checkpoint.nbck") != found.end();
  throw InputError("--out '" + a.out + "' already holds another run's files (" + names + "): give a new or empty folder" +
                   (checkpoint ? ", or --resume " + (fs::path(a.out) / "checkpoint.nbck").string() + " to go on with that run"
                               : std::string()));
}

// --json and --save may not be files that run writes in --out.
void check_not_in_out(const RunArgs& a) {
  if (a.out.empty()) return;
  const std::filesystem::path dir(resolve_output(a.out + "/x"));
  for (const auto& [option, path] : {std::pair{"--json", a.json}, std::pair{"--save", a.save}}) {
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

}  // namespace

ReadRun read_resumed(RunArgs& a) {
  ReadRun r = read_run_checkpoint(a.resume);
  const std::string where = "checkpoint '" + a.resume + "'";
  if (a.given("--pipeline") && canonical_name(a.spec.rung) != r.record.rung)
    throw InputError(where + " is of " + r.record.rung + ": it resumes on that pipeline, not on " +
                     canonical_name(a.spec.rung) + " (leave out --pipeline)");
  for (const std::string& key : options_kept_by_checkpoints())
    if (const std::string_view flag = option_row(key).cli; !flag.empty() && a.given(flag))
      throw InputError(std::string(flag) + " comes from the checkpoint on --resume (the resumed run "
                       "is the same run); give only outputs, --steps, --force, --device and --balance");
  if (a.given("--steps")) {
    r.record.last_step = r.record.step + a.spec.cfg.steps;
  } else if (r.record.last_step == r.record.step) {
    throw InputError(where + " is at step " + std::to_string(r.record.step) + ", the last of its run: give "
                     "--steps M to run M more");
  }
  r.record.cfg.force = a.spec.cfg.force;
  a.spec.rung = r.record.rung;
  a.spec.cfg.steps = r.record.last_step - r.record.step;
  return r;
}

void check_outputs(RunArgs& a) {
  expect_folder(a.out);  // made once every check (and the estimate) has passed
  check_placement(a.spec.cfg.pipeline);  // from the command line, also on a resume
  check_output_path(a.json, "--json");
  check_output_path(a.save, "--save");
  check_distinct_outputs({{"--json", a.json}, {"--save", a.save}});
  check_kept_outputs(a);
  check_out_folder(a);
  check_not_in_out(a);
  if (names_stdout(a.json) || names_stdout(a.save)) summary_to_stderr();
}

void check_received_cells(const RunArgs& a, const std::string& name) {
  if (a.received_cells < 0) return;  // none (below -1: check_kept_outputs)
  const Rung& r = rung(name);
  if (r.split != Split::KeyRanges)
    throw InputError("--received-cells: " + r.name + " does not split by key ranges, so no rank receives cells "
                     "(cpu:tree and cuda:tree do, under mpirun)");
  if (World::size() < 2)
    throw InputError("--received-cells: one process receives no cells; run it under mpirun -np P, P >= 2");
  if (a.received_cells >= World::size())
    throw InputError("--received-cells " + std::to_string(a.received_cells) + ": expected a rank, 0.." +
                     std::to_string(World::size() - 1) + " (-1: none)");
}

bool resumes_in_its_folder(const RunArgs& a) {
  namespace fs = std::filesystem;
  if (a.resume.empty() || a.out.empty()) return false;
  std::error_code ec;
  const fs::path resumed_from = fs::path(a.resume).parent_path().empty() ? "." : fs::path(a.resume).parent_path();
  return fs::equivalent(resumed_from, a.out, ec);
}

bool resumes_the_latest(const RunArgs& a) {
  if (a.resume.empty() || a.out.empty()) return false;
  std::error_code ec;
  return std::filesystem::equivalent(a.resume, checkpoint_path(a.out), ec);
}

std::string resume_outputs(const RunArgs& a) {
  std::string s = shell_quoted(checkpoint_path(a.out)) + " --out " + shell_quoted(a.out);
  if (a.checkpoint_every > 0) s += " --checkpoint-every " + std::to_string(a.checkpoint_every);
  if (a.snapshot_every > 0) s += " --snapshot-every " + std::to_string(a.snapshot_every) + " --snapshot-format " + a.snapshot_format;
  if (a.frames > 0) {
    s += " --frames " + std::to_string(a.frames);
    for (const FrameOption& o : kFrameOptions)
      if (const std::string text = o.text(a); !text.empty()) s += " " + std::string(option_row(o.key).cli) + " " + text;
  }
  if (!a.save.empty()) s += " --save " + shell_quoted(a.save);
  if (!a.json.empty()) s += " --json " + shell_quoted(a.json);
  if (a.spec.cfg.force) s += " --force";
  if (a.spec.cfg.pipeline.device_given) s += " --device " + std::to_string(a.spec.cfg.pipeline.device);
  if (a.spec.cfg.pipeline.balance != PipelineOptions{}.balance) s += " --balance " + a.spec.cfg.pipeline.balance;
  return s;
}

Command add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run one pipeline and report its energy drift");
  auto a = std::make_shared<RunArgs>();
  add_row(*sub, "pipeline", a->spec.rung,
          "Pipeline: " + joined_names(pipeline_names(), " | ") + " | cpu64/K (gl: " + canonical_name("gl") +
              ", cuda: " + canonical_name("cuda") + ")");
  add_common_options(*sub, a->spec.cfg, a->json);
  add_pipeline_options(*sub, a->spec.cfg.pipeline);
  add_row(*sub, "out", a->out);
  add_row(*sub, "frames", a->frames);
  add_row(*sub, "colour", a->colour);
  const auto frames = [](const char* key) {  // "Frames: camera tilt ..."
    std::string help(option_row(key).help);
    help[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(help[0])));
    return "Frames: " + help;
  };
  add_row(*sub, "view_radius", a->view_radius, frames("view_radius"));
  add_row(*sub, "view_tilt", a->view_tilt, frames("view_tilt"));
  add_row(*sub, "view_yaw", a->view_yaw, frames("view_yaw"));
  add_row(*sub, "tree_cells", a->tree_cells, tree_cells_help("Frames: draw"));
  add_row(*sub, "received_cells", a->received_cells);
  add_row(*sub, "snapshot_every", a->snapshot_every);
  add_row(*sub, "snapshot_format", a->snapshot_format);
  add_row(*sub, "checkpoint_every", a->checkpoint_every);
  add_row(*sub, "resume", a->resume);
  add_row(*sub, "save", a->save);
  add_row(*sub, "energy_every", a->spec.energy_every,
          "Also measure the energy every K steps (one diagnostics pass each: see --diagnostics; 0: at the start and "
          "the end only)");
  add_row(*sub, "diagnostics", a->spec.cfg.diagnostics, diagnostics_help());
  add_row(*sub, "no_energy", a->spec.no_energy);
  a->app = sub;
  return [a] { return run(*a); };
}

}  // namespace nbody
