#include <cctype>
#include "compare_plot.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "error.hpp"
#include "metrics.hpp"
#include "output.hpp"

namespace nbody {

namespace {

namespace fs = std::filesystem;

bool is_script(const std::string& path) { return fs::path(path).extension() == ".gp"; }

bool have_program(const char* name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
  return false;
}

// A gnuplot single-quoted string: '' is its only escape, and nothing inside is substituted (no
// backquote command, no @macro). Control characters, which would end the line, become '?'.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return out + "'";
}

// `s` for a comment line: control characters, which would end the comment, become '?'.
std::string comment(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Dark enough to read as a thin line on white, told apart by people with the common colour-vision
// deficiencies (Okabe and Ito's set without its yellow and orange, then five of Tol's darker ones);
// the reference is black. scripts/plot-dt-sweep.py draws with the same list.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#882255",
                                    "#8C510A", "#332288", "#44AA99", "#AA4499", "#7F7F7F"};
constexpr std::size_t kColours = sizeof kPalette / sizeof kPalette[0];
constexpr int kPoints[] = {7, 5, 9, 11, 13, 6, 4, 8, 10, 12, 1, 2, 3};  // filled shapes first

// Each rung's look, the same in every panel: the reference black and solid, the others in the
// order given (a dash pattern of their own once the palette comes round again).
class Looks {
 public:
  Looks(std::vector<std::string> names, std::string reference)
      : names_(std::move(names)), reference_(std::move(reference)) {
    names_.erase(std::remove(names_.begin(), names_.end(), reference_), names_.end());
  }
  std::string colour(const std::string& name) const {
    return name == reference_ ? "#000000" : kPalette[index(name) % kColours];
  }
  std::string line(const std::string& name, double width = 2) const {
    const std::size_t k = name == reference_ ? 0 : index(name);
    return " lc rgb '" + colour(name) + "' lw " + number(width) + " dt " + std::to_string(k / kColours + 1);
  }
  std::string points(const std::string& name, std::size_t every) const {
    const std::size_t k = name == reference_ ? 0 : index(name) + 1;
    return " pt " + std::to_string(kPoints[k % std::size(kPoints)]) + " ps 0.8 pi -" + std::to_string(every);
  }
  const std::string& reference() const { return reference_; }

 private:
  std::size_t index(const std::string& name) const {
    return static_cast<std::size_t>(std::find(names_.begin(), names_.end(), name) - names_.begin());
  }
  std::vector<std::string> names_;
  std::string reference_;
};

// A script being written: its data (datablocks), its commands, and the longest curve title (the
// key's width).
class Script {
 public:
  // A datablock of rows of numbers; returns its name. An empty block is a curve with no points.
  std::string block(const std::vector<std::vector<double>>& rows) {
    const std::string name = "$data" + std::to_string(blocks_++);
    data_ << name << " << EOD\n";
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c) data_ << (c ? " " : "") << number(row[c]);
      data_ << '\n';
    }
    data_ << "EOD\n";
    return name;
  }
  // A text in the key (its title): quoted, and counted in the key's width.
  std::string note(const std::string& text) {
    key_ = std::max(key_, text.size());
    return quoted(text);
  }
  // One curve of a plot command, titled.
  std::string curve(const std::string& spec, const std::string& title) {
    key_ = std::max(key_, title.size());
    return spec + " title " + quoted(title);
  }
  std::ostringstream commands;

  // The whole script: the key at the right, as wide as its longest title (a key wider than 40% of
  // the `requested` width widens the picture instead of covering the curves); both panels' axes
  // share the margins, so they line up.
  std::string text(const std::string& title, const std::string& default_png, int requested, int height) const {
    const double key = 7.0 * static_cast<double>(key_) + 70;  // px: ~7 per character at 10 pt, the sample, the gaps
    const int width = std::max(requested, static_cast<int>(std::ceil(0.6 * requested + key)));
    const double right = std::min(1 - key / width, 0.88);
    std::ostringstream s;
    s << "# " << comment(title) << "\n# gnuplot -c THIS_FILE [OUT.png]\n"
      << "out = (exists('ARGC') && ARGC > 0) ? ARG1 : " << quoted(default_png) << "\n"
      << "set terminal pngcairo size " << width << "," << height << " font ',10'\nset output out\n"
      << data_.str() << "set lmargin at screen 0.08\nset rmargin at screen " << number(right) << "\n"
      << "set key outside right top vertical Left reverse samplen 3 spacing 1.1 noenhanced\n"
      << "set grid\nset logscale y\nset format y '10^{%L}'\n"
      << commands.str();
    return s.str();
  }

 private:
  std::ostringstream data_;
  int blocks_ = 0;
  std::size_t key_ = 0;
};

