// What the page's JavaScript sees of nbody: info() and the page's one Session (session.hpp).
// Strings in and out are JSON; arrays are Float32Array / Float64Array views of wasm memory.
// The Session's calls go through nbody_call(), which the page calls with ccall's async option: a
// WebGPU rung waits for the GPU inside them (Asyncify), and the call's promise settles when it is
// done. Nothing else may call into nbody.wasm meanwhile (the page queues its calls).
#include <emscripten.h>
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "catalogue.hpp"
#include "comparison.hpp"
#include "error.hpp"
#include "gl_pipeline.hpp"
#include "info.hpp"
#include "initial_conditions.hpp"
#include "options.hpp"
#include "session.hpp"
#include "webgpu_pipeline.hpp"

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

// Each rung option's form field: the values some rung takes (the lowest and highest of every rung's
// range, 0 where a rung chooses for it) and the help --help prints, naming what each rung accepts.
nlohmann::json page_fields() {
  nlohmann::json fields = nlohmann::json::object();
  for (const Rung& r : rungs())
    for (const RungOption& o : r.options) {
      if (option_row(o.key).page.empty()) continue;
      const double lo = o.is_real() ? o.reals.lo : (o.zero_is != 0 || !o.zero_note.empty()) ? 0 : o.accepts.lo;
      const double hi = o.is_real() ? o.reals.hi : o.accepts.hi;
      nlohmann::json& f = fields[std::string(o.key)];
      if (f.is_null()) f = {{"min", lo}, {"max", hi}, {"help", rung_option_help(o.key)}};
      f["min"] = std::min(f["min"].get<double>(), lo);
      f["max"] = std::max(f["max"].get<double>(), hi);
    }
  return fields;
}

// Every rung of the catalogue, the page's fields it takes (gl_chunk, theta, ...), and whether it
// runs here (and if not, why), as `nbody info` says.
std::string info() {
  nlohmann::json j;
  j["version"] = NBODY_VERSION;
  j["max_bodies"] = kMaxBodies;
  j["max_bodies_alone"] = kMaxBodiesAlone;
  j["max_stage_bodies"] = kMaxStageBodies;
  j["generators"] = generator_names();
  j["defaults"] = page_defaults();
  j["fields"] = page_fields();
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
  if (const std::string adapter = webgpu::describe_adapter(); !adapter.empty()) j["webgpu"] = adapter;
  else j["webgpu_error"] = webgpu::why_unavailable();
  j["rungs"] = nlohmann::json::array();
  for (const Rung& r : rungs()) {
    nlohmann::json row = rung_json(r);  // its facts; "options": its option keys, the page's field names
    const std::string why = unavailable_reason(r.name);
    row["available"] = why.empty();
    if (!why.empty()) row["reason"] = why;
    j["rungs"].push_back(row);
  }
  return reply(j);
}

Session& session() {
  static Session s;
  return s;
}

template <typename T>
emscripten::val view(std::vector<T>& v) {
  return emscripten::val(emscripten::typed_memory_view(v.size(), v.data()));
}

// method(args...) of the page's Session, args a JSON array: its JSON reply.
std::string call(const std::string& method, const nlohmann::json& args) {
  Session& s = session();
  if (method == "start") return s.start(args.at(0).dump());
  if (method == "step") return s.step(args.at(0).get<int>());
  if (method == "accelerations") return s.accelerations();
  if (method == "energy") return s.energy();
  if (method == "stages") return s.stages();
  if (method == "workgroup") return s.workgroup(args.at(0).get<int>());
  if (method == "bench") return s.bench(args.at(0).get<int>(), args.at(1).get<int>());
  throw InputError("the page's session has no call '" + method + "'");
}

}  // namespace

}  // namespace nbody::web

extern "C" EMSCRIPTEN_KEEPALIVE const char* nbody_call(const char* method, const char* args) {
  static std::string out;
  try {
    out = nbody::web::call(method, nlohmann::json::parse(args));
  } catch (...) {
    out = nbody::web::reply(nbody::web::current_error());
  }
  return out.c_str();
}

EMSCRIPTEN_BINDINGS(nbody) {
  using namespace emscripten;
  nbody::set_front_end(nbody::FrontEnd::Page);  // the library's messages name the page's fields
  using nbody::web::view;
  function("info", &nbody::web::info);
  // Views of the session's arrays, valid until its next call.
  using nbody::web::session;
  function("drawPositions", optional_override([] { return view(session().draw_positions()); }));
  function("positions", optional_override([] { return view(session().positions()); }));
  function("referencePositions", optional_override([] { return view(session().reference_positions()); }));
  function("rungAccelerations", optional_override([] { return view(session().rung_accelerations()); }));
  function("referenceAccelerations", optional_override([] { return view(session().reference_accelerations()); }));
  function("stageData", optional_override([](int k) { return view(session().stage_data(k)); }));
  function("workgroupData", optional_override([] { return view(session().workgroup_data()); }));
}
