#pragma once
/// The fidelity report: how well the simulator predicts the real executor on the same trace and
/// catalog. Compares two summaries (salus-sim's and salus-run's, one schema) policy by policy.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/paper_experiments.h"

namespace salus::experiments {

/// One policy's comparison. Errors are relative to the measured (real) value.
struct FidelityRow {
  std::string policy;
  int jobs = 0;
  int done_both = 0;              ///< jobs done on both sides (the JCT errors are over these)
  double makespan_real_s = 0, makespan_sim_s = 0;
  double makespan_error = 0;      ///< |sim - real| / real
  double jct_error_median = 0;    ///< per-job |sim - real| / real: median (nearest rank)
  double jct_error_p95 = 0;       ///< 95th percentile (nearest rank)
  double jct_error_max = 0;
  double kendall_tau = 0;         ///< of the finish times of the jobs done on both sides (tau-a)
  long long switches_real = 0, switches_sim = 0;
  /// The real executor against itself (repeat_spread): the same two errors between its repeats,
  /// the noise floor below which the simulator's errors say nothing. Negative: fewer than 2 repeats.
  double spread_jct_median = -1, spread_makespan = -1;
};

/// Kendall's tau-a of two equally long sequences: (concordant - discordant) / (n (n - 1) / 2);
/// ties count as neither. 1 for fewer than two elements.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

/// Compares one policy's "results" entry of each summary (same trace: the jobs are matched by id).
/// Throws core::InputError when the two do not describe the same jobs.
FidelityRow compare_results(const nlohmann::json& sim_result, const nlohmann::json& real_result);

/// Every policy present in both summaries, in the real summary's order.
std::vector<FidelityRow> compare_summaries(const nlohmann::json& sim_summary, const nlohmann::json& real_summary);

/// The medians, metric by metric, of the rows of several repeats of one policy (counts from the
/// first repeat).
FidelityRow median_row(const std::vector<FidelityRow>& repeats);

/// The real executor against itself: every ordered pair (a, b) of a policy's results from
/// different repeats compared as compare_results(a, b) does (b taken as the measured side), and
/// the medians over the pairs of the median per-job JCT error and of the makespan error, into
/// row.spread_jct_median and row.spread_makespan. Leaves them at -1 with fewer than 2 results.
void repeat_spread(FidelityRow& row, const std::vector<const nlohmann::json*>& real_results);

nlohmann::json to_json(const FidelityRow& row);

/// The calibration modes of salus-experiment fidelity (--calibrate), in the help's order.
inline constexpr const char* kCalibrationModes[] = {"off", "before", "bracket", "median"};
/// Throws core::InputError naming the valid modes when `mode` is not one of them.
void check_calibration_mode(const std::string& mode);

/// Which calibrations predict real run `run` (0-based, in the order the runs ran; run k sits
/// between calibrations k and k + 1) under --calibrate `mode`, given `calibrations` of them:
/// before {k}; bracket {k, k + 1}; median the four nearest, {k - 1, ..., k + 2}, those that exist;
/// off none. Indices past the last calibration are left out.
std::vector<std::size_t> calibration_readings(const std::string& mode, std::size_t run, std::size_t calibrations);

/// How many calibrations a sitting of `runs` real runs takes under --calibrate `mode`: one before
/// the first run and one after each (`runs` + 1), but not after the last under before (`runs`),
/// none under off. The sitting's schedule: salus-experiment calibrates by it and --predict-from
/// checks an earlier sitting's files against it.
std::size_t calibrations_taken(const std::string& mode, std::size_t runs);

/// How the readings of several calibrations become one figure: their mean, or their median (the
/// mean of the middle two for an even count), which one reading caught in a slow stretch of the
/// host cannot move by more than the gap to its neighbour.
enum class CalibrationCombine { kMean, kMedian };

/// The catalog the simulator predicts one real run with (--calibrate before|bracket|median):
/// `base`, the profile (memory, first-iteration cost), with each workload's solo iteration times
/// (iter_ms, iter_exec_mean_ms, iter_exec_median_ms, iter_median_ms) and utilisation (gpu_util),
/// the switching cost (switch_ms) and the slowdowns of the base's pairs combined (`how`) from
/// `readings`: short salus-profile runs around the real run. A machine whose speed drifts by
/// several per cent over minutes (a shared 2-core host) otherwise hands the simulator the speed
/// it had when the profile ran, not the speed the run met. first_iter_ms moves with iter_ms (the
/// profile's extra cost of a first iteration is kept). Workloads or figures no reading has keep
/// the base's; each calibrated entry's `source` and the catalog's `notes` say what was replaced,
/// `where` saying which readings they were.
nlohmann::json calibrated_catalog(const nlohmann::json& base, const std::vector<const nlohmann::json*>& readings,
                                  CalibrationCombine how, const std::string& where);
/// `before` alone, or with `after` the mean of the two (--calibrate before|bracket).
nlohmann::json calibrated_catalog(const nlohmann::json& base, const nlohmann::json& before, const nlohmann::json* after);

/// `catalog` (a calibrated catalog) with each workload's iter_ms and first_iter_ms multiplied by
/// its burst allowance: the mean, over the `readings` that measured it, of iter_exec_mean_ms over
/// iter_ms, the plain mean of a calibration's solo iterations over their typical mean. iter_ms is
/// a typical mean so that one burst of a neighbour during a calibration of a second does not move
/// it; but a run of a minute meets such bursts at the rate the host has them, and a job's time is
/// the sum of its iterations. The ratio says how much the bursts each calibration met added; its
/// mean over the readings (not the median: the bursts are what is being counted) is the rate the
/// run is expected to meet. Each workload entry gets `burst_allowance` (the factor) and a note in
/// its `source`; a workload no reading measured is left as it is (--burst-allowance).
nlohmann::json with_burst_allowance(const nlohmann::json& catalog, const std::vector<const nlohmann::json*>& readings);

/// The base catalog's solo speed against the calibrations' (a JSON array of catalogs): for each
/// workload of `base` that some calibration measured, {"base_iter_ms", "calibrations_median_iter_ms",
/// "ratio"} (base over the median of every calibration's iter_ms). A base profile taken in a slow
/// stretch of the host reads far from 1: its `uncalibrated` row then measures that profile, not
/// the model.
nlohmann::json base_against_calibrations(const nlohmann::json& base, const nlohmann::json& calibrations);

/// The table printed by salus-experiment fidelity.
std::string fidelity_table(const std::vector<FidelityRow>& rows);

/// salus-experiment fidelity: the trace's workloads profiled on ctx.device (unless the context's
/// catalog was given), the trace (ctx.trace, default the shipped experiments/fidelity_cpu.csv) run
/// under the four policies on the real executor ctx.repeat times (one salus-run per policy and
/// repeat), and each run predicted in process (as salus-sim would) with the catalog calibrated for it
/// (ctx.calibrate: calibrated_catalog, from salus-profile runs between the real runs) and with
/// the base catalog alone; both compared per policy (medians over the repeats). Writes its files
/// to ctx.out_dir. With ctx.predict_from, the runs, calibrations, trace, pool and base catalog are
/// an earlier sitting's (its out_dir) and only the simulator runs.
nlohmann::json run_fidelity(const ExperimentContext& ctx);

}  // namespace salus::experiments
