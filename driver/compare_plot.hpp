// `nbody compare --plot FILE`: the figures as gnuplot scripts, and the PNG gnuplot draws from them.
//
// A script is self-contained (its data inline, as datablocks) and fixed text apart from the
// numbers, the title and the curve titles, which it holds as single-quoted gnuplot strings (no
// substitution happens inside those). FILE.png runs gnuplot without a shell on the script;
// FILE.gp writes the script itself, for `gnuplot -c FILE.gp [OUT.png]` (default: FILE.png).
//
// Every curve has its colour from one palette, readable on white (no yellow); a rung keeps its
// colour in every panel of a figure, the reference is black.
#pragma once
#include <string>
#include <vector>

#include "comparison.hpp"
#include "dt_sweep.hpp"
#include "theta_sweep.hpp"

namespace nbody {

// Throws InputError when `path` asks for a PNG and gnuplot is not on PATH (before any work is done).
void check_plot_tool(const std::string& path);
// --plot FILE (`option`): a place to write it and, for a PNG, gnuplot (before any work is done).
void check_plot(const std::string& path, const std::string& option = "--plot");

// A plot's title: what drew it and the run it shows, `steps` the steps and dt (default: "steps=S,
// dt=D"); a file's name without its folder.
std::string plot_title(const std::string& what, const std::string& n, const Config& cfg, std::string steps = "");

// Two panels: the max distance to `reference` per step (every pair with `all_pairs`), log scale;
// the reference's energy drift |E - E0| / |E0| and each rung's difference from it.
std::string compare_plot_script(const CompareResult& r, const std::string& title, const std::string& reference,
                                bool all_pairs, const std::string& default_png);
// TR04-032 Fig. 9: one panel per N, the max distance to `reference` per step, and the goals.
std::string fig9_plot_script(const std::vector<CompareResult>& runs, const std::string& title,
                             const std::string& reference, const std::string& default_png);
// The dt-sweep, log-log: each rung's distance to the converged trajectory against dt (solid), and
// each float rung's distance to `reference` at the same dt (dashed): an all-pairs rung's rounding, a
// tree's opening angle.
std::string dt_sweep_plot_script(const DtSweepResult& r, const std::string& title, const std::string& reference,
                                 const std::string& default_png);

// The theta-sweep, against theta: each tree rung's force error (median solid, 99% dashed, 99.9% dash-dot,
// largest dotted) with each all-pairs rung's median (its float rounding) level; below, each tree
// rung's speed-up over each all-pairs rung, with break-even at 1.
std::string theta_sweep_plot_script(const ThetaSweepResult& r, const std::string& title, const std::string& default_png);

// FILE.gp: writes `script`; anything else: draws it with gnuplot and writes the PNG. Written as any
// output is (output.hpp). Prints one line saying where it went. Throws std::runtime_error when
// gnuplot fails.
void write_plot(const std::string& script, const std::string& path);
// The default image for `gnuplot -c FILE.gp`: FILE.png; for a PNG path, itself.
std::string plot_png_name(const std::string& path);

}  // namespace nbody
