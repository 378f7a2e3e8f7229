"""The browser edition against the native build on the same machine, as ratios, each side measured
by the library's own bench (validate against float64, warm up, time the median of the repetitions):
`nbody bench` natively, the page's Session.bench() in headless chromium (SwiftShader for WebGL2).

  cpu32 in WebAssembly (one thread, wasm SIMD) against native cpu32 on one thread and on every core;
  gl:forcequad on WebGL2 (SwiftShader) against gl:forcequad on this machine's GL (Mesa llvmpipe);
  page load to the end of the first step (three fresh loads).

Usage: /usr/bin/python3 web/benchmarks/against_native.py [SITE] [NATIVE_NBODY] [N]
       (defaults build/web/site, build/ci/driver/nbody, 4096)"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "web"))
from browser import Browser, Server  # noqa: E402

SITE = Path(sys.argv[1] if len(sys.argv) > 1 else "build/web/site")
NATIVE = sys.argv[2] if len(sys.argv) > 2 else "build/ci/driver/nbody"
N = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
PLAN = {"cpu32": (10, 3), "gl:forcequad": (5, 3)}  # steps per repetition, repetitions


def native_rate(pipeline, threads=None):
    steps, reps = PLAN[pipeline]
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {}))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([NATIVE, "bench", "--pipelines", pipeline, "-n", str(N), "--steps", str(steps),
                        "--reps", str(reps), "--json", f"{tmp}/b.json"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        row = json.load(open(f"{tmp}/b.json"))["results"][0]
    assert row["status"] == "ok", row
    return row


def page_rate(tab, pipeline):
    steps, reps = PLAN[pipeline]
    r = tab.call("s => nbodyPage.start(s)", {"pipeline": pipeline, "n": N, "reference": False})
    assert "error" not in r, r
    row = tab.evaluate(f"nbodyPage.bench({steps}, {reps})")
    assert row.get("status") == "ok", row
    return row


def main():
    server, browser = Server(SITE), Browser()
    try:
        loads = []
        for _ in range(3):
            tab = browser.open(server.url)
            tab.evaluate("nbodyPage.ready")
            loads.append(tab.evaluate("new Promise(r => { const t = () => nbodyPage.firstStepMs !== null ? "
                                      "r(nbodyPage.firstStepMs) : setTimeout(t, 20); t(); })"))
        tab = browser.open(server.url + "?run=0")
        info = tab.evaluate("nbodyPage.ready")
        web = {p: page_rate(tab, p) for p in PLAN}
    finally:
        browser.close()
        server.close()
    cores = os.cpu_count()
    nat = {"cpu32 (1 thread)": native_rate("cpu32", 1), f"cpu32 ({cores} threads)": native_rate("cpu32"),
           "gl:forcequad": native_rate("gl:forcequad")}
    print(f"page load to the end of the first step (N = 1024, gl:forcequad beside cpu64): "
          + ", ".join(f"{ms:.0f} ms" for ms in loads))
    print(f"browser GL: {info.get('gl', info.get('gl_error'))}")
    print(f"\nN = {N}; interactions/s (N^2 per step), medians of the library's bench on each side")
    print(f"{'':32} {'browser':>11} {'native':>11} {'native/browser':>15}")
    for label, page_key in (("cpu32 (1 thread)", "cpu32"), (f"cpu32 ({cores} threads)", "cpu32"),
                            ("gl:forcequad", "gl:forcequad")):
        w, n = web[page_key]["interactions_per_s"], nat[label]["interactions_per_s"]
        print(f"{label:32} {w:11.3e} {n:11.3e} {n / w:15.2f}")
    print(f"\nbrowser timers: cpu32 {web['cpu32']['timer']}; gl:forcequad {web['gl:forcequad']['timer']}; "
          f"native gl:forcequad {nat['gl:forcequad']['timer']}")


if __name__ == "__main__":
    main()
