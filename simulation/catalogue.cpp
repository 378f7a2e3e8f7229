#include "catalogue.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "cuda_pipeline.hpp"  // plain C++: cuda::rungs() in every build
#include "error.hpp"
#include "options.hpp"
#include "gl_pipeline.hpp"    // plain C++: gl::rungs() in every build
#include "reference.hpp"
#include "webgpu_pipeline.hpp"  // plain C++: webgpu::rungs() in every build

namespace nbody {

namespace {

// Every family's entries, checked once: each whole, each name once, the ladder one chain.
std::vector<Rung> joined_registries() {
  std::vector<Rung> all;
  for (const auto* family : {&cpu_rungs(), &gl::rungs(), &cuda::rungs(), &webgpu::rungs()}) all.insert(all.end(), family->begin(), family->end());
  std::map<std::string, int> names;
  for (const Rung& r : all) {
    for (const std::string& m : missing_facts(r))
      throw std::logic_error("the rung registry's entry " + (r.name.empty() ? "(unnamed)" : r.name) + ": " + m);
    if (names[r.name]++) throw std::logic_error("the rung registry names " + r.name + " twice");
  }
  std::map<std::string_view, int> above;
  int bottoms = 0;
  for (const Rung& r : all) {
    if (!r.ladder.on) continue;
    if (r.ladder.above.empty()) ++bottoms;
    else if (!names.count(std::string(r.ladder.above)))
      throw std::logic_error(r.name + " stands on " + std::string(r.ladder.above) + ", which is not a rung");
    if (above[r.ladder.above]++) throw std::logic_error("two rungs stand on " + std::string(r.ladder.above));
  }
  if (bottoms != 1) throw std::logic_error("the ladder has " + std::to_string(bottoms) + " bottom rungs, not one");
  // One chain from the bottom: a rung standing on one off the ladder, or a loop, is left unreached.
  std::size_t reached = 0;
  for (std::string_view below = ""; reached <= all.size();) {
    const auto next = std::find_if(all.begin(), all.end(),
                                   [&](const Rung& r) { return r.ladder.on && r.ladder.above == below; });
    if (next == all.end()) break;
    below = next->name, ++reached;
  }
  const auto on = static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [](const Rung& r) { return r.ladder.on; }));
  if (reached != on)
    throw std::logic_error("the ladder reaches " + std::to_string(reached) + " of its " + std::to_string(on) +
                           " rungs from the bottom: one stands on a rung off it, or they form a loop");
  return all;
}

// cpu64/K (reference.hpp): cpu64 with K substeps per step, a converged reference; not a rung of
// the default set or the ladder, and one process only (it converts the state with all bodies).
Rung substepped() {
  Rung r = cpu_rungs().front();
  r.name = "cpu64/K";
  r.summary = "cpu64 with K substeps of dt/K per step: a converged reference";
  r.split = Split::None;
  return r;
}
constexpr int kMaxSubsteps = 4096;

// K of "cpu64/K" (2..kMaxSubsteps), or 0 for any other name; throws InputError for a bad K.
int substeps_of(const std::string& name) {
  if (!name.starts_with("cpu64/")) return 0;
  const std::string k = name.substr(6);
  const bool digits = !k.empty() && k.size() <= 5 && k.find_first_not_of("0123456789") == std::string::npos;
  const int v = digits ? std::stoi(k) : 0;
  if (v < 2 || v > kMaxSubsteps)
    throw InputError("'" + name + "': cpu64/K takes K substeps per step, an integer in 2.." +
                     std::to_string(kMaxSubsteps));
  return v;
}

}  // namespace

const std::vector<Rung>& rungs() {
  static const std::vector<Rung> all = joined_registries();
  return all;
}

std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const Rung& r : rungs()) names.push_back(r.name);
  return names;
}

std::vector<std::string> ladder_table_names() {
  std::vector<std::string> names = ladder_names();
  for (const Rung& r : rungs())
    if (r.method == Method::Tree) names.push_back(r.name);
  return names;
}

std::vector<std::string> ladder_names() {
  std::vector<std::string> names;
  std::string_view below = "";  // the bottom rung stands on nothing
  for (bool found = true; found;) {
    found = false;
    for (const Rung& r : rungs())
      if (r.ladder.on && r.ladder.above == below) {
        names.push_back(r.name);
        below = r.name;
        found = true;
        break;
      }
  }
  return names;
}

