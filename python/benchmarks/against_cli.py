"""nbody.compare and nbody.bench beside the CLI's same run: the Python layer's cost where the work
is large (the GPU machine's check).

Usage: NBODY_CLI=path/to/nbody python python/benchmarks/against_cli.py [N=16384] [STEPS=100]
- compare: cuda:tuned and cuda:mixed against the cpu64 reference (the float64 diagnostics on the
  fp64 engine), N bodies, STEPS steps, every step compared: the wall time of nbody.compare() and of
  `nbody compare` (the process's whole wall time, start-up included), three runs each,
  alternating; the medians.
- bench: cuda:tuned at N = 262144 from both, one run each: the rates and their ratio.
Rungs that cannot run here are left out (on a machine without a GPU: cpu32 and gl:forcequad).
"""
import json
import os
import statistics
import subprocess
import sys
import time

import nbody

cli = os.environ["NBODY_CLI"]
n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
here = nbody.info()["pipelines"]
rungs = [p for p in ("cuda:tuned", "cuda:mixed") if here[p]["available"]] or ["cpu32", "gl:forcequad"]
py, sh = [], []
for _ in range(3):
    t0 = time.perf_counter()
    nbody.compare(rungs, n=n, steps=steps)
    py.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    r = subprocess.run([cli, "compare", "--pipelines", ",".join(rungs), "-n", str(n), "--steps", str(steps)],
                       capture_output=True, text=True)
    sh.append(time.perf_counter() - t0)
    assert r.returncode == 0, r.stderr
print(f"compare {','.join(rungs)} N = {n}, {steps} steps: nbody.compare {statistics.median(py):.3f} s, "
      f"nbody compare {statistics.median(sh):.3f} s (medians of 3: {[round(t, 3) for t in py]} vs "
      f"{[round(t, 3) for t in sh]}); ratio {statistics.median(py) / statistics.median(sh):.4f}")
rung = "cuda:tuned" if here["cuda:tuned"]["available"] else "cpu32"
size = 262144 if rung == "cuda:tuned" else 4096
row = nbody.bench([rung], n=[size], steps=10, reps=5)[0]
r = subprocess.run([cli, "bench", "--pipelines", rung, "-n", str(size), "--steps", "10", "--reps", "5", "--json", "-"],
                   capture_output=True, text=True)
cli_row = json.loads(r.stdout)["results"][0]
print(f"bench {rung} N = {size}: nbody.bench {row['interactions_per_s']:.4e}/s, nbody bench "
      f"{cli_row['interactions_per_s']:.4e}/s, ratio {row['interactions_per_s'] / cli_row['interactions_per_s']:.4f}")
