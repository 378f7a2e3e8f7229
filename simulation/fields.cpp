#include "fields.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>

#include "error.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "rung.hpp"

namespace nbody {

namespace {
bool given(const nlohmann::json& fields, const char* key) { return fields.contains(key) && !fields[key].is_null(); }
}  // namespace

double number_field(const nlohmann::json& fields, const char* key, double fallback) {
  if (!given(fields, key)) return fallback;
  const nlohmann::json& v = fields[key];
  if (!v.is_number())
    throw InputError(std::string(key) + " " + (v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump()) +
                     ": not a number");
  return v.get<double>();
}

long long integer_field(const nlohmann::json& fields, const char* key, long long fallback) {
  const double v = number_field(fields, key, static_cast<double>(fallback));
  if (!(v >= -9.0e15 && v <= 9.0e15))  // whole numbers a double holds exactly, with room
    throw InputError(std::string(key) + " " + number_text(v) + ": out of range");
  if (v != std::floor(v)) throw InputError(std::string(key) + " " + number_text(v) + ": must be a whole number");
  return static_cast<long long>(v);
}

std::string name_field(const nlohmann::json& fields, const char* key, const std::string& fallback) {
  if (!given(fields, key)) return fallback;
  if (!fields[key].is_string()) throw InputError(std::string(key) + " " + fields[key].dump() + ": not a name");
  return fields[key].get<std::string>();
}

Config config_from_fields(const nlohmann::json& fields, long long n_default) {
  Config c;
  c.n_given = given(fields, "n");
  c.n = integer_field(fields, "n", n_default);
  c.dt = number_field(fields, "dt", c.dt);
  c.softening = number_field(fields, "softening", c.softening);
  const long long seed = integer_field(fields, "seed", static_cast<long long>(c.seed));
  if (seed < 0) throw InputError("seed " + std::to_string(seed) + ": must be >= 0");
  c.seed = static_cast<std::uint64_t>(seed);
  c.ic = name_field(fields, "ic", c.ic);
  c.subset = name_field(fields, "subset", c.subset);
  if (c.ic_is_file() && !c.n_given) {
    c.n = 0;
    resolve_body_count(c);  // a body file without n: all of its bodies
    if (c.n == 0) initial_bodies(c);  // not a body file: its reader says why
  }
  for (const PipelineField& f : pipeline_fields()) {  // the rungs' options the page has fields for
    const std::string key(option_row(f.key).page);
    if (key.empty()) continue;
    if (auto* real = std::get_if<double PipelineOptions::*>(&f.field)) {
      c.pipeline.**real = number_field(fields, key.c_str(), c.pipeline.**real);
    } else if (auto* whole = std::get_if<int PipelineOptions::*>(&f.field)) {
      const long long v = integer_field(fields, key.c_str(), c.pipeline.**whole);
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        throw InputError(key + " " + std::to_string(v) + ": out of range");
      c.pipeline.**whole = static_cast<int>(v);
    } else if (auto* text = std::get_if<std::string PipelineOptions::*>(&f.field)) {
      c.pipeline.**text = name_field(fields, key.c_str(), c.pipeline.**text);
    }
  }
  return c;
}

nlohmann::json fields_of(const PipelineOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const PipelineField& f : pipeline_fields())
    if (const std::string key(option_row(f.key).page); !key.empty())
      std::visit([&](auto member) { j[key] = o.*member; }, f.field);
  return j;
}

}  // namespace nbody
