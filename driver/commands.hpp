// The subcommands of `nbody`. Each registers its options on a CLI11 subcommand and returns the
// function that runs it; the function returns the exit code (0 ok, 1 a check failed, 2 bad input,
// 3 a pipeline failed).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace nbody {

using Command = std::function<int()>;

Command add_info(CLI::App& app);
Command add_run(CLI::App& app);
Command add_compare(CLI::App& app);
Command add_bench(CLI::App& app);
Command add_view(CLI::App& app);
Command add_ladder(CLI::App& app);

}  // namespace nbody
