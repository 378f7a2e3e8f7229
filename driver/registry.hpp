// Pipeline names -> pipelines. Every name is recognised in every build; a pipeline that was not
// built, has no device or has no GL context throws nbody::Unavailable with the reason.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace nbody {

// Options the command line passes down to the pipelines that use them.
struct PipelineOptions {
  int gl_chunk = 0;                  // 0 = as large as the device allows
  std::string gl_precision = "float";  // float | half
  int cuda_block = 0;                // threads per block; 0 = the rung's default
  int cuda_unroll = 4;               // gems31: inner-loop unroll factor
  int cuda_q = 1;                    // gems31: threads per body (§31.4.1)
  int cuda_bodies = 0;               // tuned, mixed, symmetric: bodies per thread; 0 = the rung's default
  int cuda_split = 0;                // tuned, mixed: parts of the j range; 0 = chosen for the device
  int device = 0;                    // CUDA device index
  bool device_given = false;         // --device was on the command line
};

// Every pipeline name, in ladder order.
const std::vector<std::string>& pipeline_names();
// "gl" -> "gl:forcequad", "cuda" -> "cuda:tuned"; throws InputError for an unknown name.
std::string canonical_name(const std::string& name);
// Parses "a,b,c" into canonical names (no duplicates); throws InputError.
std::vector<std::string> parse_pipeline_list(const std::string& list);
std::unique_ptr<Pipeline> make_pipeline(const std::string& name, const PipelineOptions& options);
// cpu64 and the *-fp64 rungs: the pipelines that may serve as a reference.
bool is_fp64_pipeline(const std::string& name);
// The precision of a pipeline's state, as checkpoints hold it: 64 for cpu64, the -fp64 rungs,
// cuda:mixed (double state) and gl:compute-ds (its integrator keeps each hi + lo pair exactly a
// double), else 32.
int state_bits(const std::string& name);
// Validates the GL options and --device; throws InputError.
void check_pipeline_options(const PipelineOptions& options);
// The same, and the CUDA options against the rules of each cuda:* rung in `names` and each option
// against the rungs that use it (cuda_pipeline/options.cpp: the one place of their defaults and
// ranges). Throws InputError.
void check_pipeline_options(const std::vector<std::string>& names, const PipelineOptions& options);

}  // namespace nbody
