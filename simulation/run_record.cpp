#include "run_record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "catalogue.hpp"
#include "checkpoint.hpp"
#include "error.hpp"
#include "options.hpp"

namespace nbody {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "nbody run checkpoint";
constexpr std::uint64_t kSplitEnd = std::uint64_t{1} << 63;  // past every key (key_ranges.cpp's kEnd)

// META read field by field, each checked for its type; a failure names the file and the field.
class Meta {
 public:
  Meta(const std::string& text, std::string where) : where_(std::move(where)) {
    try {
      m_ = json::parse(text);
    } catch (const json::exception& e) {
      throw InputError(where_ + ": block META is not valid JSON (" + e.what() + ")");
    }
    if (!m_.is_object()) throw InputError(where_ + ": block META is not a run checkpoint's");
  }
  template <typename Check>
  const json& field(std::string_view key, Check check) const {
    const auto it = m_.find(key);
    if (it == m_.end() || !check(*it))
      throw InputError(where_ + ": block META lacks a valid '" + std::string(key) + "'");
    return *it;
  }
  long long integer(std::string_view key) const { return field(key, [](const json& j) { return j.is_number_integer(); }); }
  double number(std::string_view key) const { return field(key, [](const json& j) { return j.is_number(); }); }
  std::string text(std::string_view key) const { return field(key, [](const json& j) { return j.is_string(); }); }
  bool flag(std::string_view key) const { return field(key, [](const json& j) { return j.is_boolean(); }); }
  bool has(std::string_view key) const { return m_.contains(key); }
  const std::string& where() const { return where_; }
  [[noreturn]] void fail(const std::string& why) const { throw InputError(where_ + ": " + why); }

 private:
  json m_;
  std::string where_;
};

struct Row {
  RecordField field;
  void (*write)(const RunRecord&, json&);
  void (*read)(const Meta&, RunRecord&);
};

json energy_json(const std::optional<Energy>& e) {
  return e ? json{{"kinetic", e->kinetic}, {"potential", e->potential}} : json();
}

// Written by a run distributed by key ranges (where each rank's range starts, and the end); absent
// elsewhere.
void write_split(const RunRecord& r, json& j) {
  if (r.split.empty()) return;
  j["split"] = r.split;
  if (!r.split_shares.empty()) j["split_shares"] = r.split_shares;
}
void read_split(const Meta& m, RunRecord& r) {
  if (!m.has("split")) return;
  const json& s = m.field("split", [](const json& v) {
    return v.is_array() && v.size() >= 3 &&
           std::all_of(v.begin(), v.end(), [](const json& k) { return k.is_number_unsigned(); });
  });
  r.split = s.get<std::vector<std::uint64_t>>();
  if (!std::is_sorted(r.split.begin(), r.split.end())) m.fail("block META's split is not in key order");
  if (r.split.front() != 0 || r.split.back() != kSplitEnd)
    m.fail("block META's split does not run from key 0 to 2^63 (the end of the key space)");
  if (!m.has("split_shares")) return;
  r.split_shares = m.field("split_shares", [](const json& v) {
                      return v.is_array() &&
                             std::all_of(v.begin(), v.end(), [](const json& w) { return w.is_number() && w.get<double>() >= 0; });
                    }).get<std::vector<double>>();
  const std::size_t ranks = r.split.size() - 1;
  if (r.split_shares.size() != ranks)
    m.fail("block META's split_shares holds " + std::to_string(r.split_shares.size()) + " shares for the " +
           std::to_string(ranks) + " ranks of its split");
  double sum = 0;
  for (const double w : r.split_shares) sum += w;
  if (std::abs(sum - 1) > 1e-9) m.fail("block META's split_shares do not sum to 1");
}

// Read in this order: a later row may check against an earlier one.
const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {{"format", "", false}, [](const RunRecord&, json& j) { j["format"] = kFormat; },
       [](const Meta& m, RunRecord&) {
         if (m.text("format") != kFormat) m.fail("block META is not a run checkpoint's");
       }},
      {{"pipeline", "pipeline", true}, [](const RunRecord& r, json& j) { j["pipeline"] = r.rung; },
       [](const Meta& m, RunRecord& r) {
         try {
           r.rung = canonical_name(m.text("pipeline"));
         } catch (const InputError& e) {
           m.fail(e.what());
         }
       }},
      {{"options", "*", true}, [](const RunRecord& r, json& j) { j["options"] = options_json(r.cfg.pipeline); },
       [](const Meta& m, RunRecord& r) {
         r.cfg.pipeline = options_from_json(m.field("options", [](const json& o) { return o.is_object(); }), m.where());
       }},
      {{"n", "n", true}, [](const RunRecord& r, json& j) { j["n"] = r.cfg.n; },
       [](const Meta& m, RunRecord& r) { r.cfg.n = m.integer("n"), r.cfg.n_given = true; }},
      {{"step", "", false}, [](const RunRecord& r, json& j) { j["step"] = r.step; },
       [](const Meta& m, RunRecord& r) { r.step = m.integer("step"); }},
      {{"last_step", "", false}, [](const RunRecord& r, json& j) { j["last_step"] = r.last_step; },
       [](const Meta& m, RunRecord& r) {
         r.last_step = m.integer("last_step");
         if (r.step < 0 || r.last_step < r.step)
           m.fail("block META's step " + std::to_string(r.step) + " and last_step " + std::to_string(r.last_step) +
                  " disagree");
       }},
      {{"dt", "dt", true}, [](const RunRecord& r, json& j) { j["dt"] = r.cfg.dt; },
       [](const Meta& m, RunRecord& r) { r.cfg.dt = m.number("dt"); }},
      {{"softening", "softening", true}, [](const RunRecord& r, json& j) { j["softening"] = r.cfg.softening; },
       [](const Meta& m, RunRecord& r) { r.cfg.softening = m.number("softening"); }},
      {{"ic", "ic", true}, [](const RunRecord& r, json& j) { j["ic"] = r.cfg.ic; },
       [](const Meta& m, RunRecord& r) { r.cfg.ic = m.text("ic"); }},
      {{"seed", "seed", true}, [](const RunRecord& r, json& j) { j["seed"] = r.cfg.seed; },
       [](const Meta& m, RunRecord& r) {
         r.cfg.seed = m.field("seed", [](const json& s) { return s.is_number_unsigned(); }).get<std::uint64_t>();
       }},
      {{"subset", "subset", true}, [](const RunRecord& r, json& j) { j["subset"] = r.cfg.subset; },
       [](const Meta& m, RunRecord& r) { r.cfg.subset = m.text("subset"); }},
      {{"energy_every", "energy_every", true}, [](const RunRecord& r, json& j) { j["energy_every"] = r.energy_every; },
       [](const Meta& m, RunRecord& r) { r.energy_every = m.integer("energy_every"); }},
      {{"no_energy", "no_energy", true}, [](const RunRecord& r, json& j) { j["no_energy"] = r.no_energy; },
       [](const Meta& m, RunRecord& r) {
         r.no_energy = m.flag("no_energy");
         if (r.energy_every < 0 || (r.no_energy && r.energy_every > 0))
           m.fail("block META's energy_every " + std::to_string(r.energy_every) + " and no_energy " +
                  (r.no_energy ? "true" : "false") + " do not go together");
       }},
      // Resolved when written (all-pairs | tree); a checkpoint without it was all pairs.
      {{"diagnostics", "diagnostics", true}, [](const RunRecord& r, json& j) { j["diagnostics"] = r.cfg.diagnostics; },
       [](const Meta& m, RunRecord& r) {
         r.cfg.diagnostics = m.has("diagnostics") ? m.text("diagnostics") : "all-pairs";
         if (r.cfg.diagnostics != "all-pairs" && r.cfg.diagnostics != "tree")
           m.fail("block META's diagnostics '" + r.cfg.diagnostics + "' is neither all-pairs nor tree");
       }},
      {{"energy", "", false}, [](const RunRecord& r, json& j) { j["energy"] = energy_json(r.e0); },
       [](const Meta& m, RunRecord& r) {
         const json& e = m.field("energy", [](const json& v) { return v.is_null() || v.is_object(); });
         if (r.no_energy) return;
         if (!e.is_object() || !e.contains("kinetic") || !e.contains("potential") || !e["kinetic"].is_number() ||
             !e["potential"].is_number())
           m.fail("block META lacks the energy baseline E_0");
         r.e0 = Energy{e["kinetic"].get<double>(), e["potential"].get<double>()};
       }},
      {{"energy_samples", "", false}, [](const RunRecord& r, json& j) { j["energy_samples"] = r.samples; },
       [](const Meta& m, RunRecord& r) { r.samples = m.field("energy_samples", [](const json& s) { return s.is_array(); }); }},
      {{"split", "", false}, write_split, read_split},
  };
  return table;
}

}  // namespace

