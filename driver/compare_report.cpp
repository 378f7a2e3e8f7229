#include "compare.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error.hpp"

namespace nbody {

std::string pair_name(const PairRecord& r) { return r.a + "|" + r.b; }

void print_summary(const CompareResult& r, const std::string& reference) {
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

}  // namespace

void plot(const CompareResult& r, const std::string& png_path, const std::string& title) {
  if (!have_program("gnuplot"))
    throw InputError("--plot needs gnuplot, which is not on PATH (scripts/install-deps.sh installs "
                     "gnuplot-nox)");
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("nbody-plot-" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { std::error_code ec; fs::remove_all(d, ec); }
  } cleanup{dir};

  // One data file per pair (step, max) and per pipeline (step, energy drift).
  std::ostringstream script;
  script << "set terminal pngcairo size 1100,800 font ',10'\n"
         << "set output '" << png_path << ".partial'\n"
         << "set multiplot layout 2,1 title '" << title << "'\n"
         << "set logscale y\nset format y '10^{%L}'\nset grid\nset key outside right\n"
         << "set ylabel 'max Euclidean distance'\nset xlabel 'step'\n";
  std::vector<std::string> curves;
  if (!r.steps.empty()) {
    for (std::size_t k = 0; k < r.steps.front().pairs.size(); ++k) {
      const fs::path f = dir / ("pair" + std::to_string(k) + ".dat");
      std::ofstream out(f);
      out.precision(9);
      for (const auto& s : r.steps)
        if (s.pairs[k].d.max > 0) out << s.step << ' ' << s.pairs[k].d.max << '\n';
      curves.push_back("'" + f.string() + "' using 1:2 with lines lw 2 title '" +
                       pair_name(r.steps.front().pairs[k]) + "'");
    }
  }
  script << "plot ";
  if (curves.empty()) script << "1/0 notitle";
  for (std::size_t k = 0; k < curves.size(); ++k) script << (k ? ", " : "") << curves[k];
  script << "\nset ylabel '|E - E_0| / |E_0|'\n";
  std::vector<std::string> energy;
  for (const auto& name : r.pipelines) {
    const double e0 = r.initial.at(name).e.total();
    const fs::path f = dir / ("energy" + std::to_string(energy.size()) + ".dat");
    std::ofstream out(f);
    out.precision(9);
    out << 0 << ' ' << 1e-17 << '\n';
    for (const auto& s : r.steps)
      if (auto it = s.energy.find(name); it != s.energy.end())
        out << s.step << ' ' << std::max(relative_drift(e0, it->second), 1e-17) << '\n';
    energy.push_back("'" + f.string() + "' using 1:2 with linespoints lw 2 title '" + name + "'");
  }
  script << "plot ";
  for (std::size_t k = 0; k < energy.size(); ++k) script << (k ? ", " : "") << energy[k];
  script << "\nunset multiplot\n";
  const fs::path gp = dir / "plot.gp";
  std::ofstream(gp) << script.str();
  const std::string cmd = "gnuplot '" + gp.string() + "' 2>'" + (dir / "err.txt").string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream err(dir / "err.txt");
    std::string msg((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    std::remove((png_path + ".partial").c_str());
    throw std::runtime_error("gnuplot failed: " + msg);
  }
  fs::rename(png_path + ".partial", png_path);
}

}  // namespace nbody
