"""Three built-in policies written again in Python, as salus.Policy subclasses: PACK, SRTF and FAIR
as policies/pack.cpp, srtf.cpp and fair.cpp decide (policies/README.md), without their speed
mechanisms (FAIR's tree and plans). They give the built-ins' results exactly (tests/python), and
are the examples docs/python.md starts from.

    import salus
    from salus.policies import Srtf, Fair
    r = salus.simulate(policy=["srtf", Srtf()])   # the built-in and this one, side by side
"""
from . import Policy


class Pack(Policy):
    """The earliest admitted job of a lane runs; lanes per Algorithm 1."""

    name = "pack_py"
    description = "PACK in Python: the earliest admitted job of the lane"
    default_lanes = "auto"
    lanes = ("auto", "single")
    newcomer = "waits"

    def choose(self, view, lane):
        j = lane.jobs[0]  # admission order
        return j, view.remaining_iterations(j)


class Srtf(Policy):
    """Shortest remaining (solo) time first, preemptive at iteration boundaries."""

    name = "srtf_py"
    description = "SRTF in Python: least remaining solo time first"
    default_lanes = "single"
    lanes = ("single", "auto", "exclusive")
    newcomer = "by_order"

    def admission_key(self, view, job):
        return view.remaining_solo_ns(job)

    def starts_at_once(self, view, lane, job):
        mine = view.remaining_solo_ns(job)
        for j in lane.jobs:
            left = view.remaining_solo_ns(j)
            if left < mine or (left == mine and view.earlier_submitted(j, job)):
                return False
        return True

    def choose(self, view, lane):
        best = min(lane.jobs, key=lambda j: (view.remaining_solo_ns(j), view.submit_rank(j)))
        # Its remaining time only shrinks while it runs: it stays the shortest until someone joins.
        return best, view.remaining_iterations(best)


class Fair(Policy):
    """Equal service in a lane: the job with the least service since the last join runs until
    it would overtake the runner-up (service = iterations x iter_ns)."""

    name = "fair_py"
    description = "FAIR in Python: least service since the lane's last join"
    default_lanes = "single"
    lanes = ("single", "auto")
    newcomer = "takes_turn"

    def begin(self, jobs):
        self.service = {}   # job -> iterations since its lane's last join
        self.joined = {}    # lane -> (the job in flight at the last join, the join's time)

    def on_join(self, view, lane, job):
        for j in lane.jobs:  # a join resets the lane's service
            self.service[j] = 0
        self.joined[lane.id] = (lane.running, view.now)

    def on_iterations_done(self, view, run):
        in_flight, join_ns = self.joined[run.lane]
        n = run.iterations
        if in_flight == run.job:  # only the iteration in flight at the join counts after it
            n = min(1, run.iterations) if run.end_ns > join_ns else 0
        self.joined[run.lane] = (-1, join_ns)
        self.service[run.job] += n

    def on_finish(self, view, job, lane_id):
        del self.service[job]

    def choose(self, view, lane):
        key = lambda j: (self.service[j] * view.iter_ns(j), view.submit_rank(j))
        ranked = sorted(lane.jobs, key=key)
        best = ranked[0]
        remaining = view.remaining_iterations(best)
        if len(ranked) == 1:
            return best, remaining
        second = ranked[1]
        d = view.iter_ns(best)
        gap = key(second)[0] - key(best)[0]
        k = gap // d + 1 if view.earlier_submitted(best, second) else -(-gap // d)
        return best, max(1, min(k, remaining))
