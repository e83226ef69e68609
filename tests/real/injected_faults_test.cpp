// Injected faults through salus-run's runner (the cpu-faults device): under every policy and
// several seeds, each fault kind alone and mixed, every run ends, every job is done, failed or
// rejected with its reason, the counts add up, the exit status follows, and the summary written
// for it (parsed back) says the same. Faults that are not a lost device fail the same points of
// the same jobs under every policy (the injector's decisions depend on the job and its own
// iteration, not on the schedule).
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "gpu_backend/device.h"
#include "gpu_backend/fault_injection.h"
#include "gpu_backend/model.h"
#include "policies/registry.h"
#include "real/real_runner.h"
#include "real/run_report.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using core::Bytes;
using core::JobSpec;
using core::JobStatus;
using nlohmann::json;
using test::mib;
using test::ms;

JobSpec real_job(std::string id, const std::string& workload, core::TimeNs arrival, std::int64_t iterations,
                 Bytes persistent = -1) {
  auto device = gpu::make_cpu_device();
  auto ops = device->create_ops();
  const gpu::RealWorkload w = *gpu::parse_real_workload(workload);
  const auto net = gpu::build_model(w.model);
  JobSpec s = test::job(std::move(id), arrival, iterations, ms(3), persistent >= 0 ? persistent : net->persistent_bytes(),
                        net->ephemeral_bytes(*ops, !w.inference));
  s.workload = workload;
  return s;
}

/// Six small jobs, staggered over 6 ms (a time-scaled trace): LeNet and MLP training, an MLP
/// inferring, and one job larger than the pool, which every policy rejects.
const std::vector<JobSpec>& small_trace() {
  static const std::vector<JobSpec> jobs = test::trace({
      real_job("a", "lenet_32", 0, 6),
      real_job("b", "mlp_64", 0, 6),
      real_job("c", "lenet_32", ms(2), 4),
      real_job("d", "mlp_64_infer", ms(4), 8),
      real_job("e", "lenet_32", ms(6), 4),
      real_job("big", "mlp_64", ms(1), 4, mib(200)),
  });
  return jobs;
}
constexpr std::size_t kBig = 5;

gpu::FaultRates rates(double alloc, double iter, double lost, std::uint64_t seed) {
  gpu::FaultRates r;
  r.alloc = alloc;
  r.iter = iter;
  r.lost = lost;
  r.seed = seed;
  return r;
}

/// What one run did, checked as it came back.
struct Ran {
  run::PolicyRun run;
  std::int64_t alloc = 0, iter = 0, lost = 0;  // injected
};

