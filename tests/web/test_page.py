"""The browser edition in a real browser: Debian's chromium, headless on SwiftShader, loads the built
folder from a local server and is driven through window.nbodyPage (web/page/app.js).

Usage: test_page.py SITE_FOLDER [NATIVE_NBODY]   (environment: NBODY_WEB_SCREENSHOT=FILE.png keeps
the screenshot; NBODY_TEST_SEED as the C++ tests read it). Without the native binary the tests that
compare with it skip and say so."""
import base64
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser, Server  # noqa: E402

SITE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/web/site")
NATIVE = Path(sys.argv[2]) if len(sys.argv) > 2 else None
ROOT = Path(__file__).resolve().parents[2]
GALAXY = ROOT.parent / "shared" / "data" / "galaxy_20K.bin"

# The float tolerances of the GL tests (tests/test_gl.cpp): rms relative error <= 1e-5 and every
# body within 1e-6 + 1e-4 |a_ref|.
RMS_REL, ATOL, RTOL = 1e-5, 1e-6, 1e-4

# WebGPU in Debian's chromium, headless, on SwiftShader (with --enable-unsafe-swiftshader, which
# browser.py passes): the WebGPU rungs' tests need it; without it the page must say why they cannot run.
WEBGPU = ["--enable-unsafe-webgpu"]

_seed = os.environ.get("NBODY_TEST_SEED", "20240611")
SEED = random.randrange(1, 2**31) if _seed == "random" else int(_seed)
print(f"seed {SEED} (NBODY_TEST_SEED=random draws one)", flush=True)

server = browser = None


def setUpModule():
    global server, browser
    if not (SITE / "nbody.wasm").exists():  # a failure, not a skip: nothing would have been checked
        raise FileNotFoundError(f"no {SITE}/nbody.wasm: run scripts/build-web.sh first")
    server = Server(SITE)
    browser = Browser(flags=WEBGPU)


def tearDownModule():
    if browser:
        browser.close()
    if server:
        server.close()


def open_page(query="?run=0", before=None):
    tab = browser.open(server.url + query, before)
    tab.info = tab.evaluate("nbodyPage.ready")
    return tab


def start(tab, **spec):
    r = tab.call("s => nbodyPage.start(s)", spec)
    return r


def native(*args):
    """`nbody ARGS` of the native build; the test skips, saying why, when there is none."""
    if NATIVE is None or not NATIVE.exists():
        raise unittest.SkipTest("no native nbody given (test_page.py SITE NATIVE_NBODY): nothing to compare with")
    return subprocess.run([str(NATIVE), *args], check=True, capture_output=True, text=True)


def read_csv_positions(path):
    """x y z m per body, as the CSV holds them (shortest round-trip text: the same doubles)."""
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            x, y, z, _, _, _, m = (float(v) for v in line.split(","))
            out += [x, y, z, m]
    return out


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        size = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = (int.from_bytes(body[0:4], "big"),
                                                             int.from_bytes(body[4:8], "big"), *body[8:13])
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG layout"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