const std::vector<RecordField>& record_fields() {
  static const std::vector<RecordField> fields = [] {
    std::vector<RecordField> out;
    for (const Row& row : rows()) out.push_back(row.field);
    return out;
  }();
  return fields;
}

std::vector<std::string> options_kept_by_checkpoints() {
  std::vector<std::string> out;
  for (const RecordField& f : record_fields()) {
    if (!f.defines || f.option.empty() || f.option == "pipeline") continue;  // the rung: a resume names it or not
    if (f.option != "*") {
      out.emplace_back(f.option);
      continue;
    }
    const json options = options_json(PipelineOptions{});
    for (const auto& item : options.items()) out.push_back(item.key());
  }
  return out;
}

std::string record_meta(const RunRecord& record) {
  json j = json::object();
  for (const Row& row : rows()) row.write(record, j);
  return j.dump();
}

void write_run_checkpoint(const std::string& path, const RunRecord& record, const Bodies& state) {
  Checkpoint c;
  c.meta = record_meta(record);
  c.bits = state_bits(record.rung);
  c.state = state;
  write_checkpoint(path, c);
}

ReadRun read_run_checkpoint(const std::string& path) {
  Checkpoint c = read_checkpoint(path);
  const Meta m(c.meta, "checkpoint '" + path + "'");
  ReadRun out;
  out.path = path;
  for (const Row& row : rows()) row.read(m, out.record);
  const int bits = state_bits(out.record.rung);
  if (c.bits != bits)
    throw InputError(m.where() + " holds " + std::to_string(c.bits) + "-bit state, but " + out.record.rung + "'s is " +
           std::to_string(bits) + "-bit");
  if (out.record.cfg.n != static_cast<long long>(c.state.size()))
    m.fail("block META says n = " + std::to_string(out.record.cfg.n) + " but SHAPE holds " +
           std::to_string(c.state.size()) + " bodies");
  out.state = std::move(c.state);
  return out;
}

}  // namespace nbody
