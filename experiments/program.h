#pragma once
/// salus-experiment's body past its options: which experiments `NAME|all` means, running them and
/// writing DIR/NAME.json, and drawing their figures with plots/make_figures.py.
#include <string>
#include <vector>

#include "experiments/paper_experiments.h"

namespace salus::experiments {

/// The experiments `name` stands for: itself (checked against the registry, an unknown one listing
/// the valid ones), or for "all" each experiment in `all` that runs on this executor (the real
/// one: those with a real variant; the simulator: those with shipped inputs).
std::vector<std::string> select_experiments(const std::string& name, bool real_executor);

/// With the real executor: unless a catalog was given (ctx.profiles_given), measures the workloads
/// of the real variants' inputs of `names` on ctx.device first (salus-profile, its log in
/// ctx.out_dir/real_profile.log) and points ctx.profiles at the catalog, ctx.out_dir/real_catalog.json:
/// the policies (SRTF's remaining time) and the memory admission then know what this device does.
void profile_real_inputs(const std::vector<std::string>& names, ExperimentContext& ctx);

/// Runs each of `names` with `ctx`, writes ctx.out_dir/NAME.json and says so on ctx.log.
void run_and_write(const std::vector<std::string>& names, ExperimentContext& ctx);

/// The Python that draws the figures: Debian's /usr/bin/python3 first (it is the one that sees
/// python3-matplotlib), else python3 on the PATH.
std::string python();
/// Draws the figures of `names` from the JSON in `dir` into `dir`; false (having said why on
/// stderr) when they could not be drawn.
bool draw_figures(const std::string& dir, const std::vector<std::string>& names);
/// The command that draws them later.
std::string draw_later_command(const std::string& dir);

}  // namespace salus::experiments
