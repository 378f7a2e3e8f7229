#include "checks.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "error.hpp"

namespace nbody {

namespace {

double parse_distance(const std::string& text, const std::string& whole, const std::string& expected) {
  double d = 0;
  try {
    std::size_t used = 0;
    d = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--fail-above '" + whole + "': expected " + expected);
  }
  if (!std::isfinite(d) || d < 0) throw InputError("--fail-above '" + whole + "': the distance must be finite and >= 0");
  return d;
}

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:  // XML 1.0 has no other control characters than tab, newline and return
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

Threshold parse_threshold(const std::string& text, long long implied_step) {
  const auto at = text.find('@');
  if (at == std::string::npos && implied_step >= 0)
    return {parse_distance(text, text, "DISTANCE (or DISTANCE@" + std::to_string(implied_step) + "), e.g. 1e-5"),
            implied_step};
  const std::string expected = "DISTANCE@STEP, e.g. 1e-4@20";
  if (at == std::string::npos) throw InputError("--fail-above '" + text + "': expected " + expected);
  Threshold t;
  t.max = parse_distance(text.substr(0, at), text, expected);
  try {
    const std::string step = text.substr(at + 1);
    std::size_t used = 0;
    t.step = std::stoll(step, &used);
    if (used != step.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--fail-above '" + text + "': expected " + expected);
  }
  return t;
}

Check judge(const std::string& name, double distance, const Threshold& t) {
  Check c{name, distance, distance <= t.max, ""};
  if (!c.passed) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "FAIL: %s max distance %.3e > %.3e at step %lld", name.c_str(), distance, t.max,
                  t.step);
    c.line = buf;
  }
  return c;
}

std::string junit_xml(const CheckReport& r) {
  int failures = 0;
  for (const Check& c : r.checks) failures += c.passed ? 0 : 1;
  const int errors = r.error.empty() ? 0 : 1;
  const std::string tests = std::to_string(r.checks.size() + r.skipped.size() + static_cast<std::size_t>(errors));
  const std::string counts = " tests=\"" + tests + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
                             std::to_string(errors) + "\" skipped=\"" + std::to_string(r.skipped.size()) +
                             "\" time=\"" + seconds_text(r.seconds) + "\"";
  const std::string suite = escape(r.suite);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + suite + "\"" + counts + ">\n";
  x += "  <testsuite name=\"" + suite + "\"" + counts + ">\n";
  x += "    <properties>\n      <property name=\"configuration\" value=\"" + escape(r.properties) +
       "\"/>\n    </properties>\n";
  for (const Check& c : r.checks) {
    // No time of its own: the pairs' rungs ran together (the suite's time is the command's).
    x += "    <testcase classname=\"" + suite + "\" name=\"" + escape(c.name) + "\"";
    if (c.passed) {
      x += "/>\n";
      continue;
    }
    x += ">\n      <failure message=\"" + escape(c.line) + "\" type=\"fail-above\">" + escape(c.line) +
         "</failure>\n    </testcase>\n";
  }
  for (const auto& [name, why] : r.skipped)
    x += "    <testcase classname=\"" + suite + "\" name=\"" + escape(name) + "\">\n      <skipped message=\"" +
         escape(why) + "\"/>\n    </testcase>\n";
  if (errors)
    x += "    <testcase classname=\"" + suite + "\" name=\"set-up\">\n      <error message=\"" + escape(r.error) +
         "\" type=\"unavailable\">" + escape(r.error) + "</error>\n    </testcase>\n";
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace nbody