// A panel with nothing to draw says so: a curve below a fixed range draws nothing and, unlike 1/0,
// is not an error on a log axis.
void empty_plot(Script& s, const std::string& why) {
  s.commands << "set label 9 " << quoted(why) << " at graph 0.5, 0.5 center\n"
             << "plot [] [1e-16:1] 1e-300 notitle\nunset label 9\n";
}

void plot(Script& s, const std::vector<std::string>& curves) {
  s.commands << "plot ";
  for (std::size_t k = 0; k < curves.size(); ++k) s.commands << (k ? ", \\\n     " : "") << curves[k];
  s.commands << "\n";
}

// " (= b)" where rungs a and b were at the same positions at every compared step, else " (on b's
// curve, up to D apart)" with the largest distance between them.
std::string twins(const CompareResult& r, const std::string& a, const std::string& b) {
  double apart = 0;
  for (const auto& st : r.steps)
    for (const PairRecord& p : st.pairs)
      if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) apart = std::max(apart, p.d.max);
  if (apart == 0) return " (= " + b + ")";
  char d[32];
  std::snprintf(d, sizeof d, "%.2g", apart);
  return " (on " + b + "'s curve, up to " + std::string(d) + " apart)";
}

// The divergence panel, titled `title`: the max distance of each pair shown (those with the
// reference, or all), a curve per pair in the colour of its rung that is not the reference, then
// `extra` curves. A curve on an earlier one at every step says so in its title (the float32 rungs
// often lie on top of each other): "(= cpu32)" only where the two rungs' bodies are where each
// other's are (their own pair's distance 0), else the largest distance between them.
void divergence_panel(Script& s, const Looks& looks, const CompareResult& r, bool all_pairs, const std::string& title,
                      const std::vector<std::string>& extra = {}) {
  const std::string& reference = looks.reference();
  s.commands << "set title " << quoted(title) << " noenhanced\nset ylabel 'distance'\nset xlabel 'step'\n";
  const std::size_t every = std::max<std::size_t>(1, r.steps.size() / 8);  // about 8 markers a curve
  const std::size_t pairs = r.steps.empty() ? 0 : r.steps.front().pairs.size();
  std::vector<std::string> curves;
  for (std::size_t k = 0; k < pairs; ++k) {
    const PairRecord& pair = r.steps.front().pairs[k];
    const bool with_reference = pair.a == reference || pair.b == reference;
    if (!all_pairs && !with_reference) continue;
    const std::string rung = pair.a == reference ? pair.b : pair.a;
    auto shown = [&](const PairRecord& p) { return all_pairs ? pair_name(p) : (p.a == reference ? p.b : p.a); };
    std::string name = shown(pair);
    for (std::size_t j = 0; j < k; ++j) {
      const PairRecord& other = r.steps.front().pairs[j];
      const bool same = std::all_of(r.steps.begin(), r.steps.end(),
                                    [&](const auto& st) { return st.pairs[k].d.max == st.pairs[j].d.max; });
      if (same && (all_pairs || other.a == reference || other.b == reference)) {
        name += all_pairs ? " (on " + shown(other) + "'s curve)" : twins(r, rung, shown(other));
        break;
      }
    }
    std::vector<std::vector<double>> rows;
    for (const auto& st : r.steps)
      if (st.pairs[k].d.max > 0) rows.push_back({static_cast<double>(st.step), st.pairs[k].d.max});
    const std::string dash = all_pairs && !with_reference ? " dt " + std::to_string(k % 4 + 2) : "";
    curves.push_back(s.curve(s.block(rows) + " using 1:2 with linespoints" + looks.line(rung) + dash +
                                 looks.points(rung, every), name));
  }
  if (curves.empty()) return empty_plot(s, "no pair of pipelines to compare");
  curves.insert(curves.end(), extra.begin(), extra.end());
  plot(s, curves);
}

