// A run's configuration from a JSON object of fields named by the option rows' page column (the
// page's form and URL parameters: n, dt, softening, seed, ic, subset and the rungs' options). Each
// value is checked for its type and named where it is wrong ("dt 'x': not a number"); a field that
// is absent or null keeps its default; the rungs' own checks judge the values afterwards.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "setup.hpp"

namespace nbody {

// `fields[key]` as a number, a whole number or a name; `fallback` where it is absent or null.
double number_field(const nlohmann::json& fields, const char* key, double fallback);
long long integer_field(const nlohmann::json& fields, const char* key, long long fallback);
std::string name_field(const nlohmann::json& fields, const char* key, const std::string& fallback);

// The configuration the fields give, n = `n_default` where none is given (a body file without n:
// all of its bodies). Fields of other names are the caller's.
Config config_from_fields(const nlohmann::json& fields, long long n_default);

// The rungs' options that have page fields, by those names: what config_from_fields reads.
nlohmann::json fields_of(const PipelineOptions& o);

}  // namespace nbody
