"""What every plot test script shares: the exit status ctest reads as skipped, and a check that
records a failure and goes on (the script exits 1 at its end when `failures` is not empty)."""

SKIP = 77
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")
    return condition