const Rung& rung(const std::string& name) {
  for (const Rung& r : rungs())
    if (r.name == name) return r;
  static const Rung kSubstepped = substepped();
  if (substeps_of(name) > 0) return kSubstepped;
  return rung(canonical_name(name));  // throws for an unknown name; an alias resolves
}

std::string canonical_name(const std::string& name) {
  if (name == "gl") return "gl:forcequad";
  if (name == "cuda") return "cuda:tuned";
  for (const Rung& r : rungs())
    if (r.name == name) return name;
  if (const int k = substeps_of(name)) return "cpu64/" + std::to_string(k);
  throw InputError("unknown pipeline '" + name + "' (known: " + joined_names(pipeline_names(), ", ") +
                   ", gl, cuda, and cpu64/K: cpu64 with K substeps per step)");
}

std::string joined_names(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

std::vector<std::string> parse_pipeline_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw InputError(option("pipelines") + " '" + list + "' has an empty name");
    const std::string c = canonical_name(item);
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw InputError(option("pipelines") + " names '" + c + "' twice");
    out.push_back(c);
  }
  if (out.empty()) throw InputError(option("pipelines") + " is empty");
  if (list.back() == ',') throw InputError(option("pipelines") + " '" + list + "' has an empty name");
  return out;
}

std::unique_ptr<Pipeline> make_pipeline(const std::string& name, const PipelineOptions& o) {
  const Rung& r = rung(name);
  if (const int k = substeps_of(canonical_name(name))) return std::make_unique<Cpu64>(k);
  return r.make(resolve_options(r, o));
}

