// --fail-above: the threshold, each compared pair's verdict, and the JUnit XML report that CI
// systems' test reporters read (GitLab, Jenkins, GitHub): one <testcase> per check.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace nbody {

struct Threshold {
  double max = 0;
  long long step = 0;
};

// "DISTANCE@STEP", e.g. "1e-4@20"; where `implied_step` >= 0 (a snapshot's step), "DISTANCE"
// alone too, at that step. Throws InputError naming the text and what was expected.
Threshold parse_threshold(const std::string& text, long long implied_step = -1);

struct Check {
  std::string name;    // "cpu64|gl:forcequad", or the pipeline measured against a snapshot
  double distance = 0; // max distance at the threshold's step
  bool passed = false;
  std::string line;    // the table's FAIL line for a failed check, as printed
};

// The verdict of `distance` against `t` (a NaN fails), with its FAIL line.
Check judge(const std::string& name, double distance, const Threshold& t);

struct CheckReport {
  std::string suite;                          // "nbody compare"
  std::string properties;                     // the configuration, one line (n, steps, dt, ...)
  std::vector<Check> checks;
  std::map<std::string, std::string> skipped; // pipelines that could not run: name -> reason
  std::string error;                          // the command ended before its checks: why ("": it did not)
  double seconds = 0;
};

// JUnit XML: <testsuites> holding one <testsuite> with a <testcase> per check (a <failure> whose
// text is the FAIL line), one <skipped> test case per pipeline that could not run, and where the
// command ended before its checks (a pipeline it was told to run cannot run here), one test case
// "set-up" with that <error>.
std::string junit_xml(const CheckReport& report);

}  // namespace nbody
