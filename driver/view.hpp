// `nbody view`'s arguments (cmd_view.cpp) and the view itself (view.cpp): two panes stepping in
// lock step in the viewer's window.
#pragma once
#include <string>
#include <vector>

#include "setup.hpp"

namespace nbody {

// The levels of the tree's cells the t key turns on when --tree-cells gave none.
constexpr int kTreeCellsOnKey = 4;

struct ViewArgs {
  Config cfg;
  std::string json;  // not an option of view (add_common_options registers it; view removes it)
  std::string pipelines;
  int steps_per_frame = defaults::steps_per_frame;
  long long frames = 0;  // --frame-count: draw this many frames, save the last (--screenshot), exit
  long long old_frames = 0;  // --frames, its earlier name
  bool old_frames_given = false;
  std::string screenshot;
  std::string colour = defaults::view_colour;  // auto: species where the file has several, else speed
  std::string size = defaults::view_size;
  double radius = 0, tilt = defaults::view_tilt, yaw = 0;
  int tree_cells = 0;  // the octree's cells drawn down to this many levels at the start (0: none; t toggles)
  bool vsync = false;
  bool no_interop = false;  // copy CUDA rungs through the host even where interop works
  bool offscreen = false;   // scripted only: the headless EGL context, no window
};

// Opens the window and runs the view until Esc (or --frame-count K); returns the exit code.
int run_view(const ViewArgs& a, const std::vector<std::string>& names, int width, int height);

}  // namespace nbody
