#include "compare_report.hpp"

#include <algorithm>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "config.hpp"
#include "error.hpp"
#include "output.hpp"
#include "verdict.hpp"

namespace nbody {

void print_summary(const CompareResult& r, const std::string& reference, double dt) {
  for (const auto& [name, why] : r.skipped) std::printf("skipped %-18s %s\n", name.c_str(), why.c_str());
  std::printf("\n%-18s %12s %12s %14s %12s %12s\n", "pipeline", "acc rms_rel", "acc max_rel",
              "energy drift", "|dP|", "|dL|");
  for (const auto& name : r.pipelines) {
    const auto& i = r.initial.at(name);
    const auto& f = r.final_.at(name);
    const Vec3 dp{f.p.x - i.p.x, f.p.y - i.p.y, f.p.z - i.p.z};
    const Vec3 dl{f.l.x - i.l.x, f.l.y - i.l.y, f.l.z - i.l.z};
    if (name == reference)
      std::printf("%-18s %12s %12s", name.c_str(), "(reference)", "");
    else
      std::printf("%-18s %12.3e %12.3e", name.c_str(), r.accel.at(name).rms_rel,
                  r.accel.at(name).max_rel);
    std::printf(" %14.3e %12.3e %12.3e\n", relative_drift(i.e.total(), f.e.total()), norm(dp),
                norm(dl));
  }
  if (r.steps.empty()) return;
  const StepRecord& last = r.steps.back();
  std::printf("\nposition distance at step %lld (Euclidean)\n%-32s %12s %12s %10s\n", last.step,
              "pair", "max", "rms", "worst body");
  for (const auto& p : last.pairs)
    std::printf("%-32s %12.3e %12.3e %10zu\n", pair_name(p).c_str(), p.d.max, p.d.rms, p.d.worst);
  const std::vector<std::string> lines = verdict(r, reference, dt);
  if (!lines.empty()) std::printf("\n");
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
}

std::string to_csv(const CompareResult& r) {
  std::ostringstream out;
  out.precision(9);
  out << "step,pair,max,rms\n";
  for (const auto& s : r.steps)
    for (const auto& p : s.pairs) out << s.step << ',' << pair_name(p) << ',' << p.d.max << ',' << p.d.rms << '\n';
  return out.str();
}

namespace {

bool have_program(const char* name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0) return true;
  return false;
}

// A column header gnuplot reads as one quoted string: quotes and control characters become '?'.
std::string header(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  return out + "\"";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs `gnuplot -c plot.gp ARGS...` in `dir` without a shell; stderr goes to dir/err.txt.
int run_gnuplot(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s{"gnuplot", "-c", "plot.gp"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
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

}  // namespace

void check_plot_tool() {
  if (!have_program("gnuplot"))
    throw InputError("--plot needs gnuplot, which is not on PATH (scripts/install-deps.sh installs "
                     "gnuplot-nox)");
}

namespace {

// Each curve its own dash pattern and marker; `every`: a marker on every that many points.
std::string style(std::size_t k, std::size_t every) {
  return " lw 2 dt " + std::to_string(k % 5 + 1) + " pt " + std::to_string(k % 13 + 1) + " pi -" + std::to_string(every);
}

// The divergence panel: the pairs shown (with the reference, or all), log scale. A curve equal to
// an earlier one at every step says so in its title (the cpu64|* curves often lie on top of each
// other). Writes pairK.dat into `dir`.
void divergence_panel(std::ostringstream& script, const std::filesystem::path& dir, const CompareResult& r,
                      const std::string& reference, bool all_pairs) {
  const std::size_t every = std::max<std::size_t>(1, r.steps.size() / 8);  // about 8 markers a curve
  std::vector<std::string> curves;
  const std::size_t pairs = r.steps.empty() ? 0 : r.steps.front().pairs.size();
  for (std::size_t k = 0; k < pairs; ++k) {
    const PairRecord& pair = r.steps.front().pairs[k];
    if (!all_pairs && pair.a != reference && pair.b != reference) continue;
    std::string title = pair_name(pair);
    for (std::size_t j = 0; j < k; ++j) {
      const bool same = std::all_of(r.steps.begin(), r.steps.end(),
                                    [&](const auto& s) { return s.pairs[k].d.max == s.pairs[j].d.max; });
      if (same && (all_pairs || r.steps.front().pairs[j].a == reference)) {
        title += " (= " + pair_name(r.steps.front().pairs[j]) + ")";
        break;
      }
    }
    const std::string f = "pair" + std::to_string(k) + ".dat";
    std::ofstream out(dir / f);
    out.precision(9);
    out << "step " << header(title) << '\n';
    for (const auto& s : r.steps)
      if (s.pairs[k].d.max > 0) out << s.step << ' ' << s.pairs[k].d.max << '\n';
    curves.push_back("'" + f + "' using 1:2 with linespoints" + style(curves.size(), every) + " title columnheader(2)");
  }
  // An empty panel (one pipeline, or --steps 0) says so: a curve below a fixed range draws nothing
  // and, unlike 1/0, is not an error on a log axis.
  if (curves.empty()) script << "set label 1 'no pair of pipelines to compare' at graph 0.5, 0.5 center\n";
  script << "plot ";
  if (curves.empty()) script << "[] [1e-16:1] 1e-300 notitle\nunset label 1\n";
  for (std::size_t k = 0; k < curves.size(); ++k) script << (k ? ", " : "") << curves[k];
  script << "\n";
}

// The energy panel: each pipeline's relative drift at every energy sample, a marker on each. The
// drift is 0 at step 0 by definition, and may be exactly 0 later: a log axis shows neither, so
// those points are left out (not floored to a made-up value that stretches the axis).
void energy_panel(std::ostringstream& script, const std::filesystem::path& dir, const CompareResult& r) {
  script << "set ylabel '|E - E_0| / |E_0|'\n";
  std::vector<std::string> curves;
  std::size_t points = 0;
  for (const auto& name : r.pipelines) {
    const double e0 = r.initial.at(name).e.total();
    const std::string f = "energy" + std::to_string(curves.size()) + ".dat";
    std::ofstream out(dir / f);
    out.precision(9);
    out << "step " << header(name) << '\n';
    for (const auto& s : r.steps)
      if (auto it = s.energy.find(name); it != s.energy.end() && s.step > 0) {
        const double drift = relative_drift(e0, it->second);
        if (drift > 0) out << s.step << ' ' << drift << '\n', ++points;
      }
    curves.push_back("'" + f + "' using 1:2 with linespoints" + style(curves.size(), 1) + " title columnheader(2)");
  }
  if (points == 0) curves.clear();  // no drift after step 0 to show
  if (curves.empty()) script << "set label 2 'no energy measured after step 0' at graph 0.5, 0.5 center\n";
  script << "plot ";
  if (curves.empty()) script << "[] [1e-16:1] 1e-300 notitle";
  for (std::size_t k = 0; k < curves.size(); ++k) script << (k ? ", " : "") << curves[k];
  script << "\n";
}

}  // namespace

namespace {

// Runs the script `write` makes (it may add data files to the folder it is given) with gnuplot, the
// title as ARG2, and writes the PNG as any output is written.
void render(const std::function<void(std::ostringstream&, const std::filesystem::path&)>& write,
            const std::string& png_path, const std::string& title) {
  check_plot_tool();
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "nbody-plot-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a folder for gnuplot's files");
  const fs::path dir(tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { std::error_code ec; fs::remove_all(d, ec); }
  } cleanup{dir};
  std::ostringstream script;
  write(script, dir);
  std::ofstream(dir / "plot.gp") << script.str();
  const int rc = run_gnuplot(dir, {"out.png", title});
  // gnuplot can exit 0 with a cut file (a full disk): take only a PNG that ends with its IEND chunk.
  const std::string png = slurp(dir / "out.png");
  static const std::string kEnd("IEND\xae\x42\x60\x82", 8);
  const bool whole = png.size() > 16 && png.compare(1, 3, "PNG") == 0 &&
                     png.compare(png.size() - kEnd.size(), kEnd.size(), kEnd) == 0;
  if (rc != 0 || !whole)
    throw std::runtime_error("gnuplot failed (exit " + std::to_string(rc) + (whole ? "" : ", no complete PNG") +
                             "): " + slurp(dir / "err.txt"));
  write_output(png_path, png);
}

}  // namespace

void plot(const CompareResult& r, const std::string& png_path, const std::string& title,
          const std::string& reference, bool all_pairs) {
  // The script is fixed text: file names are ours (pairK.dat, energyK.dat), curve titles are the
  // files' column headers, the page title is ARG2 and the output ARG1. Both panels share fixed
  // margins, so their axes line up; the legends sit in the right third, one entry a line.
  render([&](std::ostringstream& script, const std::filesystem::path& dir) {
    script << "set terminal pngcairo size 1200,860 font ',10'\n"
           << "set output ARG1\n"
           << "set multiplot layout 2,1 title ARG2 noenhanced\n"
           << "set lmargin at screen 0.08\nset rmargin at screen 0.66\n"
           << "set logscale y\nset format y '10^{%L}'\nset grid\n"
           << "set key outside right top vertical Left reverse samplen 3 spacing 1.1 noenhanced\n"
           << "set ylabel 'max Euclidean distance'\nset xlabel 'step'\n";
    if (!r.steps.empty() && r.steps.back().step > 0)  // one x range for both (the energy may be one point)
      script << "set xrange [0:" << r.steps.back().step << "]\n";
    divergence_panel(script, dir, r, reference, all_pairs);
    energy_panel(script, dir, r);
    script << "unset multiplot\n";
  }, png_path, title);
}

void plot_dt_sweep(const DtSweepResult& r, const std::string& png_path, const std::string& title) {
  render([&](std::ostringstream& script, const std::filesystem::path& dir) {
    script << "set terminal pngcairo size 1000,700 font ',10'\nset output ARG1\nset title ARG2 noenhanced\n"
           << "set logscale xy\nset format x '%g'\nset format y '10^{%L}'\nset grid\n"
           << "set key outside right top vertical Left reverse noenhanced\n"
           << "set xlabel 'dt'\nset ylabel 'max distance to the converged trajectory at T'\nplot ";
    for (std::size_t k = 0; k < r.rungs.size(); ++k) {
      const std::string f = "rung" + std::to_string(k) + ".dat";
      std::ofstream out(dir / f);
      out.precision(9);
      out << "dt " << header(r.rungs[k]) << '\n';
      for (std::size_t i = 0; i < r.dts.size(); ++i)
        if (r.distance.at(r.rungs[k])[i] > 0) out << r.dts[i] << ' ' << r.distance.at(r.rungs[k])[i] << '\n';
      script << (k ? ", " : "") << "'" << f << "' using 1:2 with linespoints" << style(k, 1) << " title columnheader(2)";
    }
    if (r.rungs.empty()) script << "1e-300 notitle";
    script << "\n";
  }, png_path, title);
}

void print_explanation(const Explanation& e) {
  std::printf("\nwhy float32 pipelines diverge (n=%zu, %lld steps; each row changes one factor of "
              "the baseline)\n%-92s %11s %11s %11s %11s\n", e.n, e.steps, "factor",
              "acc vs 64", "acc vs base", "dist vs 64", "dist vs base");
  for (const ExplainRow& r : e.rows)
    std::printf("%-92s %11.3e %11.3e %11.3e %11.3e\n", r.cause.c_str(), r.accel_vs_cpu64, r.accel_vs_baseline,
                r.distance_vs_cpu64, r.distance_vs_baseline);
  if (e.steps > 0) {
    std::printf("%-92s %11s %11s %11.3e\n", "time step: cpu64 at dt against cpu64 at dt/2", "", "", e.dt_vs_half);
    std::printf("%-92s %11s %11s %11.3e  (order %.2f)\n", "time step: cpu64 at dt/2 against cpu64 at dt/4", "", "",
                e.half_vs_quarter, e.order);
    std::printf("%-92s %11s %11s %11.3e\n", "time step: Richardson estimate of cpu64's error at dt (4/3 of the first)",
                "", "", e.richardson);
    std::printf("%s\n", e.verdict.c_str());
  }
  if (e.efold_steps > 0)
    std::printf("chaos: the baseline-vs-cpu64 distance grows by e every %.1f steps (%.3g time "
                "units), amplifying every factor above\n", e.efold_steps, e.efold_time);
  else
    std::printf("chaos: no exponential growth of the divergence over these %lld steps (run "
                "longer to see it)\n", e.steps);
}

void check_junit(const CompareArgs& a) {
  if (a.given("--junit") && a.junit.empty()) throw InputError("--junit '': name a file for the report");
  if (!a.junit.empty() && a.fail_above.empty())
    throw InputError("--junit '" + a.junit + "': the report holds --fail-above's checks; give --fail-above too");
  check_output_path(a.junit, "--junit");
}

int report_checks(const CompareArgs& a, CheckReport report, const std::string& pass_line,
                  std::chrono::steady_clock::time_point began) {
  bool failed = false;
  for (const Check& c : report.checks) {
    if (!c.passed) std::printf("%s\n", c.line.c_str());
    failed = failed || !c.passed;
  }
  if (!failed) std::printf("%s\n", pass_line.c_str());
  if (!a.junit.empty()) {
    report.suite = "nbody compare";
    char config[512];
    std::snprintf(config, sizeof config, "n=%lld steps=%lld dt=%g softening=%g ic=%s seed=%llu fail-above=%s",
                  static_cast<long long>(a.cfg.n), static_cast<long long>(a.cfg.steps), a.cfg.dt, a.cfg.softening,
                  a.cfg.ic.c_str(), static_cast<unsigned long long>(a.cfg.seed), a.fail_above.c_str());
    report.properties = config;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    write_output(a.junit, junit_xml(report));
  }
  return failed ? 1 : 0;
}

}  // namespace nbody