// The energy panel. Every rung's drift |E - E0| / |E0| is the leapfrog's, nearly the same for all:
// drawn once, for the reference (black); each other rung is drawn as its difference from that
// (the signed drifts subtracted), so what differs is what shows. The drift is 0 at step 0 by
// definition and a difference may be exactly 0: a log axis shows neither, so those points are
// left out (not floored to a made-up value), and a rung equal to the reference at every sample
// says so in the key.
void energy_panel(Script& s, const Looks& looks, const CompareResult& r) {
  const std::string& reference = looks.reference();
  s.commands << "set title " << quoted("energy: " + reference + "'s drift, and each rung's difference from it")
             << " noenhanced\nset ylabel '|E - E_0| / |E_0|'\n";
  auto drift = [&](const std::string& name, double e) {
    const double e0 = r.initial.at(name).e.total();
    return (e - e0) / (e0 != 0 ? std::fabs(e0) : 1.0);
  };
  std::vector<std::string> curves;
  std::vector<std::vector<double>> own;
  for (const auto& st : r.steps)
    if (auto it = st.energy.find(reference); it != st.energy.end() && st.step > 0 && drift(reference, it->second) != 0)
      own.push_back({static_cast<double>(st.step), std::fabs(drift(reference, it->second))});
  if (own.empty()) return empty_plot(s, "no energy measured after step 0");
  curves.push_back(s.curve(s.block(own) + " using 1:2 with linespoints" + looks.line(reference, 3) +
                               looks.points(reference, 1), reference));
  for (const auto& name : r.pipelines) {
    if (name == reference) continue;
    std::vector<std::vector<double>> rows;
    for (const auto& st : r.steps) {
      const auto mine = st.energy.find(name), theirs = st.energy.find(reference);
      if (st.step == 0 || mine == st.energy.end() || theirs == st.energy.end()) continue;
      const double d = std::fabs(drift(name, mine->second) - drift(reference, theirs->second));
      if (d > 0) rows.push_back({static_cast<double>(st.step), d});
    }
    if (rows.empty())
      curves.push_back(s.curve("keyentry with lines" + looks.line(name), name + ": same as " + reference));
    else
      curves.push_back(s.curve(s.block(rows) + " using 1:2 with linespoints" + looks.line(name) + looks.points(name, 1),
                               name + " - " + reference));
  }
  plot(s, curves);
}

// The x range both panels share (the energy may be one point).
void step_range(Script& s, const CompareResult& r) {
  if (!r.steps.empty() && r.steps.back().step > 0) s.commands << "set xrange [0:" << r.steps.back().step << "]\n";
}

}  // namespace

void check_plot_tool(const std::string& path) {
  if (!is_script(path) && !have_program("gnuplot"))
    throw InputError("--plot needs gnuplot for a PNG, and it is not on PATH (scripts/install-deps.sh installs "
                     "gnuplot-nox; --plot FILE.gp writes the script to draw elsewhere)");
}

void check_plot(const std::string& path, const std::string& option) {
  check_output_path(path, option);
  if (path.empty()) return;
  // A file's name says what it holds; stdout, a descriptor, a FIFO or a device is written through.
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".gp") ext = fs::path(path).extension().string();  // .GP is not a script (is_script)
  std::error_code ec;
  const auto status = fs::status(path, ec);
  const bool through = path == "-" || path.starts_with("/dev/") || path.starts_with("/proc/self/fd/") ||
                       (fs::exists(status) && !fs::is_regular_file(status));
  if (!through && ext != ".png" && ext != ".gp")
    throw InputError(option + " '" + path + "': must end in .png (the picture) or .gp (its gnuplot script), or be - "
                     "for stdout");
  check_plot_tool(path);
}

std::string plot_title(const std::string& what, const std::string& n, const Config& cfg, std::string steps) {
  if (steps.empty()) steps = "steps=" + std::to_string(cfg.steps) + ", dt=" + number_text(cfg.dt);
  const std::string ic = cfg.ic_is_file() ? fs::path(cfg.ic).filename().string() : cfg.ic;
  return what + ": n=" + n + ", " + steps + ", eps=" + number_text(cfg.softening) + ", ic=" + ic +
         ", seed=" + std::to_string(cfg.seed);
}

std::string plot_png_name(const std::string& path) {
  return is_script(path) ? fs::path(path).replace_extension(".png").string() : path;
}

