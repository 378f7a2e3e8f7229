"""scripts/skip-summary.py on a made-up ctest log: skips counted by reason, the runtime's detail in
parentheses and the rung's name dropped, tests that ran not counted."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "skip-summary.py"
LOG = """[ RUN      ] A.One
tests/a.cpp:1: Skipped
  cuda:tuned         unavailable: no NVIDIA driver or GPU found (cudaGetDeviceCount: cudaErrorInsufficientDriver)
[  SKIPPED ] A.One (1 ms)
[ RUN      ] A.Two
tests/a.cpp:2: Skipped
no NVIDIA driver or GPU found (cudaGetDeviceCount: cudaErrorNoDevice)
[  SKIPPED ] A.Two (1 ms)
[ RUN      ] B.Three
tests/b.cpp:3: Skipped
no GL context: eglInitialize failed
[  SKIPPED ] B.Three (2 ms)
[ RUN      ] C.Ran
[       OK ] C.Ran (1 ms)
"""
with tempfile.TemporaryDirectory() as d:
    (pathlib.Path(d) / "Testing" / "Temporary").mkdir(parents=True)
    (pathlib.Path(d) / "Testing" / "Temporary" / "LastTest.log").write_text(LOG)
    out = subprocess.run([sys.executable, str(SCRIPT), d], capture_output=True, text=True, check=True).stdout
lines = out.splitlines()
assert lines[0] == "skipped 3:", out
assert lines[1].split() == ["2", "no", "NVIDIA", "driver", "or", "GPU", "found"], out
assert lines[2].split()[0] == "1" and "no GL context: eglInitialize failed" in lines[2], out
print("ok")