/// Runs the small trace under `policy` on a fresh cpu-faults device and checks what every run
/// must satisfy, whatever was injected.
Ran run_checked(const std::string& policy, const gpu::FaultRates& faults) {
  std::vector<JobSpec> jobs = small_trace();
  real::RealRunConfig cfg;
  cfg.device = "cpu-faults";
  cfg.faults = faults;
  cfg.capacity = mib(48);
  cfg.warmup = false;
  cfg.progress = false;
  real::RealRunner runner(cfg);  // a fresh device: a lost one stays lost
  (void)runner.prepare(jobs);
  const auto t0 = std::chrono::steady_clock::now();
  Ran ran{runner.run(jobs, policy, false)};
  // No hang: the trace takes well under a second of work; a run stuck waiting would not end.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
  const run::PolicyRun& r = ran.run;
  const json& injected = r.measured.at("injected_faults");
  ran.alloc = injected.at("alloc");
  ran.iter = injected.at("iter");
  ran.lost = injected.at("lost");

  const std::size_t n = jobs.size();
  REQUIRE(r.outcome.jobs.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    const core::JobState& st = r.outcome.jobs[i];
    INFO("job ", jobs[i].id, ": ", core::to_string(st.status), ": ", st.reason());
    if (i == kBig) {
      CHECK(st.status == JobStatus::kRejected);
    } else {
      CHECK((st.status == JobStatus::kDone || st.status == JobStatus::kFailed));
    }
    if (st.status == JobStatus::kDone) {
      CHECK(st.iterations_done == jobs[i].iterations);
    } else {
      CHECK_FALSE(st.reason().empty());
    }
    if (st.status == JobStatus::kFailed) {
      CHECK(st.iterations_done < jobs[i].iterations);
      // Only what was injected fails a job here.
      CHECK((st.reason().find("injected fault: ") != std::string::npos ||
             st.reason().find("the device was lost") != std::string::npos));
    }
  }
  CHECK(r.metrics.done + r.metrics.failed + r.metrics.rejected == static_cast<std::int64_t>(n));
  CHECK(r.metrics.interrupted == 0);
  CHECK(r.metrics.rejected == 1);
  // A lost device ends the run and is its fatal error; nothing else is.
  CHECK(ran.lost == (r.outcome.fatal_error.empty() ? 0 : 1));
  // The loss itself ("...: the device was lost at iteration i of job j"), or, where lanes run at
  // once (PACK), another lane's operation that met the lost device first ("...: allocation 1 of
  // iteration k of job b failed: the device was lost (at iteration i of job j)"): CI's clean-clone
  // run read the second under pack, seed 3.
  if (ran.lost == 1) {
    CHECK(r.outcome.fatal_error.find("injected fault: ") == 0);
    CHECK(r.outcome.fatal_error.find("the device was lost") != std::string::npos);
  }
  // A failure of any kind shows in the counts: every injected fault failed a job (a refused
  // allocation or failed iteration ends its job, so there is at most one per job).
  CHECK(r.metrics.failed >= ran.alloc + ran.iter + ran.lost);

  const std::vector<run::PolicyRun> runs = {r};
  CHECK(real::run_exit_status(runs, false) == (r.metrics.failed > 0 ? 1 : 0));
  if (ran.lost == 1) CHECK(real::run_exit_status(runs, false) == 1);

  // The summary salus-run writes, parsed back: complete and saying the same.
  const json summary = json::parse(
      real::run_summary({"small", "native", "catalog", runner.device().name(), "fp32", runner.capacity(), 1, faults.seed, {}},
                        jobs, runs)
          .dump());
  CHECK(summary.at("device") == "cpu-faults (" + gpu::to_string(faults) + ")");
  REQUIRE(summary.at("results").size() == 1);
  const json& res = summary.at("results")[0];
  CHECK(res.at("policy") == policy);
  CHECK(res.at("jobs_done").get<std::int64_t>() + res.at("jobs_failed").get<std::int64_t>() +
            res.at("jobs_rejected").get<std::int64_t>() ==
        static_cast<std::int64_t>(n));
  CHECK(res.at("jobs_failed") == r.metrics.failed);
  CHECK(res.at("jobs_interrupted") == 0);
  CHECK(res.at("injected_faults") == injected);
  CHECK(res.at("fatal_error").is_null() == r.outcome.fatal_error.empty());
  REQUIRE(res.at("jobs").size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    const json& j = res.at("jobs")[i];
    CAPTURE(j.dump());
    CHECK(j.at("id") == jobs[i].id);
    CHECK(j.at("status") == core::to_string(r.outcome.jobs[i].status));
    CHECK(j.at("reason") == r.outcome.jobs[i].reason());
    CHECK(j.at("iterations") == r.outcome.jobs[i].iterations_done);
  }
  return ran;
}

/// Per job: status, reason, iterations done.
using Outcome = std::vector<std::tuple<JobStatus, std::string, std::int64_t>>;
Outcome outcome_of(const run::PolicyRun& r) {
  Outcome o;
  for (const core::JobState& st : r.outcome.jobs) o.emplace_back(st.status, st.reason(), st.iterations_done);
  return o;
}