std::string compare_plot_script(const CompareResult& r, const std::string& title, const std::string& reference,
                                bool all_pairs, const std::string& default_png) {
  Script s;
  const Looks looks(r.pipelines, reference);
  s.commands << "set multiplot layout 2,1 title " << quoted(title) << " noenhanced font ',12'\n";
  step_range(s, r);
  divergence_panel(s, looks, r, all_pairs,
                   all_pairs ? "max Euclidean distance between the pipelines of each pair"
                             : "max Euclidean distance to " + reference);
  energy_panel(s, looks, r);
  s.commands << "unset multiplot\n";
  return s.text(title, default_png, 1200, 860);
}

std::string fig9_plot_script(const std::vector<CompareResult>& runs, const std::string& title,
                             const std::string& reference, const std::string& default_png) {
  Script s;
  std::vector<std::string> names;
  for (const auto& r : runs)
    for (const auto& name : r.pipelines)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  const Looks looks(names, reference);
  // The goal as steps: below 1e-5 up to step 15, below 1e-3 up to step 100.
  std::vector<std::vector<double>> goal;
  double from = 0;
  for (const Fig9Bound& b : kFig9Goal) {
    goal.push_back({from, b.distance}), goal.push_back({static_cast<double>(b.until_step), b.distance});
    from = static_cast<double>(b.until_step);
  }
  std::string goal_title = "goal:";
  for (const Fig9Bound& b : kFig9Goal)
    goal_title += std::string(&b == kFig9Goal ? " < " : ", < ") + number_text(b.distance) + " to step " +
                  std::to_string(b.until_step);
  const std::string goal_curve =
      s.curve(s.block(goal) + " using 1:2 with lines lc rgb '#7F7F7F' lw 1 dt 2", goal_title);
  s.commands << "set multiplot layout " << runs.size() << ",1 title " << quoted(title) << " noenhanced font ',12'\n";
  for (const CompareResult& r : runs) {
    step_range(s, r);
    divergence_panel(s, looks, r, false, "n = " + std::to_string(r.n) + ": max Euclidean distance to " + reference,
                     {goal_curve});
  }
  s.commands << "unset multiplot\n";
  return s.text(title, default_png, 1200, 140 + 330 * static_cast<int>(runs.size()));
}

std::string dt_sweep_plot_script(const DtSweepResult& r, const std::string& title, const std::string& reference,
                                 const std::string& default_png) {
  Script s;
  const Looks looks(r.rungs, reference);
  s.commands << "set multiplot layout 1,1 title " << quoted(title) << " noenhanced font ',12'\n"
             << "set logscale x\nset format x '%g'\nset xlabel 'dt'\n"
             << "set ylabel " << quoted("max distance at T = " + number_text(r.time) + " to " + r.truth) << " noenhanced\n";
  if (!r.dts.empty()) s.commands << "set xrange [" << number(r.dts.back() / 1.25) << ":" << number(r.dts.front() * 1.25) << "]\n";
  // A series equal to an earlier one at every dt says so (float rungs often round alike): the same
  // distances to the truth, not the same trajectories, which the sweep does not compare.
  auto same_as = [&](const std::map<std::string, std::vector<double>>& series, const std::string& name) {
    for (const auto& other : r.rungs) {
      if (other == name) return std::string();
      if (series.count(other) && series.at(other) == series.at(name)) return " (on " + other + "'s curve)";
    }
    return std::string();
  };
  auto rows_of = [&](const std::vector<double>& d) {
    std::vector<std::vector<double>> rows;
    for (std::size_t i = 0; i < r.dts.size(); ++i)
      if (d[i] > 0) rows.push_back({r.dts[i], d[i]});
    return rows;
  };
  // The reference first, wide: a rung on it shows as a thin line inside the black one.
  std::vector<std::string> curves;
  for (const auto& name : r.rungs)
    curves.push_back(s.curve(s.block(rows_of(r.distance.at(name))) + " using 1:2 with linespoints" +
                                 looks.line(name, name == reference ? 5 : 1.5) + looks.points(name, 1),
                             name + same_as(r.distance, name)));
  for (const auto& name : r.rungs)
    if (r.rounding.count(name))
      curves.push_back(s.curve(s.block(rows_of(r.rounding.at(name))) + " using 1:2 with lines lc rgb '" +
                                   looks.colour(name) + "' lw 1.5 dt 2",
                               name + " rounding" + same_as(r.rounding, name)));
  for (const auto& name : r.rungs)
    if (r.opening_angle.count(name))
      curves.push_back(s.curve(s.block(rows_of(r.opening_angle.at(name))) + " using 1:2 with lines lc rgb '" +
                                   looks.colour(name) + "' lw 1.5 dt 2",
                               name + " opening angle" + same_as(r.opening_angle, name)));
  if (curves.empty()) {
    empty_plot(s, "no rung ran");
  } else {
    const std::string key = r.rounding.empty() && r.opening_angle.empty()
                                ? ""
                                : "dashed: to " + reference + " at the same dt (" +
                                      (r.opening_angle.empty() ? "rounding"
                                       : r.rounding.empty()    ? "a tree's opening angle"
                                                               : "rounding; a tree's opening angle") +
                                      ")";
    s.commands << "set key title " << s.note(key) << " noenhanced\n";
    plot(s, curves);
  }
  s.commands << "unset multiplot\n";
  return s.text(title, default_png, 1100, 700);
}

