// nbody view: two pipelines side by side in one window, stepping in lock step from one initial
// state, with the distance between them. The teacher's picture of the 2004 method beside CUDA.
// This file holds its options and their checks; view.cpp the view; the window, its drawing and
// the CUDA-GL interop are the viewer's (viewer/include/viewer.hpp).
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "config.hpp"
#include "device_names.hpp"
#include "error.hpp"
#include "output.hpp"
#include "view.hpp"
#include "world.hpp"
#ifdef NBODY_HAVE_GL
#include "viewer.hpp"
#endif

namespace nbody {

namespace {

#ifdef NBODY_HAVE_GL

// "gl:forcequad,cuda:tuned" where a CUDA device is, "gl:forcequad,cpu32" elsewhere.
std::string default_pair() {
  std::string reason;
  if (!cuda_descriptions(reason).empty()) return canonical_name("gl") + "," + canonical_name("cuda");
  return canonical_name("gl") + ",cpu32";
}

void parse_size(const std::string& s, int& w, int& h) {
  char x = 0;
  char rest = 0;
  if (std::sscanf(s.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || x != 'x' || w < 64 || h < 64 || w > 16384 ||
      h > 16384)
    throw InputError("--size '" + s + "': must be WxH, each 64..16384 (e.g. 1280x640)");
}

// --colour for `panes` pipelines: a mode view draws (rank is run --frames' under mpirun).
void check_colour(const std::string& colour, std::size_t panes) {
  const std::string flag = long_names(option_row("view_colour"));
  if (colour != "auto") {
    try {
      viewer::parse_colour(colour);
    } catch (const InputError&) {
      throw InputError(flag + " '" + colour + "': must be auto, plain, speed, species or divergence");
    }
  }
  if (colour == "rank")
    throw InputError(flag + " rank: view runs in one process; run --frames under mpirun colours bodies by rank");
  if (colour == "divergence" && panes < 2)
    throw InputError(flag + " divergence needs two pipelines (the distance of each body to its twin)");
}

// The checks of the arguments; returns the pipelines, left then right.
std::vector<std::string> check_args(ViewArgs& a, int& width, int& height) {
  if (World::size() > 1) throw InputError("view runs in one process (not under mpirun -np > 1)");
  parse_size(a.size, width, height);
  if (a.steps_per_frame < 1) throw InputError("--steps-per-frame " + std::to_string(a.steps_per_frame) + ": must be >= 1");
  if (a.old_frames_given) a.frames = a.old_frames;  // the earlier name, warned of once the checks pass
  const std::string count = a.old_frames_given ? "--frames" : "--frame-count";
  if (a.frames < 0) throw InputError(count + " " + std::to_string(a.frames) + ": must be >= 0");
  if (a.offscreen && a.frames == 0)
    throw InputError("--offscreen is for the scripted mode: give --frame-count K with K >= 1 (0, the default, opens "
                     "the interactive window)");
  if (!a.screenshot.empty()) {
    if (!a.screenshot.ends_with(".png")) throw InputError("--screenshot '" + a.screenshot + "': must end in .png");
    check_output_path(a.screenshot, "--screenshot");
  }
  check_camera(a.radius, a.tilt, a.yaw);
  check_tree_cells(a.tree_cells);
  const std::vector<std::string> names = parse_pipeline_list(a.pipelines.empty() ? default_pair() : a.pipelines);
  if (names.size() > 2) throw InputError("--pipelines: view shows one or two pipelines, not " + std::to_string(names.size()));
  check_colour(a.colour, names.size());
  resolve_body_count(a.cfg);
  check_config(a.cfg, static_cast<int>(names.size()));
  check_pipeline_options(names, a.cfg.pipeline);
  check_softening(names, a.cfg.softening);
  if (const std::string why = viewer::window_unavailable(); !why.empty()) throw Unavailable(why);
  return names;
}

int view(ViewArgs& a) {
  int width = 0, height = 0;
  const std::vector<std::string> names = check_args(a, width, height);
  if (a.old_frames_given)  // a count here, an interval in `run --frames K`: the name says which now
    std::fprintf(stderr, "nbody view: --frames is --frame-count now (a number of frames; `run --frames K` is an "
                         "interval): taken as --frame-count %lld\n", a.frames);
  place_on_device(a.cfg.pipeline);
  return run_view(a, names, width, height);
}

#endif  // NBODY_HAVE_GL

}  // namespace

Command add_view(CLI::App& app) {
  auto a = std::make_shared<ViewArgs>();
  CLI::App* sub = app.add_subcommand(
      "view",
      "A window with two pipelines side by side, stepping in lock step from the same initial state, "
      "coloured by speed, species or their divergence (GLFW; needs a display)");
  add_common_options(*sub, a->cfg, a->json);
  for (const char* name : {"--steps", "--json"}) sub->remove_option(sub->get_option(name));
  add_pipeline_options(*sub, a->cfg.pipeline, Processes::one);
  add_row(*sub, "view_pipelines", a->pipelines);
  add_row(*sub, "steps_per_frame", a->steps_per_frame);
  add_row(*sub, "view_colour", a->colour);
  add_row(*sub, "frame_count", a->frames);
  add_row(*sub, "view_frames", a->old_frames)
      ->excludes(sub->get_option("--frame-count"))
      ->each([a](const std::string&) { a->old_frames_given = true; });
  add_row(*sub, "screenshot", a->screenshot);
  add_row(*sub, "size", a->size);
  add_row(*sub, "view_radius", a->radius);
  add_row(*sub, "view_tilt", a->tilt);
  add_row(*sub, "view_yaw", a->yaw);
  add_row(*sub, "tree_cells", a->tree_cells,
          tree_cells_help("Draw") + " over each pane; the t key turns them on (at D, or " +
              std::to_string(kTreeCellsOnKey) + " when D is 0) and off")
      ->type_name("D");
  add_row(*sub, "no_interop", a->no_interop);
  add_row(*sub, "offscreen", a->offscreen);
  add_row(*sub, "vsync", a->vsync);
  sub->footer(
      "Keys: h help, space pause, . one step, r reset, c colour mode, [ ] halve/double dt, f fit, t tree cells, "
      "p screenshot, Esc quit; drag orbits, the wheel zooms. Without a display: exit 3 (`--frame-count K "
      "--offscreen` and `nbody run --frames K --out DIR` render headless). The set-up's float64 pass "
      "(and a scripted run's steps) past an hour is refused without --force. Exit codes: 0 ok, 2 bad "
      "input, 3 no window or a pipeline failed.");
  return [a]() -> int {
#ifdef NBODY_HAVE_GL
    return view(*a);
#else
    throw Unavailable("this build has no GL pipeline, and so no window (scripts/install-deps.sh; then rebuild)");
#endif
  };
}

}  // namespace nbody
