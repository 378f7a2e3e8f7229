// What the page's JavaScript sees of nbody: info() and the Session class (session.hpp), through
// embind. Strings in and out are JSON; arrays are Float32Array / Float64Array views of wasm memory.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "catalogue.hpp"
#include "comparison.hpp"
#include "error.hpp"
#include "gl_pipeline.hpp"
#include "initial_conditions.hpp"
#include "options.hpp"
#include "session.hpp"

namespace nbody::web {

namespace {

// The page's form fields' defaults, from the library's option table (n: the page's own).
nlohmann::json page_defaults() {
  nlohmann::json d;
  for (const OptionRow& row : option_table()) {
    if (row.page.empty() || d.contains(row.page)) continue;
    std::visit([&](auto v) { d[std::string(row.page)] = v; }, row.fallback);
  }
  d["n"] = kPageBodies;
  d["pipeline"] = canonical_name("gl");
  return d;
}

// Every rung of the catalogue, and whether it runs here (and if not, why), as `nbody info` says.
std::string info() {
  nlohmann::json j;
  j["version"] = NBODY_VERSION;
  j["max_bodies"] = kMaxBodies;
  j["max_stage_bodies"] = kMaxStageBodies;
  j["generators"] = generator_names();
  j["defaults"] = page_defaults();
  auto bounds = [](const auto& steps) {
    nlohmann::json out = nlohmann::json::array();
    for (const Fig9Bound& b : steps) out.push_back({b.until_step, b.distance});
    return out;
  };
  j["fig9"] = {{"paper", bounds(kFig9Paper)}, {"goal", bounds(kFig9Goal)}};
  try {
    j["gl"] = gl::describe_context();
  } catch (...) {
    j["gl_error"] = current_error()["error"];
  }
  j["rungs"] = nlohmann::json::array();
  const std::vector<std::string> ladder = ladder_names();
  for (const Rung& r : rungs()) {
    const auto place = std::find(ladder.begin(), ladder.end(), r.name);
    nlohmann::json row{{"name", r.name}, {"summary", r.summary}, {"state_bits", r.state_bits},
                       {"ladder", place == ladder.end() ? -1 : place - ladder.begin()}};
    const std::string why = unavailable_reason(r.name);
    row["available"] = why.empty();
    if (!why.empty()) row["reason"] = why;
    j["rungs"].push_back(row);
  }
  return reply(j);
}

template <typename T>
emscripten::val view(std::vector<T>& v) {
  return emscripten::val(emscripten::typed_memory_view(v.size(), v.data()));
}

}  // namespace

}  // namespace nbody::web

EMSCRIPTEN_BINDINGS(nbody) {
  using namespace emscripten;
  nbody::set_front_end(nbody::FrontEnd::Page);  // the library's messages name the page's fields
  using nbody::web::Session;
  using nbody::web::view;
  function("info", &nbody::web::info);
  class_<Session>("Session")
      .constructor<>()
      .function("start", &Session::start)
      .function("step", &Session::step)
      .function("accelerations", &Session::accelerations)
      .function("energy", &Session::energy)
      .function("stages", &Session::stages)
      .function("bench", &Session::bench)
      .function("drawPositions", optional_override([](Session& s) { return view(s.draw_positions()); }))
      .function("positions", optional_override([](Session& s) { return view(s.positions()); }))
      .function("referencePositions", optional_override([](Session& s) { return view(s.reference_positions()); }))
      .function("rungAccelerations", optional_override([](Session& s) { return view(s.rung_accelerations()); }))
      .function("referenceAccelerations",
                optional_override([](Session& s) { return view(s.reference_accelerations()); }))
      .function("stageData", optional_override([](Session& s, int k) { return view(s.stage_data(k)); }));
}