namespace {

// The error percentiles a tree's curves draw, a dash pattern each.
struct Level {
  const char* name;
  double SweepPoint::*field;
  const char* dash;
};
constexpr Level kLevels[] = {{"median", &SweepPoint::median, "1"}, {"99%", &SweepPoint::p99, "2"},
                             {"99.9%", &SweepPoint::p999, "4"}, {"max", &SweepPoint::max, "3"}};

// One tree's curve of level `l`, in theta's order, against theta or (against_ms) its ms per step.
std::string level_curve(Script& s, const Looks& looks, const std::string& name, const std::vector<SweepPoint>& points,
                        const Level& l, bool against_ms) {
  std::vector<std::vector<double>> rows;
  for (const SweepPoint& p : points)
    if (p.*l.field > 0 && (!against_ms || p.ms > 0)) rows.push_back({against_ms ? p.ms : p.theta, p.*l.field});
  return s.curve(s.block(rows) + " using 1:2 with linespoints lc rgb '" + looks.colour(name) + "' lw " +
                     (l.field == &SweepPoint::median ? "2" : "1.5") + " dt " + l.dash + looks.points(name, 1),
                 name + " " + l.name + (against_ms ? " against ms" : ""));
}

// The error panel: each tree's percentiles in its colour; an all-pairs rung's rounding as a level.
void error_panel(Script& s, const ThetaSweepResult& r, const Looks& looks) {
  s.commands << "set title " << quoted("force error against float64: |a - a_ref| / |a_ref| of " +
                                       std::to_string(r.sampled) + " sampled bodies (" + r.engine + ")")
             << " noenhanced\nset ylabel 'relative error'\n";
  std::vector<std::string> curves;
  for (const auto& name : r.trees)
    for (const Level& l : kLevels) curves.push_back(level_curve(s, looks, name, r.tree.at(name), l, false));
  for (const auto& name : r.all_pairs) {  // an all-pairs rung's error is its float rounding: a level
    const double median = r.baseline.at(name).median;
    if (median > 0 && !r.thetas.empty())
      curves.push_back(s.curve(s.block({{r.thetas.front(), median}, {r.thetas.back(), median}}) +
                                   " using 1:2 with lines lc rgb '" + looks.colour(name) + "' lw 1.5 dt 5",
                               name + " median (all pairs)"));
  }
  if (curves.empty()) empty_plot(s, "no tree rung ran");
  else plot(s, curves);
}

// The speed-up panel: a tree's colour, a dash pattern per all-pairs rung.
void speedup_panel(Script& s, const ThetaSweepResult& r, const Looks& looks) {
  s.commands << "set title " << quoted("speed-up: the all-pairs rung's ms per step over the tree's, at the same n")
             << " noenhanced\nset ylabel 'speed-up'\nset format y '%g'\n";
  std::vector<std::string> curves;
  for (const auto& name : r.trees)
    for (std::size_t b = 0; b < r.all_pairs.size(); ++b) {
      std::vector<std::vector<double>> rows;
      for (std::size_t i = 0; i < r.thetas.size(); ++i)
        if (r.speedup(name, i, r.all_pairs[b]) > 0) rows.push_back({r.thetas[i], r.speedup(name, i, r.all_pairs[b])});
      curves.push_back(s.curve(s.block(rows) + " using 1:2 with linespoints lc rgb '" + looks.colour(name) +
                                   "' lw 2 dt " + std::to_string(b % 5 + 1) + looks.points(name, 1),
                               name + " over " + r.all_pairs[b]));
    }
  if (curves.empty()) {
    empty_plot(s, "no all-pairs rung ran to compare with");
  } else {
    curves.push_back(s.curve("1 with lines lc rgb '#7F7F7F' lw 1 dt 2", "break-even (1x)"));
    plot(s, curves);
  }
}

// The trade itself: each tree's median and 99% error against its time, one point a theta; the lower
// left is the Pareto front, where monopole and quadrupole cells cross.
void trade_panel(Script& s, const ThetaSweepResult& r, const Looks& looks) {
  s.commands << "set title " << quoted("the trade: force error against ms per step, one point a theta (lower left is "
                                       "better)")
             << " noenhanced\nset xlabel 'ms per step'\nset autoscale x\nset logscale xy\nset format x '%g'\n"
             << "set ylabel 'relative error'\nset format y '10^{%L}'\n";
  std::vector<std::string> curves;
  for (const auto& name : r.trees)
    for (const Level& l : {kLevels[0], kLevels[1]}) curves.push_back(level_curve(s, looks, name, r.tree.at(name), l, true));
  if (curves.empty()) empty_plot(s, "no tree rung ran");
  else plot(s, curves);
}

}  // namespace