std::string unavailable_reason(const std::string& name, const PipelineOptions& options) {
  try {
    make_pipeline(name, options);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}

std::unique_ptr<Pipeline> make_named(const std::string& name, const PipelineOptions& options) {
  try {
    return make_pipeline(name, options);
  } catch (const Unavailable& e) {
    throw Unavailable(name + " cannot run here: " + std::string(e.what()));
  }
}

bool is_fp64_pipeline(const std::string& name) { return rung(name).fp64_forces; }

std::string reference_names() {
  std::string names;
  for (const Rung& r : rungs())
    if (r.fp64_forces) names += (names.empty() ? "" : ", ") + r.name + (r.name == "cpu64" ? ", cpu64/K" : "");
  return names;
}

void check_reference(const std::string& name) {
  if (!is_fp64_pipeline(name))
    throw InputError(option("reference") + " " + name + ": a reference must be a float64 pipeline (" +
                     reference_names() + ")");
}

int state_bits(const std::string& name) { return rung(name).state_bits; }

Tolerance tolerance_for(const std::string& name, const PipelineOptions& o) {
  const Rung& r = rung(name);
  if (r.family == Family::Gl && o.gl_precision == "half") return {1e-3, 1e-2};
  if (r.tolerance_at) return r.tolerance_at(resolve_options(r, o));
  return r.tolerance;
}

PipelineOptions resolve_options(const Rung& r, const PipelineOptions& given) {
  PipelineOptions o = given;
  for (const RungOption& opt : r.options) {
    if (opt.is_real()) {
      const double v = o.*std::get<RealOption>(opt.field);
      if (!opt.reals.contains(v))
        throw InputError(option(opt.key) + " " + number_text(v) + ": " + r.name + " takes " + opt.describe());
      continue;
    }
    int& v = o.*std::get<IntOption>(opt.field);
    if (v == 0 && (opt.zero_is != 0 || !opt.zero_note.empty())) {
      v = opt.zero_is;
      continue;
    }
    if (!opt.accepts.contains(v))
      throw InputError(option(opt.key) + " " + std::to_string(v) + ": " + r.name + " takes " + opt.describe());
  }
  if (r.check) r.check(o, given);
  return o;
}

namespace {

void check_precision_and_placement(const PipelineOptions& o) {
  if (o.gl_precision != "float" && o.gl_precision != "half")
    throw InputError(option("gl_precision") + " '" + o.gl_precision + "': must be float or half");
  multipole_of(o.multipole);
  check_placement(o);
}

void check_each_option_alone(const PipelineOptions& o) {
  // Each rung option alone, against the rungs that take it (named or not): accepted if one of them
  // takes it (a rung with rules across its options, with all of its options as given), so that an
  // option no rung would take is never silently ignored.
  const auto refusal = [](const Rung& r, const PipelineOptions& trial) -> std::string {
    try {
      resolve_options(r, trial);
      return "";
    } catch (const InputError& e) {
      return e.what();
    }
  };
  std::map<std::string_view, std::string> refused;  // option key -> the first rung's message
  std::map<std::string_view, bool> taken;
  for (const Rung& r : rungs()) {
    PipelineOptions together;
    for (const RungOption& opt : r.options) opt.copy(o, together);
    const std::string across = r.check ? refusal(r, together) : "";
    for (const RungOption& opt : r.options) {
      PipelineOptions alone;
      opt.copy(o, alone);
      std::string why = refusal(r, alone);
      if (why.empty()) why = across;
      if (why.empty()) taken[opt.key] = true;
      else refused.emplace(opt.key, why);
    }
  }
  for (const auto& [key, why] : refused)
    if (!taken[key]) throw InputError(why);
}

// Every rung option's key with the rungs that take it, in the catalogue's order; the tree cells'
// multipole (no RungOption: every tree takes it) under the tree rungs.
std::vector<std::pair<std::string_view, std::vector<std::string>>> option_takers() {
  std::vector<std::pair<std::string_view, std::vector<std::string>>> out;
  const auto add = [&](std::string_view key, const std::string& name) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
    if (it == out.end()) out.emplace_back(key, std::vector<std::string>{name});
    else if (std::find(it->second.begin(), it->second.end(), name) == it->second.end()) it->second.push_back(name);
  };
  for (const Rung& r : rungs()) {
    for (const RungOption& opt : r.options) add(opt.key, r.name);
    if (r.method == Method::Tree) add("multipole", r.name);
    if (r.family == Family::Gl && r.state_bits == 32) add("gl_precision", r.name);  // float state in RGBA32F or 16F
  }
  return out;
}

// The value of option `key` in `o`, as text, where it differs from the default ("" where it does not).
std::string changed_value(std::string_view key, const PipelineOptions& o) {
  if (key == "multipole") return o.multipole != defaults::multipole ? o.multipole : "";
  if (key == "gl_precision") return o.gl_precision != defaults::gl_precision ? o.gl_precision : "";
  const PipelineOptions d;
  for (const Rung& r : rungs())
    for (const RungOption& opt : r.options) {
      if (opt.key != key) continue;
      if (opt.is_real()) {
        const auto f = std::get<RealOption>(opt.field);
        // NaN differs from the default too: the rungs that take it say why it is refused.
        return o.*f == d.*f ? "" : number_text(o.*f);
      }
      const auto f = std::get<IntOption>(opt.field);
      return o.*f == d.*f ? "" : std::to_string(o.*f);
    }
  return "";
}

}  // namespace

void check_options_apply(const std::vector<std::string>& names, const PipelineOptions& o) {
  if (names.empty()) return;
  for (const auto& [key, takers] : option_takers()) {
    const std::string value = changed_value(key, o);
    if (value.empty()) continue;
    const bool named = std::any_of(names.begin(), names.end(), [&, &takers = takers](const std::string& name) {
      return std::find(takers.begin(), takers.end(), rung(name).name) != takers.end();
    });
    if (!named)
      throw InputError(option(key) + " " + value + ": " + joined_names(takers, ", ") + " take" +
                       (takers.size() == 1 ? "s" : "") + " it, not " + joined_names(names, ", ") +
                       " (it would be ignored)");
  }
}

PipelineOptions options_taken_by(const std::vector<std::string>& names, const PipelineOptions& o) {
  PipelineOptions out = o;
  for (const auto& [key, takers] : option_takers()) {
    const bool named = std::any_of(names.begin(), names.end(), [&, &takers = takers](const std::string& name) {
      return std::find(takers.begin(), takers.end(), rung(name).name) != takers.end();
    });
    if (named) continue;
    if (key == "multipole") {
      out.multipole = defaults::multipole;
      continue;
    }
    if (key == "gl_precision") {
      out.gl_precision = defaults::gl_precision;
      continue;
    }
    for (const Rung& r : rungs())
      for (const RungOption& opt : r.options)
        if (opt.key == key) opt.copy(PipelineOptions{}, out);
  }
  return out;
}

