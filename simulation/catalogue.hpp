// The rung catalogue: the families' registries (rung.hpp) joined, every rung made by name. Every
// name is recognised in every build; a rung that was not built, has no device or has no GL context
// throws nbody::Unavailable with the reason. Help, info, bounds, bench, ladder, view, interop, the
// option checks and the checkpoints read a rung's facts here: adding a rung is its files and one
// entry in its family's registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline.hpp"
#include "placement.hpp"
#include "rung.hpp"

namespace nbody {

// Every rung, family by family (cpu, gl, cuda), each family's in its registry's order. Throws
// std::logic_error on first use when an entry lacks a fact (missing_facts()) or the ladder's
// places do not form one chain.
const std::vector<Rung>& rungs();
// Every pipeline name, in that order.
std::vector<std::string> pipeline_names();
// The ladder's rungs, bottom to top.
std::vector<std::string> ladder_names();
// `nbody ladder`'s rows: the ladder, bottom to top, then the tree rungs beside it (GPU Gems 3 §31.6:
// off the ladder; the table gives each its speed-up over the fastest float32 all-pairs rung of its
// family, bench.hpp).
std::vector<std::string> ladder_table_names();
// The rung of a canonical name; throws InputError for an unknown one.
const Rung& rung(const std::string& name);
// "gl" -> "gl:forcequad", "cuda" -> "cuda:tuned"; throws InputError for an unknown name.
std::string canonical_name(const std::string& name);
// Parses "a,b,c" into canonical names (no duplicates); throws InputError.
std::vector<std::string> parse_pipeline_list(const std::string& list);
std::unique_ptr<Pipeline> make_pipeline(const std::string& name, const PipelineOptions& options);
// Why `name` cannot run here ("" when it can): made with `options` and let go, as `nbody info` and
// the page's list ask.
std::string unavailable_reason(const std::string& name, const PipelineOptions& options = {});
// The same, with Unavailable's message starting "NAME cannot run here: ".
std::unique_ptr<Pipeline> make_named(const std::string& name, const PipelineOptions& options);
// cpu64 and the *-fp64 rungs: the pipelines that may serve as a reference.
bool is_fp64_pipeline(const std::string& name);
// Their names, cpu64/K among them ("cpu64, cpu64/K, cuda:gems31-fp64, cuda:tuned-fp64").
std::string reference_names();
// Throws InputError naming --reference unless `name` (canonical) may serve as a reference.
void check_reference(const std::string& name);
// The precision of a pipeline's state, as checkpoints hold it.
int state_bits(const std::string& name);
// A rung's validation tolerance with the options given (gl:* in half precision: looser).
Tolerance tolerance_for(const std::string& name, const PipelineOptions& options);
// The options a rung runs with: 0 replaced by the rung's own default, each value checked against
// the rung's entry; throws InputError naming the option, the rung and what it takes.
PipelineOptions resolve_options(const Rung& r, const PipelineOptions& given);
// Validates --gl-precision, --device and --balance; throws InputError.
void check_pipeline_options(const PipelineOptions& options);
// The same, every option against the entry of each rung in `names`, then check_options_apply(), then
// each rung option alone against every rung that takes it (accepted when one of them does). Throws
// InputError.
void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& options);
// One rule for every rung option (theta, leaf_size, multipole, cuda_block, ...) and every value: an
// option away from its default where `names` is not empty and none of them takes it would be
// ignored, so it is refused with one line naming the option and the rungs that take it. Empty
// `names` (a default set, each rung skipped if it cannot take the options) passes.
void check_options_apply(const std::vector<std::string>& names, const PipelineOptions& options);
// `options` with each rung option that none of `names` takes put back to its default: the options
// a stored run (a snapshot's) gives the rungs named to repeat it.
PipelineOptions options_taken_by(const std::vector<std::string>& names, const PipelineOptions& options);
// A rung with float forces forms (r^2 + eps^2)^3 in float (GPU Gems 3's rsqrtf(d^6)); at r = 0, a
// body's own term, it must stay a normal float: eps^6 >= FLT_MIN, eps >= 4.8e-7. Below, the self
// term is 0/0. The float64 rungs take any eps with a normal eps^2 (check_config()).
inline constexpr double kFloatSmallestSoftening = 5e-7;
// Throws InputError naming --softening, the limit and the first rung of `names` with float forces
// when `softening` is below kFloatSmallestSoftening.
void check_softening(const std::vector<std::string>& names, double softening);

// --help's text for one rung option ("cuda_block"): the table's line, then each rung that takes it
// and what it accepts ("cuda:gems31, cuda:gems31-fp64: a multiple of 32 in 32..1024 (0: 256); ...").
std::string rung_option_help(std::string_view key);
// "cpu64 | cpu32 | gl:forcequad | ..." (the names `separator` apart), for --help.
std::string joined_names(const std::vector<std::string>& names, const std::string& separator);

// The leaf size of the octree a picture draws over `name`'s bodies (run --frames and view with
// --tree-cells): the rung's own, resolved from `given`, where it is a tree; else the CPU tree rung's
// default.
int picture_leaf_size(const std::string& name, const PipelineOptions& given);

// A tree rung's settings as it runs them (its options resolved): "theta 0.5, leaf 32, monopole cells",
// and as JSON {"theta", "leaf_size", "multipole"}; "" and null for an all-pairs rung.
std::string tree_settings_text(const std::string& name, const PipelineOptions& o);
nlohmann::json tree_settings_json(const std::string& name, const PipelineOptions& o);

// The pipeline options as JSON (without the device, which places a run but does not change it),
// and back; options_from_json throws InputError naming `where` and the field.
nlohmann::json options_json(const PipelineOptions& o);
PipelineOptions options_from_json(const nlohmann::json& j, const std::string& where);
}  // namespace nbody
