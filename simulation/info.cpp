#include "info.hpp"

#include <algorithm>

#include "catalogue.hpp"
#include "device_names.hpp"
#include "hdf5_io.hpp"
#include "options.hpp"
#include "setup.hpp"
#include "world.hpp"

namespace nbody {

namespace {

const char* family_word(Family f) {
  switch (f) {
    case Family::Cpu: return "cpu";
    case Family::Gl: return "gl";
    case Family::Cuda: return "cuda";
    case Family::WebGpu: return "webgpu";
  }
  return "";
}

const char* split_word(Split s) {
  switch (s) {
    case Split::None: return "none";
    case Split::Blocks: return "blocks";
    case Split::KeyRanges: return "key ranges";
  }
  return "";
}

}  // namespace

nlohmann::json rung_json(const Rung& r) {
  const std::vector<std::string> ladder = ladder_names();
  const auto place = std::find(ladder.begin(), ladder.end(), r.name);
  nlohmann::json options = nlohmann::json::array();
  for (const RungOption& opt : r.options) options.push_back(std::string(opt.key));
  return {{"name", r.name},
          {"family", family_word(r.family)},
          {"summary", r.summary},
          {"method", r.method == Method::Tree ? "tree" : "all pairs"},
          {"state_bits", r.state_bits},
          {"fp64_forces", r.fp64_forces},
          {"distributable", r.distributable()},
          {"split", split_word(r.split)},
          {"deterministic", r.deterministic},
          {"ladder", place == ladder.end() ? -1 : place - ladder.begin()},
          {"options", options}};
}

nlohmann::json info_json() {
  nlohmann::json j;
  j["version"] = NBODY_VERSION;
  j["cpu"] = cpu_model();
  j["gl"] = gl_description();
  std::string reason;
  const auto cuda = cuda_descriptions(reason);
  j["cuda"] = cuda;
  j["cuda_unavailable"] = cuda.empty() ? nlohmann::json(reason) : nlohmann::json(nullptr);
  {
    const auto engine = make_engine(PipelineOptions{});
    j["fp64_engine"] = {{"name", engine->name()}, {"where", engine->where()}};
  }
  j["hdf5"] = have_hdf5();
  j["mpi"] = World::built_with_mpi();
  j["rungs"] = nlohmann::json::array();
  j["pipelines"] = nlohmann::json::object();
  for (const Rung& r : rungs()) {
    nlohmann::json row = rung_json(r);
    const std::string why = unavailable_reason(r.name);
    row["available"] = why.empty();
    if (!why.empty()) row["reason"] = why;
    j["rungs"].push_back(row);
    j["pipelines"][r.name] = {{"available", why.empty()}, {"reason", why.empty() ? nlohmann::json() : nlohmann::json(why)}};
  }
  j["options"] = nlohmann::json::array();
  for (const OptionRow& row : option_table()) {
    nlohmann::json o{{"key", row.key}, {"cli", row.cli}, {"also", row.also}, {"python", row.python},
                     {"page", row.page}, {"range", row.range}, {"help", row.help}};
    std::visit([&](auto v) { o["default"] = v; }, row.fallback);
    j["options"].push_back(o);
  }
  return j;
}

}  // namespace nbody
