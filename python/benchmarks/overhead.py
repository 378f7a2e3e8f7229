"""What the Python layer costs: per step(k) call beyond the rung's own time, and per read-back.

Usage: python python/benchmarks/overhead.py [N_SMALL=64] [N_LARGE=1048576]
- step(): a cpu32 Simulation of N_SMALL bodies stepped by 20000 calls of step(1) from Python,
  against one call of step(20000) on the same simulation (the rung's own time per step, the
  Python call paid once): the difference per call is what one call of step() adds. Medians of 5.
- positions at N_LARGE (cuda:tuned where it runs, else cpu32): the first access is the read-back
  (the rung's state into doubles); the array is a view of it (its data pointer lies in the
  read-back's buffer; a second access costs no copy), and np.array(positions), one more copy, is
  timed beside it for scale.
"""
import sys
import time

import numpy as np

import nbody

n_small = int(sys.argv[1]) if len(sys.argv) > 1 else 64
n_large = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20

calls = 20000
with nbody.Simulation("cpu32", nbody.initial_conditions(n=n_small)) as sim:
    sim.step(100)  # warm-up
    per_call, per_step = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            sim.step(1)
        per_call.append((time.perf_counter() - t0) / calls)
        t0 = time.perf_counter()
        sim.step(calls)
        per_step.append((time.perf_counter() - t0) / calls)
call_us, step_us = 1e6 * float(np.median(per_call)), 1e6 * float(np.median(per_step))
print(f"step(1), cpu32, N = {n_small}: {call_us:.2f} us per call of step(1) from Python; {step_us:.2f} us per step "
      f"within one step({calls}); overhead {call_us - step_us:.2f} us per call")

large = "cuda:tuned" if nbody.info()["pipelines"]["cuda:tuned"]["available"] else "cpu32"
with nbody.Simulation(large, nbody.initial_conditions(n=n_large)) as sim:
    t0 = time.perf_counter()
    x = sim.positions
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = sim.positions
    second = time.perf_counter() - t0
    t0 = time.perf_counter()
    copy = np.array(x)
    copied = time.perf_counter() - t0
    shared = again.ctypes.data == x.ctypes.data and not x.flags.owndata
print(f"positions, {large}, N = {n_large}: first access (the read-back) {first * 1e3:.2f} ms, again "
      f"{second * 1e6:.1f} us (the same buffer: {shared}); one more copy (np.array) would take {copied * 1e3:.2f} ms "
      f"for {copy.nbytes / 2**20:.0f} MiB")