std::string theta_sweep_plot_script(const ThetaSweepResult& r, const std::string& title, const std::string& default_png) {
  Script s;
  std::vector<std::string> names = r.trees;
  names.insert(names.end(), r.all_pairs.begin(), r.all_pairs.end());
  const Looks looks(names, "");  // no reference among them: every rung in its palette colour
  s.commands << "set multiplot layout 3,1 title " << quoted(title) << " noenhanced font ',12'\n"
             << "set xlabel 'theta (opening angle)'\n";
  if (!r.thetas.empty()) {
    const auto [lo, hi] = std::minmax_element(r.thetas.begin(), r.thetas.end());
    s.commands << "set xrange [" << number(*lo - 0.03) << ":" << number(*hi + 0.03) << "]\n";
  }
  error_panel(s, r, looks);
  speedup_panel(s, r, looks);
  trade_panel(s, r, looks);
  s.commands << "unset multiplot\n";
  return s.text(title, default_png, 1100, 1300);
}

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs `gnuplot -c plot.gp out.png` in `dir` without a shell; stderr goes to dir/err.txt.
int run_gnuplot(const fs::path& dir) {
  std::vector<std::string> argv_s{"gnuplot", "-c", "plot.gp", "out.png"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int err = open((dir / "err.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) dup2(err, STDERR_FILENO);
    if (chdir(dir.c_str()) != 0) _exit(126);
    execvp("gnuplot", argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The PNG gnuplot draws from `script`.
std::string draw(const std::string& script) {
  check_plot_tool("");
  std::string tmpl = (fs::temp_directory_path() / "nbody-plot-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a folder for gnuplot's files");
  const fs::path dir(tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  std::ofstream(dir / "plot.gp") << script;
  const int rc = run_gnuplot(dir);
  // gnuplot can exit 0 with a cut file (a full disk): take only a PNG that ends with its IEND chunk.
  const std::string png = slurp(dir / "out.png");
  static const std::string kEnd("IEND\xae\x42\x60\x82", 8);
  const bool whole = png.size() > 16 && png.compare(1, 3, "PNG") == 0 &&
                     png.compare(png.size() - kEnd.size(), kEnd.size(), kEnd) == 0;
  if (rc != 0 || !whole)
    throw std::runtime_error("gnuplot failed (exit " + std::to_string(rc) + (whole ? "" : ", no complete PNG") +
                             "): " + slurp(dir / "err.txt"));
  return png;
}

}  // namespace

void write_plot(const std::string& script, const std::string& path) {
  const std::string where = names_stdout(path) ? "stdout" : path;
  if (is_script(path)) {
    write_output(path, script);
    std::printf("plot: gnuplot script written to %s (gnuplot -c %s OUT.png draws it)\n", where.c_str(), where.c_str());
  } else {
    write_output(path, draw(script));
    std::printf("plot: PNG written to %s\n", where.c_str());
  }
  std::fflush(stdout);
}

}  // namespace nbody