class Page(unittest.TestCase):
    def test_loads_runs_and_reports_no_console_errors(self):
        tab = open_page("")  # as a reader opens it: running at once
        ms = tab.evaluate("new Promise(r => { const t = () => nbodyPage.firstStepMs !== null ? "
                          "r(nbodyPage.firstStepMs) : setTimeout(t, 20); t(); })")
        step = tab.evaluate("new Promise(r => setTimeout(() => r(document.getElementById('step-label')"
                            ".textContent), 1500))")
        print(f"\npage load to the end of the first step: {ms:.0f} ms; after 1.5 s more: {step}", flush=True)
        self.assertGreater(int(step.split()[-1]), 1, "the bodies did not move on")
        self.assertEqual(tab.console(), [], "the page logged errors")
        self.assertIn("SwiftShader", tab.info.get("gl", ""), tab.info)

    def test_unavailable_rungs_are_listed_with_the_reason(self):
        tab = open_page()
        why = {r["name"]: r.get("reason") for r in tab.info["rungs"] if not r["available"]}
        self.assertIn("CUDA does not run in a browser", why["cuda:tuned"])
        self.assertIn("needs GL 4.3 compute shaders", why["gl:compute"])
        for name in ("cpu64", "cpu32", "gl:forcequad", "gl:gather"):
            self.assertNotIn(name, why)
        r = start(tab, pipeline="cuda:tuned", n=100)
        self.assertEqual(r["kind"], "Unavailable")
        self.assertIn("cuda:tuned cannot run here", r["error"])
        listed = tab.evaluate("document.getElementById('unavailable').textContent")
        self.assertIn("cuda:mixed: CUDA does not run in a browser", listed)

    def test_the_introduction_holds_for_every_rung_and_its_words_are_one_click_away(self):
        tab = open_page("?run=0&pipeline=cpu:tree&n=300")
        self.assertEqual(tab.evaluate("nbodyPage.started.pipeline"), "cpu:tree")
        self.assertNotIn("all-pairs", tab.evaluate("document.querySelector('h1').textContent"))
        words = tab.evaluate("(() => { const g = document.querySelector('header details.glossary'); "
                             "return [g.open, g.querySelector('dl').checkVisibility(), "
                             "Array.from(g.querySelectorAll('dt'), d => d.textContent).join(' / ')]; })()")
        self.assertEqual(words[:2], [False, False], "folded until clicked")
        for word in ("rung", "RGBA32F", "leapfrog", "softening", "theta", "float64"):
            self.assertIn(word, words[2])

    def test_unrunnable_rungs_are_not_offered_and_fold_under_one_line(self):
        tab = open_page()
        rungs = tab.info["rungs"]
        cannot = [r for r in rungs if not r["available"]]
        offered = tab.evaluate("Array.from(document.getElementById('pipeline').options, o => o.value)")
        self.assertEqual(offered, [r["name"] for r in rungs if r["available"]])
        fold = ("(() => { const d = document.getElementById('unrunnable'), s = d.querySelector('summary'); "
                "return [d.open, s.textContent, d.getBoundingClientRect().height, s.getBoundingClientRect().height, "
                "document.getElementById('unavailable').checkVisibility()]; })()")
        is_open, line, height, line_height, list_shown = tab.evaluate(fold)
        self.assertFalse(is_open)
        self.assertEqual(height, line_height, "only the line shows")
        self.assertFalse(list_shown)
        # The count and the reasons come from the catalogue's reasons, not from the page's text.
        cuda = sum(r["family"] == "cuda" for r in cannot)
        gl = sum(r["family"] == "gl" for r in cannot)
        self.assertTrue(line.startswith(f"{len(cannot)} rungs cannot run here: "), line)
        self.assertIn(f"CUDA does not run in a browser ({cuda})", line)
        self.assertIn(f"needs GL 4.3 compute shaders ({gl})", line)
        self.assertNotIn("this context is", line, "each reason's first clause only")
        tab.evaluate("document.querySelector('#unrunnable summary').click()")
        is_open, _, height, line_height, list_shown = tab.evaluate(fold)
        self.assertTrue(is_open and list_shown)
        self.assertGreater(height, line_height + 5 * len(cannot))
        self.assertEqual(tab.evaluate("document.querySelectorAll('#unavailable li').length"), len(cannot))

    def check_accelerations(self, tab, **spec):
        r = start(tab, **{"ic": "plummer", "seed": SEED, **spec})
        self.assertNotIn("error", r, r)
        a = tab.evaluate("nbodyPage.accelerations()")
        self.assertNotIn("error", a, a)
        got, ref = a["rung"], a["reference"]
        self.assertEqual(len(got), 3 * spec["n"])
        num = den = 0.0
        worst, wi = -1.0, -1
        for i in range(spec["n"]):
            g, r3 = got[3 * i:3 * i + 3], ref[3 * i:3 * i + 3]
            d = math.dist(g, r3)
            num, den = num + d * d, den + sum(v * v for v in r3)
            excess = d - (ATOL + RTOL * math.hypot(*r3))
            if not excess <= worst:
                worst, wi = excess, i
        rms = math.sqrt(num / den)
        print(f"\n{spec}: rms relative {rms:.3e} (page: {a['rms_rel']:.3e})", flush=True)
        self.assertLessEqual(rms, RMS_REL)
        self.assertLessEqual(worst, 0, f"body {wi}: {got[3 * wi:3 * wi + 3]} against {ref[3 * wi:3 * wi + 3]}")

    def test_forcequad_accelerations_match_cpu64_at_1000(self):
        self.check_accelerations(open_page(), pipeline="gl:forcequad", n=1000)

    def test_chunked_forcequad_and_gather_match_cpu64(self):
        tab = open_page()
        self.check_accelerations(tab, pipeline="gl:gather", n=1000)
        self.check_accelerations(tab, pipeline="gl:forcequad", n=1000, gl_chunk=384)  # 3 chunks, blended

    def test_random_unequal_masses_match_cpu64(self):
        # Fresh random bodies from the test's seed: a ball, masses from 0.5 to 1.5 times the mean,
        # n = 1023 (no tile, workgroup, chunk or texture width divides it).
        rng = random.Random(SEED)
        lines = ["x,y,z,vx,vy,vz,m"]
        for _ in range(1023):
            while True:
                p = [rng.uniform(-1, 1) for _ in range(3)]
                if sum(v * v for v in p) <= 1:
                    break
            lines.append(",".join(repr(v) for v in p + [0.1 * rng.uniform(-1, 1) for _ in range(3)]
                                  + [rng.uniform(0.5, 1.5) / 1023]))
        tab = open_page()
        tab.call("(text) => { const FS = nbodyPage.module.FS; try { FS.mkdir('/input'); } catch (e) {} "
                 "FS.writeFile('/input/random.csv', text); }", "\n".join(lines) + "\n")
        for pipeline in ("gl:forcequad", "gl:gather", "cpu32", "webgpu:gems31", "webgpu:tuned"):
            self.check_accelerations(tab, pipeline=pipeline, n=1023, ic="/input/random.csv")

    def check_fifteen_steps(self, tab, name):
        """`name` from the test's Plummer sphere of 1000, stepped one at a time beside cpu64: within
        1e-5 of it at every step, and not equal to it. Returns the last step's reply."""
        r = start(tab, pipeline=name, n=1000, ic="plummer", seed=SEED)
        self.assertNotIn("error", r, r)
        worst = 0.0
        for _ in range(15):
            s = tab.evaluate("nbodyPage.step(1)")
            worst = max(worst, s["divergence"]["max"])
        print(f"\n{name} n=1000, 15 steps: largest distance to cpu64 {worst:.3e} ({s['timer']})", flush=True)
        self.assertEqual(s["step"], 15)
        self.assertLess(worst, 1e-5)
        self.assertGreater(worst, 0, "a float32 rung cannot follow float64 exactly: nothing was compared")
        return s

    def test_fifteen_steps_stay_within_1e_5_of_cpu64(self):
        self.check_fifteen_steps(open_page(), "gl:forcequad")

    def test_cpu64_has_the_native_bits(self):
        with tempfile.TemporaryDirectory() as tmp:
            for steps in (0, 15):
                native("run", "-p", "cpu64", "-n", "1000", "--ic", "plummer", "--seed", str(SEED),
                       "--steps", str(steps), "--no-energy", "--save", f"{tmp}/native{steps}.csv")
            tab = open_page()
            r = start(tab, pipeline="cpu64", n=1000, ic="plummer", seed=SEED)
            self.assertNotIn("error", r, r)
            self.assert_same_bits(tab.evaluate("nbodyPage.positions().rung"), f"{tmp}/native0.csv",
                                  "the plummer generator's bodies")
            tab.evaluate("nbodyPage.step(15)")
            self.assert_same_bits(tab.evaluate("nbodyPage.positions().rung"), f"{tmp}/native15.csv",
                                  "cpu64 after 15 steps")

    def test_a_dropped_tipsy_file_gives_the_native_bodies(self):
        if not GALAXY.exists():
            self.skipTest(f"no {GALAXY}")
        with tempfile.TemporaryDirectory() as tmp:
            native("run", "-p", "cpu64", "--ic", str(GALAXY), "-n", "2000", "--subset", "random", "--seed", "3",
                   "--steps", "15", "--no-energy", "--save", f"{tmp}/galaxy.csv")
            tab = open_page()
            b64 = base64.b64encode(GALAXY.read_bytes()).decode()
            r = tab.call("(name, b) => nbodyPage.loadFile(name, Uint8Array.from(atob(b), c => c.charCodeAt(0)))",
                         GALAXY.name, b64)
            self.assertIn("the page runs at most 16384", r.get("error", ""), "20000 bodies are past the page's limit")
            r = start(tab, pipeline="cpu64", ic="/input/galaxy_20K.bin", n=2000, subset="random", seed=3)
            self.assertNotIn("error", r, r)
            tab.evaluate("nbodyPage.step(15)")
            self.assert_same_bits(tab.evaluate("nbodyPage.positions().rung"), f"{tmp}/galaxy.csv",
                                  "cpu64 after 15 steps from 2000 bodies of galaxy_20K.bin")

    def assert_same_bits(self, page, csv, what):
        want = read_csv_positions(csv)
        self.assertEqual(len(page), len(want))
        differ = [i for i, (a, b) in enumerate(zip(page, want)) if a != b]
        dist = max((abs(page[i] - want[i]) for i in differ), default=0.0)
        print(f"\n{what}: {len(page) - len(differ)} of {len(page)} doubles identical to the native build's"
              + (f" (largest difference {dist:.3e})" if differ else ""), flush=True)
        self.assertEqual(differ, [], f"{what}: values differ, first at {differ[:1]}")

    def test_force_quad_stages_are_drawn(self):
        tab = open_page()
        start(tab, pipeline="gl:forcequad", n=300, ic="plummer", seed=SEED)
        stages = tab.evaluate("nbodyPage.showStages(0)")
        self.assertEqual([s["height"] for s in stages], [300, 150, 75, 38, 19, 10, 5, 3, 2, 1])
        self.assertTrue(stages[0]["name"].startswith("force quad"))
        self.assertTrue(all(s["name"].startswith("reduction pass") for s in stages[1:]))
        # The last pass holds the accelerations: the same as the rung's own.
        last = tab.evaluate(f"Array.from(nbodyPage.session.stageData({len(stages) - 1}))")
        acc = tab.evaluate("nbodyPage.accelerations().then(a => a.rung)")
        for i in range(300):
            self.assertEqual(last[4 * i:4 * i + 3], acc[3 * i:3 * i + 3], f"body {i}")
        lit = tab.evaluate("(() => { const d = document.getElementById('stage').getContext('2d')"
                           ".getImageData(0, 0, 512, 512).data; let k = 0; for (let i = 0; i < d.length; i += 4) "
                           "k += d[i] + d[i + 1] + d[i + 2] > 0; return k; })()")
        self.assertGreater(lit, 300 * 300, "the force quad was not drawn")
        r = start(tab, pipeline="gl:forcequad", n=2000, ic="plummer", seed=SEED)
        self.assertIn("n <= 1024", tab.evaluate("nbodyPage.showStages(0)")["error"])

    def test_too_many_bodies_show_the_limit(self):
        tab = open_page()
        r = start(tab, pipeline="gl:forcequad", n=100000, ic="plummer")
        self.assertEqual(r["kind"], "InputError")
        banner = tab.evaluate("[document.getElementById('status').textContent, "
                              "document.getElementById('status').className]")
        self.assertIn("n 100000: the page runs at most 16384 bodies", banner[0])
        self.assertIn("error", banner[1])
        lit = tab.evaluate("(() => { const d = document.getElementById('view').getContext('2d')"
                           ".getImageData(0, 0, 560, 560).data; let k = 0; for (let i = 0; i < d.length; i += 4) "
                           "k += d[i] > 100; return k; })()")
        self.assertGreater(lit, 100, "the bodies' canvas is blank: the message should be written on it")

    def test_without_cpu64_the_rungs_pace_sets_the_limit(self):
        tab = open_page()
        r = start(tab, pipeline="cpu32", n=16400, ic="plummer", reference=False)  # past cpu64's limit
        self.assertNotIn("error", r, r)
        self.assertEqual([r["n"], r["reference"]], [16400, ""])
        self.assertEqual(tab.evaluate("nbodyPage.step(1)")["step"], 1)
        r = start(tab, pipeline="webgpu:gems31", n=1000000, ic="plummer", reference=False)
        self.assertEqual(r["kind"], "InputError", r)
        self.assertRegex(r["error"], r"^n 1000000: measured here, the set-up \(two float64 passes in WebAssembly\) "
                                     r"would take about [0-9.]+ s and each webgpu:gems31 step [0-9.]+ s; "
                                     r"the page takes at most 30.0 s and 10.0 s$")
        r = start(tab, pipeline="webgpu:gems31", n=5000000, reference=False)
        self.assertIn("n 5000000: the page runs at most 4194304 bodies", r["error"])

    def test_bad_input_is_named_and_the_page_stays_usable(self):
        tab = open_page()
        cases = [  # spec, words the message must hold
            (dict(n=0), "n 0: must be > 0"),
            (dict(n="abc"), "n 'abc': not a number"),
            (dict(n=1e20), "n 1e+20: out of range"),
            (dict(n=100, dt=0), "dt 0"),
            (dict(n=100, gl_chunk=-5), "gl_chunk -5: must be in 0..16384"),
            (dict(n=5000, gl_chunk=1), "5000 chunks a side; the limit is 64"),
            (dict(n=100, ic="bogus"), "bogus"),
            (dict(n=100, pipeline="bogus"), "unknown pipeline 'bogus'"),
        ]
        for spec, words in cases:
            r = start(tab, **spec)
            self.assertIn(words, r.get("error", ""), spec)
            self.assertNotIn("--", r["error"], "the page's field names, not the CLI's options")
            shown = tab.evaluate("[document.getElementById('status').textContent, "
                                 "document.getElementById('step-label').textContent, nbodyPage.positions().rung.length]")
            self.assertIn(words, shown[0])
            self.assertEqual(shown[1:], ["", 0], "nothing of the earlier run is left after a failed start")
        for call in ("nbodyPage.bench(10, 0)", "nbodyPage.step(1)", "nbodyPage.showStages(0)"):
            self.assertIn("no simulation", json.dumps(tab.evaluate(call)), call)
        # A refused value stays in the form (dt 0 from the last case): a good start puts the run's own back.
        self.assertEqual(tab.evaluate("document.getElementById('dt').value"), "0")
        self.assertNotIn("error", start(tab, pipeline="cpu32", n=100, ic="plummer", dt=0.01))
        # A file's bytes that are not UTF-8, quoted by the reader's message, and a file of no known kind.
        for name, data, words in (("latin1.csv", b"x,y,z,vx,vy,vz,m\n1,0,0,0,0,0,1\n\xe9,0,0,0,0,0,1\n", "line 3"),
                                  ("bodies.txt", b"1 2 3\n", "neither a generator")):
            r = tab.call("(name, b) => nbodyPage.loadFile(name, Uint8Array.from(atob(b), c => c.charCodeAt(0)))",
                         name, base64.b64encode(data).decode())
            self.assertEqual(r.get("kind"), "InputError", r)
            self.assertIn(words, r["error"])
        r = start(tab, pipeline="gl:forcequad", n=200, ic="plummer")
        self.assertNotIn("error", r, r)
        self.assertEqual(tab.evaluate("nbodyPage.bench(0, 3)")["error"], "steps 0: must be in 1..1000")
        for _ in range(8):
            tab.evaluate("nbodyPage.step(7)")  # 56 steps: past 50 without landing on it
        self.assertIn("at step 56", tab.evaluate("document.getElementById('energy').textContent"))
        self.assertEqual(tab.console(), [])

    def test_the_forms_defaults_are_the_command_lines(self):
        help_text = native("run", "--help").stdout
        shown = dict(re.findall(r"(--[a-z][a-z0-9-]*) [A-Z0-9]+=(\S+)", help_text))
        tab = open_page()
        form = tab.evaluate("Object.fromEntries(['dt', 'softening', 'seed', 'ic', 'subset', 'gl_chunk']"
                            ".map(k => [k, document.getElementById(k).value]))")
        for field, flag in [("dt", "--dt"), ("softening", "--softening"), ("seed", "--seed"), ("ic", "--ic"),
                            ("subset", "--subset"), ("gl_chunk", "--gl-chunk")]:
            if field in ("ic", "subset"):
                self.assertEqual(form[field], shown[flag], field)
            else:
                self.assertEqual(float(form[field]), float(shown[flag]), field)

    def test_the_forms_ranges_and_help_are_the_rungs(self):
        tab = open_page()
        form = tab.evaluate("Object.fromEntries(['gl_chunk', 'webgpu_p', 'webgpu_k', 'theta', 'leaf_size'].map(k => "
                            "[k, [document.getElementById(k).min, document.getElementById(k).max, "
                            "document.getElementById(k).parentElement.title]]))")
        # What the registries accept (gl_pipeline/, webgpu_pipeline/ and common/ registry.cpp), as the
        # command line's --help says it for the options it has.
        self.assertEqual(form["webgpu_p"][:2], ["16", "256"])
        self.assertEqual(form["webgpu_k"][:2], ["1", "8"])
        self.assertEqual(form["theta"][:2], ["0", "1"])
        self.assertEqual(form["leaf_size"][:2], ["0", "4096"])
        help_text = " ".join(native("run", "--help").stdout.split())
        for field in ("gl_chunk", "theta", "leaf_size"):
            self.assertIn(form[field][2], help_text, field)

    def test_a_refused_url_value_stays_in_the_form(self):
        tab = open_page("?run=0&n=0&ic=shell&dt=0.02")
        self.assertIn("n 0", tab.evaluate("document.getElementById('status').textContent"))
        form = tab.evaluate("['n', 'ic', 'dt'].map(k => document.getElementById(k).value)")
        self.assertEqual(form, ["0", "shell", "0.02"])

    def test_url_parameters_reach_the_library_as_given(self):
        tab = open_page("?run=0&pipeline=gl:gather&n=300&ic=shell&seed=4")
        self.assertEqual(tab.evaluate("nbodyPage.started")["pipeline"], "gl:gather")
        self.assertEqual(tab.evaluate("[nbodyPage.started.n, nbodyPage.started.ic]"), [300, "shell"])
        tab = open_page("?run=0&pipeline=bogus")
        self.assertIn("unknown pipeline 'bogus'", tab.evaluate("document.getElementById('status').textContent"))

    def banner(self, tab):
        return tab.evaluate("[document.getElementById('status').textContent, "
                            "document.getElementById('status').className]")

    def test_url_parameters_the_page_does_not_take_are_named(self):
        tab = open_page("?run=0&p=7")
        text, kind = self.banner(tab)
        self.assertIn("p=7: the page has no parameter p (it takes pipeline, n, ", text)
        self.assertIn("error", kind)
        self.assertIsNone(tab.evaluate("nbodyPage.started"), "nothing runs")
        self.assertEqual(tab.console(), [])
        # Every one named, with the library's refusal of a value.
        text, kind = self.banner(open_page("?run=0&p=7&n=0&colour=red"))
        for words in ("p=7: ", "colour=red: ", "n 0: must be > 0"):
            self.assertIn(words, text)

    def test_a_url_option_the_rung_does_not_take_is_refused(self):
        # As the command line refuses it: an option away from its default that the rung does not take.
        for query in ("?run=0&pipeline=gl:forcequad&theta=0.3", "?run=0&theta=0.3"):  # the form's rung
            tab = open_page(query)
            text, kind = self.banner(tab)
            self.assertIn("theta 0.3: cpu:tree, cuda:tree take it, not gl:forcequad (it would be ignored)", text)
            self.assertIn("error", kind)
            self.assertIsNone(tab.evaluate("nbodyPage.started"), query)
            self.assertEqual(tab.evaluate("[pipeline.value, theta.value]"), ["gl:forcequad", "0.3"], "kept in the form")
        text, _ = self.banner(open_page("?run=0&theta=2"))  # a value no rung takes: the library's words alone
        self.assertEqual(text.count("theta 2"), 1, text)
        text, _ = self.banner(open_page("?run=0&pipeline=gl:gather&webgpu_k=2&gl_chunk=512"))
        self.assertIn("webgpu_k 2: webgpu:tuned takes it, not gl:gather", text)
        self.assertIn("gl_chunk 512: gl:forcequad takes it, not gl:gather", text)
        # The rung that takes it, and the default with one that does not, start; so does the form,
        # which sends every rung's fields whichever rung is chosen.
        tab = open_page("?run=0&pipeline=cpu:tree&theta=0.3&n=300")
        self.assertEqual(tab.evaluate("nbodyPage.started.theta"), 0.3)
        default = tab.info["defaults"]["theta"]
        tab = open_page(f"?run=0&pipeline=gl:forcequad&theta={default}&n=300")
        self.assertEqual(tab.evaluate("nbodyPage.started.pipeline"), "gl:forcequad")
        self.assertNotIn("error", start(tab, pipeline="gl:forcequad", n=300, theta=0.3))
        self.assertEqual(tab.console(), [])

    def test_an_unbound_subset_is_warned_of(self):
        # Four bodies; the first two fly apart (E > 0), the whole file is bound by the heavy pair.
        rows = ["x,y,z,vx,vy,vz,m", "-1,0,0,0,-3,0,0.01", "1,0,0,0,3,0,0.01", "0,0.1,0,0,0,0,10", "0,-0.1,0,0,0,0,10"]
        tab = open_page()
        tab.call("(text) => { const FS = nbodyPage.module.FS; try { FS.mkdir('/input'); } catch (e) {} "
                 "FS.writeFile('/input/four.csv', text); }", "\n".join(rows) + "\n")
        r = start(tab, pipeline="cpu32", ic="/input/four.csv", n=2, subset="first")
        self.assertTrue(any("unbound" in w for w in r["warnings"]), r)
        self.assertIn("Warning:", tab.evaluate("document.getElementById('status').textContent"))
        self.assertEqual(start(tab, pipeline="cpu32", ic="/input/four.csv")["warnings"], [])

    def test_the_form_and_its_buttons(self):
        tab = open_page()
        fill = ("async (n) => { document.getElementById('n').value = n; document.getElementById('pipeline').value = "
                "'gl:gather'; document.getElementById('start').click(); await nbodyPage.pending; "
                "return document.getElementById('status').textContent; }")
        self.assertIn("n 100000: the page runs at most 16384", tab.call(fill, "100000"))
        self.assertIn("gl:gather: 300 bodies", tab.call(fill, "300"))
        label = "document.getElementById('step-label').textContent"
        tab.evaluate("new Promise(r => setTimeout(r, 500))")  # running: Start runs
        tab.evaluate("document.getElementById('pause').click(); nbodyPage.pending")
        before = int(tab.evaluate(label).split()[-1])
        self.assertGreater(before, 0)
        tab.evaluate("document.getElementById('step').click(); nbodyPage.pending")
        self.assertEqual(tab.evaluate(label), f"step {before + 1}")
        tab.evaluate("document.getElementById('show-stages').click(); nbodyPage.pending")
        tab.evaluate("document.getElementById('next-stage').click()")
        self.assertTrue(tab.evaluate("document.getElementById('stage-name').textContent")
                        .startswith("stage 2 of 10: reduction pass: 300 rows -> 150"))
        self.assertEqual(tab.console(), [])

    def test_without_float_blend_a_chunked_quad_says_what_runs(self):
        hide = ("const get = WebGL2RenderingContext.prototype.getExtension; "
                "WebGL2RenderingContext.prototype.getExtension = function (name) { "
                "return name === 'EXT_float_blend' ? null : get.call(this, name); };")
        tab = open_page(before=hide)
        r = start(tab, pipeline="gl:forcequad", n=1000, gl_chunk=384)
        self.assertIn("gl_chunk 384 makes 3 chunks", r.get("error", ""))
        self.assertIn("no EXT_float_blend): use gl_chunk 0", r["error"])
        self.assertNotIn("error", start(tab, pipeline="gl:forcequad", n=1000, gl_chunk=0))

    def test_without_webgl_the_page_says_so_and_runs_cpu32(self):
        plain = Browser(flags=["--disable-3d-apis"])
        try:
            tab = plain.open(server.url)
            info = tab.evaluate("nbodyPage.ready")
            self.assertIn("no WebGL2 context", info["gl_error"])
            why = {r["name"]: r.get("reason", "") for r in info["rungs"]}
            self.assertIn("no WebGL2 context", why["gl:forcequad"])
            shown = tab.evaluate("new Promise(r => setTimeout(() => r([nbodyPage.started.pipeline, "
                                 "document.getElementById('status').textContent, "
                                 "document.getElementById('step-label').textContent]), 1000))")
            self.assertEqual(shown[0], "cpu32")
            self.assertIn("No GL rung can run here", shown[1])
            self.assertNotEqual(shown[2], "step 0", "cpu32 should be running")
        finally:
            plain.close()

    def webgpu_rungs(self, tab):
        names = [r["name"] for r in tab.info["rungs"] if r["family"] == "webgpu"]
        self.assertEqual(names, ["webgpu:gems31", "webgpu:tuned"])
        self.assertIn("swiftshader", tab.info.get("webgpu", ""), tab.info)
        return names

    def test_webgpu_rungs_match_cpu64(self):
        tab = open_page()
        for name in self.webgpu_rungs(tab):
            self.check_accelerations(tab, pipeline=name, n=1000)
            self.check_accelerations(tab, pipeline=name, n=1001, webgpu_p=32)  # the last tile part padding
        self.check_accelerations(tab, pipeline="webgpu:tuned", n=777, webgpu_p=16, webgpu_k=8)
        self.check_accelerations(tab, pipeline="webgpu:gems31", n=300, webgpu_p=256)  # one tile, mostly padding
        self.assertEqual(tab.console(), [], "the page logged errors")

    def test_webgpu_fifteen_steps_stay_within_1e_5_of_cpu64(self):
        tab = open_page()
        for name in self.webgpu_rungs(tab):
            s = self.check_fifteen_steps(tab, name)
            self.assertEqual(s["timer"], "WebGPU timestamp queries")
            # The state stays on the GPU between steps: 15 at once give the same bits as 15 one at a time.
            one_by_one = tab.evaluate("nbodyPage.positions().rung")
            start(tab, pipeline=name, n=1000, ic="plummer", seed=SEED)
            tab.evaluate("nbodyPage.step(15)")
            self.assertEqual(tab.evaluate("nbodyPage.positions().rung"), one_by_one)

    def test_webgpu_bad_options_are_named_in_the_pages_fields(self):
        tab = open_page()
        cases = [
            (dict(pipeline="webgpu:gems31", webgpu_p=48), "webgpu_p 48: webgpu:gems31 takes 16, 32, 64, 128 or 256"),
            (dict(pipeline="webgpu:tuned", webgpu_p=512), "webgpu_p 512:"),
            (dict(pipeline="webgpu:tuned", webgpu_k=3), "webgpu_k 3: webgpu:tuned takes 1, 2, 4 or 8"),
            (dict(pipeline="webgpu:gems31", webgpu_k=0), "webgpu_k 0:"),  # no rung takes it: never ignored
            (dict(pipeline="webgpu:gems31", webgpu_p=1.5), "webgpu_p 1.5: must be a whole number"),
        ]
        for spec, words in cases:
            r = start(tab, n=100, **spec)
            self.assertIn(words, r.get("error", ""), spec)
            self.assertNotIn("--", r["error"])
            self.assertIn(words, tab.evaluate("document.getElementById('status').textContent"))
        r = start(tab, pipeline="webgpu:tuned", n=100, webgpu_p=32, webgpu_k=2)
        self.assertEqual([r["webgpu_p"], r["webgpu_k"]], [32, 2])
        self.assertEqual(tab.evaluate("[webgpu_p.value, webgpu_k.value]"), ["32", "2"])

    def test_a_start_while_a_webgpu_step_waits_for_the_gpu(self):
        tab = open_page()
        start(tab, pipeline="webgpu:gems31", n=2000, ic="plummer", seed=SEED)
        # The step is suspended in the library (Asyncify) when the next start is asked for: the start
        # waits its turn, and the step's reply, of the run before, changes nothing on the page.
        r = tab.evaluate("(() => { const s = nbodyPage.step(3); const t = nbodyPage.start({pipeline: 'webgpu:tuned', "
                         "n: 500, ic: 'shell'}, true); return Promise.all([s, t]); })()")
        self.assertEqual(r[0]["step"], 3)
        self.assertEqual(r[1]["pipeline"], "webgpu:tuned")
        label = tab.evaluate("new Promise(r => setTimeout(() => r(document.getElementById('step-label').textContent), 1500))")
        self.assertGreater(int(label.split()[-1]), 0, "the page stopped stepping")
        self.assertTrue(tab.evaluate("document.getElementById('rate').textContent").startswith("webgpu:tuned:"))
        self.assertEqual(tab.console(), [])

    def test_webgpu_bench_is_validated_then_timed(self):
        tab = open_page()
        start(tab, pipeline="webgpu:tuned", n=1024, ic="plummer", seed=SEED)
        r = tab.evaluate("nbodyPage.bench(2, 2)")
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(r["validated_bodies"], 1000)
        self.assertLessEqual(r["accel_rms_rel"], RMS_REL)
        self.assertEqual(r["timer"], "WebGPU timestamp queries")
        self.assertGreater(r["interactions_per_s"], 0)

    def test_without_webgpu_the_family_says_why_and_the_rest_runs(self):
        plain = Browser()  # no --enable-unsafe-webgpu
        try:
            tab = plain.open(server.url + "?run=0")
            info = tab.evaluate("nbodyPage.ready")
            # Debian's chromium without the flag has navigator.gpu but no adapter; others lack navigator.gpu.
            reasons = ("WebGPU found no adapter", "this browser offers no WebGPU")
            self.assertTrue(info["webgpu_error"].startswith(reasons), info["webgpu_error"])
            why = {r["name"]: r.get("reason", "") for r in info["rungs"]}
            for name in ("webgpu:gems31", "webgpu:tuned"):
                self.assertEqual(why[name], info["webgpu_error"])
            self.assertIn("webgpu:tuned: " + info["webgpu_error"],
                          tab.evaluate("document.getElementById('unavailable').textContent"))
            r = tab.call("s => nbodyPage.start(s)", {"pipeline": "webgpu:gems31", "n": 100})
            self.assertEqual(r["kind"], "Unavailable")
            r = tab.call("s => nbodyPage.start(s)", {"pipeline": "gl:forcequad", "n": 100})
            self.assertNotIn("error", r, r)
            self.assertEqual(tab.evaluate("nbodyPage.step(3)")["step"], 3)
            self.assertEqual(tab.console(), [])
        finally:
            plain.close()

    def test_the_ladder_measured_here(self):
        tab = open_page()
        start(tab, pipeline="gl:gather", n=500, ic="shell", seed=SEED)
        self.assertEqual(tab.evaluate("nbodyPage.ladderHere()"),
                         ["cpu32", "gl:forcequad", "gl:gather", "webgpu:gems31", "webgpu:tuned"])
        during = tab.evaluate("(() => { const p = nbodyPage.measureLadder(1024, 2, 2); "
                              "const controls = ['start', 'step', 'pause', 'bench', 'measure-ladder']"
                              ".map(id => document.getElementById(id).disabled); return p.then(rows => [rows, controls]); })()")
        rows, controls = during
        self.assertEqual(controls, [True] * 5, "the controls wait while the ladder is measured")
        for r in rows:
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual([r["n"], r["validated_bodies"]], [1024, 1000], r)
            self.assertLessEqual(r["accel_rms_rel"], RMS_REL, r)
        for below, r in zip(rows, rows[1:]):
            self.assertAlmostEqual(r["speedup"], r["interactions_per_s"] / below["interactions_per_s"])
        shown = tab.evaluate("Array.from(document.querySelectorAll('#ladder-here tbody tr'), "
                             "tr => Array.from(tr.cells, c => c.textContent))")
        self.assertEqual([row[0] for row in shown], [r["rung"] for r in rows])
        self.assertEqual(shown[3][5], "browser only")
        self.assertEqual(shown[1][5], "1.76e9/s at 16384 (fill-bound)")  # docs/ladder.md's H100 figure
        # The run the form held is back, not started.
        self.assertEqual([tab.evaluate("nbodyPage.started")[k] for k in ("pipeline", "n", "ic")], ["gl:gather", 500, "shell"])
        keep = os.environ.get("NBODY_WEB_LADDER_SCREENSHOT")
        if keep:
            tab.screenshot(keep, "ladderhere")
        self.assertEqual(tab.console(), [])

    def test_one_workgroups_tiles_are_drawn(self):
        tab = open_page()
        start(tab, pipeline="webgpu:gems31", n=1000, webgpu_p=32, ic="plummer", seed=SEED)
        w = tab.evaluate("nbodyPage.showWorkgroup()")
        self.assertEqual([w["p"], w["rows"], w["tiles"]], [32, 32, 32])  # 1000 bodies: 31 tiles and a part
        sums = tab.evaluate("nbodyPage.workgroup.sums")
        acc = tab.evaluate("nbodyPage.accelerations().then(a => a.reference)")
        for i in range(32):  # after the last tile, each invocation's sum is its body's acceleration
            self.assertAlmostEqual(sums[i * 32 + 31], math.hypot(*acc[3 * i:3 * i + 3]), delta=1e-6 * sums[i * 32 + 31])
        label = "document.getElementById('tile-name').textContent"
        self.assertTrue(tab.evaluate(label).startswith("tile 1 of 32: bodies j = 0..31 in workgroup memory"))
        tab.evaluate("document.getElementById('next-tile').click()")
        self.assertTrue(tab.evaluate(label).startswith("tile 2 of 32: bodies j = 32..63"))
        tab.evaluate("document.getElementById('all-tiles').click()")
        self.assertEqual(tab.evaluate(label), "all 32 tiles summed: each of the 32 invocations with a body writes its acceleration once")
        lit = tab.evaluate("(() => { const d = document.getElementById('workgroup').getContext('2d')"
                           ".getImageData(0, 0, 512, 256).data; let k = 0; for (let i = 0; i < d.length; i += 4) "
                           "k += d[i] + d[i + 1] + d[i + 2] > 0; return k; })()")
        self.assertGreater(lit, 0.9 * 512 * 256, "the workgroup's sums were not drawn")

    def test_screenshot_shows_bodies(self):
        tab = open_page()
        r = start(tab, pipeline="gl:forcequad", n=1024, ic="plummer", seed=SEED)
        self.assertNotIn("error", r, r)
        for _ in range(30):
            tab.evaluate("nbodyPage.step(1)")  # one at a time: the chart gets a point per step
        tab.evaluate("nbodyPage.showStages(0)")
        box = tab.evaluate("(() => { const r = document.getElementById('view').getBoundingClientRect(); "
                           "return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()")
        keep = os.environ.get("NBODY_WEB_SCREENSHOT")
        scratch = tempfile.TemporaryDirectory()
        path = keep or f"{scratch.name}/page.png"
        tab.screenshot(path)  # the whole page, one image pixel per CSS pixel
        self.addCleanup(scratch.cleanup)
        width, height, rows = png_pixels(path)
        x0, y0, w, h = (round(v) for v in box)
        # Bodies are drawn blue-white (draw.js); a message on the canvas would be pink.
        bright = sum(1 for y in range(y0, y0 + h) for x in range(x0, x0 + w)
                     if rows[y][x][2] > 150 and rows[y][x][2] > rows[y][x][0] + 40)
        print(f"\nscreenshot {path} ({width}x{height}): {bright} body-coloured pixels where the bodies are drawn",
              flush=True)
        self.assertGreater(bright, 1000)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