void check_pipeline_options(const PipelineOptions& o) { check_precision_and_placement(o); }

void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& o) {
  check_precision_and_placement(o);
  for (const auto& name : names) resolve_options(rung(name), o);  // a named rung's own message first
  // An option for other rungs than those named would be ignored, whatever its value: refused.
  check_options_apply(names, o);
  check_each_option_alone(o);
}

void check_softening(const std::vector<std::string>& names, double softening) {
  if (!(softening < kFloatSmallestSoftening)) return;
  for (const std::string& name : names)
    if (!rung(name).fp64_forces)
      throw InputError(option("softening") + " " + number_text(softening) + ": " + name + " and every rung with float "
                       "forces need >= " + number_text(kFloatSmallestSoftening) + " (eps^6 a normal float: a body's own "
                       "term is 0/0 below it); the float64 rungs (" + reference_names() + ") take smaller");
}

std::string rung_option_help(std::string_view key) {
  std::vector<std::pair<std::string, std::string>> rules;  // what a rung accepts, the rungs that do
  for (const Rung& r : rungs())
    for (const RungOption& opt : r.options) {
      if (opt.key != key) continue;
      const std::string rule = opt.describe();
      auto same = std::find_if(rules.begin(), rules.end(), [&](const auto& p) { return p.first == rule; });
      if (same == rules.end()) rules.emplace_back(rule, r.name);
      else same->second += ", " + r.name;
    }
  std::string help(option_row(key).help);
  for (std::size_t k = 0; k < rules.size(); ++k)
    help += (k == 0 ? ": " : "; ") + rules[k].second + " " + rules[k].first;
  return help;
}

int picture_leaf_size(const std::string& name, const PipelineOptions& given) {
  const Rung& r = rung(name);
  if (r.method == Method::Tree) return resolve_options(r, given).leaf_size;
  for (const Rung& tree : rungs())
    if (tree.method == Method::Tree && tree.family == Family::Cpu) return resolve_options(tree, {}).leaf_size;
  throw std::logic_error("the catalogue has no CPU tree rung");
}

std::string tree_settings_text(const std::string& name, const PipelineOptions& o) {
  const Rung& r = rung(name);
  if (r.method != Method::Tree) return "";
  const PipelineOptions t = resolve_options(r, o);
  return "theta " + number_text(t.theta) + ", leaf " + std::to_string(t.leaf_size) + ", " + t.multipole + " cells";
}

nlohmann::json tree_settings_json(const std::string& name, const PipelineOptions& o) {
  const Rung& r = rung(name);
  if (r.method != Method::Tree) return nullptr;
  const PipelineOptions t = resolve_options(r, o);
  return {{"theta", t.theta}, {"leaf_size", t.leaf_size}, {"multipole", t.multipole}};
}

nlohmann::json options_json(const PipelineOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const PipelineField& f : pipeline_fields())
    if (f.in_files) std::visit([&](auto member) { j[std::string(f.key)] = o.*member; }, f.field);
  return j;
}

PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where) {
  PipelineOptions o;
  if (!j.is_object()) throw InputError(where + ": the pipeline options are not an object");
  for (const PipelineField& f : pipeline_fields()) {
    if (!f.in_files) continue;
    const std::string key(f.key), what = where + ": pipeline option " + key;
    if (!f.if_absent.empty() && !j.contains(key)) {  // a file without the field: its value there
      if (auto* text = std::get_if<std::string PipelineOptions::*>(&f.field)) o.**text = std::string(f.if_absent);
      continue;
    }
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(o.*member)>;
          const nlohmann::json* v = j.contains(key) ? &j[key] : nullptr;
          if constexpr (std::is_same_v<T, int>) {
            if (!v || !v->is_number_integer()) throw InputError(what + " is missing or not an integer");
            const long long x = v->get<long long>();
            if (x < -2147483647LL || x > 2147483647LL) throw InputError(what + " is out of range");
            o.*member = static_cast<int>(x);
          } else if constexpr (std::is_same_v<T, double>) {
            if (!v || !v->is_number()) throw InputError(what + " is missing or not a number");
            o.*member = v->get<double>();
          } else {
            if (!v || !v->is_string()) throw InputError(what + " is missing or not a string");
            o.*member = v->get<std::string>();
          }
        },
        f.field);
  }
  return o;
}

}  // namespace nbody