/// Every policy under seeds 1-3 at `base`'s rates; returns the totals injected.
Ran matrix(const gpu::FaultRates& base, bool same_under_every_policy) {
  Ran total;
  std::int64_t done = 0, failed = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    gpu::FaultRates f = base;
    f.seed = seed;
    Outcome first;
    for (const std::string& policy : policies::policy_names()) {
      CAPTURE(policy);
      CAPTURE(seed);
      const Ran ran = run_checked(policy, f);
      total.alloc += ran.alloc;
      total.iter += ran.iter;
      total.lost += ran.lost;
      done += ran.run.metrics.done;
      failed += ran.run.metrics.failed;
      if (same_under_every_policy) {
        if (first.empty()) {
          first = outcome_of(ran.run);
        } else {
          CHECK(outcome_of(ran.run) == first);
        }
      }
    }
  }
  // Not vacuous: faults were injected and failed jobs, and jobs also finished.
  CHECK(failed > 0);
  CHECK(done > 0);
  return total;
}

}  // namespace

TEST_CASE("injected allocation failures under every policy and three seeds: the job fails, the same ones under each") {
  const Ran t = matrix(rates(0.005, 0, 0, 1), true);
  CHECK(t.alloc > 0);
  CHECK(t.iter == 0);
  CHECK(t.lost == 0);
}

TEST_CASE("injected iteration failures under every policy and three seeds: the job fails, the same ones under each") {
  const Ran t = matrix(rates(0, 0.1, 0, 1), true);
  CHECK(t.alloc == 0);
  CHECK(t.iter > 0);
  CHECK(t.lost == 0);
}

TEST_CASE("an injected lost device under every policy and three seeds: every unfinished job fails, the run ends") {
  const Ran t = matrix(rates(0, 0, 0.04, 1), false);
  CHECK(t.alloc == 0);
  CHECK(t.iter == 0);
  CHECK(t.lost > 0);
}

TEST_CASE("all three fault kinds mixed under every policy and three seeds") {
  const Ran t = matrix(rates(0.003, 0.05, 0.015, 1), false);
  CHECK(t.alloc + t.iter + t.lost > 0);
}

TEST_CASE("faults at rate 1 under every policy: the exact reasons") {
  const std::vector<std::string> ids = {"a", "b", "c", "d", "e"};
  for (const std::string& policy : policies::policy_names()) {
    CAPTURE(policy);
    {
      // Every admission's block is refused: each job fails at its first dispatch, nothing ran.
      const Ran ran = run_checked(policy, rates(1, 0, 0, 5));
      CHECK(ran.alloc == 5);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const core::JobState& st = ran.run.outcome.jobs[i];
        CHECK(st.status == JobStatus::kFailed);
        CHECK(st.reason().rfind("initialisation failed: injected fault: the pool refused the persistent block of job " +
                                  ids[i] + " (",
                              0) == 0);
        CHECK(st.iterations_done == 0);
      }
    }
    {
      const Ran ran = run_checked(policy, rates(0, 1, 0, 5));
      CHECK(ran.iter == 5);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const core::JobState& st = ran.run.outcome.jobs[i];
        CHECK(st.status == JobStatus::kFailed);
        CHECK(st.reason() == "injected fault: iteration 1 of job " + ids[i] + " reported an error");
        CHECK(st.iterations_done == 0);
      }
    }
    {
      // The first iteration to end loses the device: every job fails, the rejected one stays so.
      const Ran ran = run_checked(policy, rates(0, 0, 1, 5));
      CHECK(ran.lost == 1);
      CHECK(ran.run.metrics.failed == 5);
      CHECK(ran.run.metrics.done == 0);
      const std::string& fatal = ran.run.outcome.fatal_error;
      CHECK(fatal.rfind("injected fault: the device was lost at iteration 1 of job ", 0) == 0);
      int fatal_reported = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) fatal_reported += ran.run.outcome.jobs[i].reason() == fatal;
      CHECK(fatal_reported >= 1);
    }
  }
}
