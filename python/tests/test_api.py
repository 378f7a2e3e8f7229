"""`import nbody` as a notebook uses it, checked against the CLI (the same library, the same bits).

The CLI binary comes from NBODY_CLI (scripts/test.sh sets it to the ci build's); without it the
tests that compare with the CLI skip with the reason.
"""

import gc
import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import nbody

CLI = os.environ.get("NBODY_CLI", "")


def cli(*args):
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.skip("NBODY_CLI is not set to an nbody binary: nothing to compare with")
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def gl_here():
    return nbody.info()["pipelines"]["gl:forcequad"]["available"]


def state_csv(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    return a[:, 0:3], a[:, 3:6]


# ---- the same run, the same bits ------------------------------------------------------------

@pytest.mark.parametrize("pipeline", ["cpu32", "cpu64", "gl:forcequad", "cuda:tuned", "cuda:mixed"])
def test_simulation_is_bit_identical_to_nbody_run(tmp_path, pipeline):
    if not nbody.info()["pipelines"][pipeline]["available"]:
        pytest.skip(nbody.info()["pipelines"][pipeline]["reason"])
    out = tmp_path / "state.csv"
    r = cli("run", "-p", pipeline, "-n", "300", "--steps", "17", "--seed", "5", "--save", str(out))
    assert r.returncode == 0, r.stderr
    x_cli, v_cli = state_csv(out)
    with nbody.Simulation(pipeline, nbody.initial_conditions("plummer", n=300, seed=5)) as sim:
        sim.step(5).step(12)  # batches do not change the bits
        assert sim.steps == 17 and sim.time == pytest.approx(0.17)
        np.testing.assert_array_equal(sim.positions, x_cli)
        np.testing.assert_array_equal(sim.velocities, v_cli)


def test_the_browsers_webgpu_rungs_are_listed_with_the_reason():
    listed = nbody.info()["pipelines"]
    for name in ("webgpu:gems31", "webgpu:tuned"):
        assert name in nbody.pipelines()
        assert listed[name]["available"] is False
        assert listed[name]["reason"].startswith("browser only: WGSL compute shaders run in the browser edition")
    with pytest.raises(nbody.Unavailable, match="webgpu:gems31 cannot run here: browser only"):
        nbody.Simulation("webgpu:gems31", nbody.initial_conditions("plummer", n=10))


def test_progress_reaches_the_hook_and_its_error_stops_the_work():
    calls = []
    nbody.set_progress(lambda label, done, total: calls.append((label, done, total)))
    try:
        with nbody.Simulation("cpu32", nbody.initial_conditions("plummer", n=256)) as sim:
            sim.step(40)
            steps = [c for c in calls if c[2] == 40]
            assert steps[0][1] == 0 and steps[-1][1] == 40, calls
            assert [c[1] for c in steps] == sorted(c[1] for c in steps)

            def stop(label, done, total):
                if done > 0:
                    raise ValueError(f"stopped by the hook at {done}")
            nbody.set_progress(stop)
            with pytest.raises(ValueError, match="stopped by the hook"):
                sim.step(20)
            nbody.set_progress(None)
            before = sim.steps
            assert 40 <= before <= 60
            sim.step(1)  # still usable, going on from where it stopped
            assert sim.steps == before + 1
    finally:
        nbody.set_progress("auto")
    with pytest.raises(nbody.InputError, match="progress 'loud'"):
        nbody.set_progress("loud")
    with pytest.raises(nbody.InputError, match="must be a callable"):
        nbody._core.set_progress(3)


def test_initial_conditions_are_the_clis(tmp_path):
    out = tmp_path / "ic.csv"
    r = cli("run", "-p", "cpu64", "-n", "200", "--steps", "0", "--ic", "shell", "--seed", "9", "--save", str(out))
    assert r.returncode == 0, r.stderr
    b = nbody.initial_conditions("shell", n=200, seed=9)
    x_cli, v_cli = state_csv(out)
    np.testing.assert_array_equal(b.x, x_cli)
    np.testing.assert_array_equal(b.v, v_cli)


def test_compare_gives_the_clis_document():
    r = cli("compare", "--pipelines", "cpu32", "-n", "200", "--steps", "12", "--every", "3", "--energy-every", "6",
            "--json", "-")
    assert r.returncode == 0, r.stderr
    want = json.loads(r.stdout)
    got = nbody.compare(["cpu32"], n=200, steps=12, every=3, energy_every=6)
    assert got.document == want
    assert list(got.steps) == [3, 6, 9, 12]
    assert got.max_distance["cpu64|cpu32"].shape == (4,)
    assert list(got.energy_steps) == [6, 12]
    assert got.energy["cpu32"].shape == (2,)
    assert got.config["reference"] == "cpu64"


def test_checkpoints_go_both_ways(tmp_path):
    ck = tmp_path / "python.nbck"
    with nbody.Simulation("cpu32", nbody.initial_conditions(n=150, seed=2)) as sim:
        sim.step(8)
        sim.save_checkpoint(ck)
        sim.step(5)
        x13 = sim.positions.copy()
    with nbody.Simulation.resume(ck) as again:
        assert again.steps == 8 and again.pipeline == "cpu32"
        again.step(5)
        np.testing.assert_array_equal(again.positions, x13)
    out = tmp_path / "cli.csv"
    r = cli("run", "--resume", str(ck), "--steps", "5", "--save", str(out))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(state_csv(out)[0], x13)


def test_a_cli_checkpoint_resumes_as_it_was_run(tmp_path):
    """A checkpoint of `nbody run` keeps its energy cadence for the CLI, but Python's step() samples
    nothing; a --no-energy run's has no E_0: energy() gives E now, and its drift is None, saying why."""
    for extra, has_e0 in ((["--energy-every", "2"], True), (["--no-energy"], False)):
        out = tmp_path / ("e" if has_e0 else "none")
        r = cli("run", "-p", "cpu32", "-n", "300", "--steps", "4", "--checkpoint-every", "4", "--out", str(out), *extra)
        assert r.returncode == 0, r.stderr
        with nbody.Simulation.resume(out / "checkpoint.nbck") as sim:
            assert sim.steps == 4
            sim.step(3)
            assert sim.steps == 7
            e = sim.energy()
            assert np.isfinite(e["total"]) and e["total"] < 0
            if has_e0:
                assert e["initial"] < 0 and abs(e["relative_drift"]) < 1e-3
            else:
                assert e["initial"] is None and e["relative_drift"] is None
                assert "no-energy" in e["relative_drift_undefined"]


def test_tree_diagnostics_are_checked_and_kept(tmp_path):
    bodies = nbody.initial_conditions(n=3001, seed=5)
    with nbody.Simulation("cpu:tree", bodies, diagnostics="tree") as sim:
        d = sim.diagnostics
        assert d["method"] == "tree" and d["engine"].startswith("cpu:tree (theta 0.5")
        c = d["check"]
        assert c["sampled_bodies"] == 1024 and c["against"] in ("cpu64", "cuda:tuned-fp64")
        assert 1e-7 < c["potential_error"]["median_rel"] < 1e-2
        assert sim.fp64_engine.startswith(c["against"])
        sim.step(4)
        tree_e = sim.energy()
        assert abs(tree_e["relative_drift"]) < c["drift_floor"]
        sim.save_checkpoint(tmp_path / "tree.nbck")
    with nbody.Simulation("cpu:tree", bodies, diagnostics="all-pairs") as exact:
        assert exact.diagnostics == {"method": "all-pairs", "engine": c["against"]}
        assert exact.energy()["initial"] != tree_e["initial"]
        assert exact.energy()["initial"] == pytest.approx(tree_e["initial"], rel=1e-3)
    with nbody.Simulation.resume(tmp_path / "tree.nbck") as again:
        assert again.diagnostics["method"] == "tree", "the checkpoint keeps the method"
        assert again.energy()["total"] == tree_e["total"]
    with nbody.Simulation("cpu:tree", nbody.initial_conditions(n=500, seed=5)) as small:
        assert small.diagnostics["method"] == "all-pairs", "auto: all pairs below the size where the tree pays"
    with pytest.raises(nbody.InputError, match="diagnostics tree: cpu32 is not a tree rung"):
        nbody.Simulation("cpu32", bodies, diagnostics="tree")
    with pytest.raises(nbody.InputError, match="diagnostics 'exact'"):
        nbody.Simulation("cpu:tree", bodies, diagnostics="exact")


def test_quadrupole_cells_by_keyword_and_kept_by_a_checkpoint(tmp_path):
    bodies = nbody.initial_conditions(n=3001, seed=6)
    with nbody.Simulation("cpu64", bodies) as exact:
        ref = exact.accelerations()

    def error(**options):
        with nbody.Simulation("cpu:tree", bodies, theta=0.5, **options) as sim:
            a = sim.accelerations()
            return np.median(np.linalg.norm(a - ref, axis=1) / np.linalg.norm(ref, axis=1))

    monopole, quadrupole = error(), error(multipole="quadrupole")
    assert quadrupole < monopole / 2, (quadrupole, monopole)
    with nbody.Simulation("cpu:tree", bodies, multipole="quadrupole") as sim:
        sim.step(3)
        sim.save_checkpoint(tmp_path / "quad.nbck")
        after = sim.accelerations()
    with nbody.Simulation.resume(tmp_path / "quad.nbck") as again:
        np.testing.assert_array_equal(again.accelerations(), after)
    with pytest.raises(nbody.InputError, match="multipole 'octupole'"):
        nbody.Simulation("cpu:tree", bodies, multipole="octupole")
    with pytest.raises(nbody.InputError, match="multipole must be"):
        nbody.Simulation("cpu:tree", bodies, multipole=2)


def test_snapshot_formats(tmp_path):
    with nbody.Simulation("cpu64", nbody.initial_conditions(n=64)) as sim:
        sim.step(3)
        sim.snapshot(tmp_path / "s.csv", format="csv")
        x, v = state_csv(tmp_path / "s.csv")
        np.testing.assert_array_equal(x, sim.positions)
        np.testing.assert_array_equal(v, sim.velocities)
        with pytest.raises(nbody.InputError):
            sim.snapshot(tmp_path / "s.xyz", format="xyz")


# ---- the arrays ------------------------------------------------------------------------------

def test_arrays_are_float64_and_positions_a_read_only_view():
    b = nbody.initial_conditions(n=100)
    with nbody.Simulation("cpu32", b) as sim:
        x = sim.positions
        assert x.dtype == np.float64 and x.shape == (100, 3) and not x.flags.writeable
        assert x.base is not None, "a view of the state read back, not a copy"
        assert sim.positions.ctypes.data == x.ctypes.data, "read back once per step count"
        sim.step()
        assert sim.positions.ctypes.data != x.ctypes.data
        a = sim.accelerations()
        assert a.shape == (100, 3) and np.isfinite(a).all()
        e = sim.energy()
        assert e["total"] == pytest.approx(e["kinetic"] + e["potential"])
        assert abs(e["relative_drift"]) < 1e-3
        np.testing.assert_array_equal(sim.masses, b.m.astype(np.float32))  # the rung's own precision


def test_bodies_from_the_users_arrays():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(50, 3))
    v = np.zeros((50, 3), dtype=np.float32)  # converted to float64
    m = np.full(50, 1 / 50)
    with nbody.Simulation("cpu64", nbody.Bodies(x, v, m)) as sim:
        sim.step(2)
        assert np.isfinite(sim.positions).all()
    for bad, text in [(dict(x=x[:, :2], v=v, m=m), "shape"), (dict(x=x, v=v[:10], m=m), "same n"),
                      (dict(x=x.astype(str), v=v, m=m), "numbers"), (dict(x=x[:0], v=v[:0], m=m[:0]), "no bodies")]:
        with pytest.raises(nbody.InputError, match=text):
            nbody.Bodies(**bad)


# ---- errors ----------------------------------------------------------------------------------

def test_bad_input_raises_input_error_a_value_error():
    b = nbody.initial_conditions(n=20)
    cases = [
        lambda: nbody.Simulation("cpu32", b, dt=-1),
        lambda: nbody.Simulation("cpu32", b, softening=0),
        lambda: nbody.Simulation("warp:drive", b),
        lambda: nbody.Simulation("cpu32", b, cuda_blocks=64),
        lambda: nbody.Simulation("cpu32", b, gl_precision="double"),
        lambda: nbody.initial_conditions("nonesuch.bin"),
        lambda: nbody.initial_conditions("plummer", n=0),
        lambda: nbody.compare(["cpu32"], reference="cpu32", n=10, steps=1),
        lambda: nbody.compare(["cpu32", "cpu32"], n=10, steps=1),
        lambda: nbody.bench(["cpu32"], n=[0]),
    ]
    for case in cases:
        with pytest.raises(nbody.InputError) as e:
            case()
        assert isinstance(e.value, ValueError)
        assert str(e.value)


def test_rung_options_are_the_tables_python_keywords():
    b = nbody.initial_conditions(n=20)
    with pytest.raises(nbody.InputError, match=r"unknown rung option 'cuda_blocks' \(known: gl_chunk, gl_precision, "
                       r"cuda_block, cuda_unroll, cuda_q, cuda_bodies, cuda_split, theta, leaf_size, multipole, device\)"):
        nbody.Simulation("cpu32", b, cuda_blocks=64)
    for page_or_cli_only in ("webgpu_p", "balance"):
        with pytest.raises(nbody.InputError, match=f"unknown rung option '{page_or_cli_only}'"):
            nbody.Simulation("cpu32", b, **{page_or_cli_only: 1})
    with pytest.raises(nbody.InputError, match="theta must be a number"):
        nbody.Simulation("cpu:tree", b, theta="0.5")
    with pytest.raises(nbody.InputError, match="cuda_q must be an integer"):
        nbody.Simulation("cpu32", b, cuda_q=1.5)


def test_an_option_no_named_rung_takes_is_refused_as_the_cli_does():
    b = nbody.initial_conditions(n=20)
    for theta in (0.3, 2):  # every value alike: the rung named would ignore it
        with pytest.raises(nbody.InputError, match=f"theta {theta:g}: cpu:tree, cuda:tree take it, not cpu32"):
            nbody.Simulation("cpu32", b, theta=theta)
        with pytest.raises(nbody.InputError, match=f"theta {theta:g}: cpu:tree, cuda:tree take it, not cpu64, cpu32"):
            nbody.compare(["cpu32"], n=10, steps=1, theta=theta)
    with pytest.raises(nbody.InputError, match="leaf_size 8: cpu:tree, cuda:tree take it, not cpu32"):
        nbody.bench(["cpu32"], n=[64], leaf_size=8)
    with nbody.Simulation("cpu:tree", b, theta=0.3):
        pass


def test_an_undefined_drift_says_so():
    lone = nbody.Bodies(np.array([[1.0, 0, 0]]), np.zeros((1, 3)), np.array([1.0]))  # E_0 = 0
    with nbody.Simulation("cpu32", lone) as sim:
        sim.step(2)
        e = sim.energy()
        assert e["relative_drift"] is None and e["relative_drift_undefined"] == "undefined: E_0 = 0"


def test_a_rung_that_cannot_run_says_why_as_the_cli_does():
    missing = [p for p, s in nbody.info()["pipelines"].items() if not s["available"]]
    if not missing:
        pytest.skip("every rung runs here")
    name = missing[0]
    with pytest.raises(nbody.Unavailable) as e:
        nbody.Simulation(name, nbody.initial_conditions(n=10))
    assert str(e.value).startswith(f"{name} cannot run here: ")
    assert nbody.info()["pipelines"][name]["reason"] in str(e.value)
    r = cli("run", "-p", name, "-n", "10", "--steps", "1")
    assert r.returncode == 3 and nbody.info()["pipelines"][name]["reason"] in r.stderr
    with pytest.raises(nbody.Unavailable):
        nbody.compare([name], n=10, steps=1)
    skipped = nbody.compare(None, n=64, steps=2)
    assert name in skipped.skipped and name not in skipped.pipelines


def test_wrong_types_are_input_errors_naming_the_keywords(tmp_path):
    b = nbody.initial_conditions(n=20)
    cases = [
        (lambda: nbody.initial_conditions(n="abc"), "n must be an integer"),
        (lambda: nbody.initial_conditions(n=10, seed=-1), "seed"),
        (lambda: nbody.initial_conditions(n=-5), "n = -5"),
        (lambda: nbody.initial_conditions(ic=None), "ic must be a string"),
        (lambda: nbody.Simulation("cpu32", b, dt=None), "dt must be a number"),
        (lambda: nbody.Simulation("cpu32", b, dt=float("nan")), "dt nan"),
        (lambda: nbody.Simulation("cpu32", b, cuda_block=2**40), "out of range"),
        (lambda: nbody.Simulation(None, b), "pipeline must be a string"),
        (lambda: nbody.Simulation("cpu32", b).step(None), "k must be an integer"),
        (lambda: nbody.Simulation("cpu32", b).save_checkpoint(None), "path"),
        (lambda: nbody.Simulation("cpu32", b).snapshot(tmp_path / "s.xyz"), "format="),
        (lambda: nbody.compare([None]), "pipeline must be a string"),
        (lambda: nbody.compare([]), "empty"),
        (lambda: nbody.bench(["cpu32"], n="256"), "n must be an integer or a list"),
        (lambda: nbody.compare(["cpu32"], n=10, steps=1, force="no"), "force must be True or False"),
    ]
    for case, text in cases:
        with pytest.raises(nbody.InputError) as e:
            case()
        assert text in str(e.value), str(e.value)
        assert "--" not in str(e.value), f"a CLI option in a Python message: {e.value}"
    assert not (tmp_path / "None").exists()
    with nbody.Simulation("cpu64", b) as sim:  # os.PathLike and the extension's format
        sim.snapshot(tmp_path / "s.csv")
        assert (tmp_path / "s.csv").read_text().startswith("x,y,z")


def test_library_warnings_arrive_as_python_warnings(tmp_path):
    f = tmp_path / "pair.csv"  # two bodies far apart and fast: unbound (E_0 > 0)
    f.write_text("x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n10,0,0,5,0,0,1\n0,0,1,0,0,0,1\n")
    with pytest.warns(RuntimeWarning, match="unbound"):
        nbody.compare(["cpu32"], ic=str(f), n=2, steps=2)


def test_close_from_another_thread_waits_for_the_step():
    sim = nbody.Simulation("cpu64", nbody.initial_conditions(n=512))
    timer = threading.Timer(0.2, sim.close)
    timer.start()
    sim.step(200)
    timer.join()
    assert sim.closed and sim.steps == 200


def test_an_unstable_run_raises_non_finite():
    b = nbody.Bodies([[0, 0, 0], [1e-9, 0, 0]], [[0, 0, 0], [0, 0, 0]], [1e300, 1e300])
    with pytest.raises((nbody.NonFinite, nbody.InputError)):
        with nbody.Simulation("cpu64", b, softening=1e-150) as sim:
            sim.step(3)
            sim.positions
    x = np.array([[0.0, 0, 0], [1, 0, 0]])
    with pytest.raises(nbody.InputError) as e:  # past float32's range: bad input for cpu32, refused before any step
        nbody.Simulation("cpu32", nbody.Bodies(x, np.array([[0, 0, 0], [1e39, 0, 0]]), [1.0, 1.0]))
    assert "--" not in str(e.value) and "body 1's vx" in str(e.value) and "cpu32" in str(e.value)
    with nbody.Simulation("cpu64", nbody.Bodies(x, np.array([[0, 0, 0], [1e39, 0, 0]]), [1.0, 1.0])) as sim:
        sim.step(1)  # float64 holds it
    with pytest.raises(nbody.InputError, match="species"):
        nbody.Bodies(x, np.zeros((2, 3)), [1.0, 1.0], species=[("bodies", 99, True)])


def test_a_closed_simulation_refuses_work_and_its_arrays_live_on():
    sim = nbody.Simulation("cpu32", nbody.initial_conditions(n=40))
    x = sim.positions
    sim.close()
    assert sim.closed
    with pytest.raises(nbody.InputError, match="closed"):
        sim.step()
    del sim
    gc.collect()
    assert np.isfinite(x).all() and x.shape == (40, 3)


# ---- lifetimes and threads -------------------------------------------------------------------

def test_many_simulations_alive_and_deleted_in_any_order():
    b = nbody.initial_conditions(n=64)
    names = ["cpu32", "cpu64"] + (["gl:forcequad", "gl:gather"] if gl_here() else [])
    sims = [nbody.Simulation(p, b) for p in names for _ in range(3)]
    arrays = []
    for s in sims:
        s.step(2)
        arrays.append(s.positions)
    for k in (4, 0, len(sims) - 1, 2):
        if k < len(sims):
            del sims[k]
            gc.collect()
    for s in sims:
        s.step(1)
    del sims
    gc.collect()
    assert all(np.isfinite(a).all() for a in arrays)


def test_two_threads_step_two_simulations():
    b = nbody.initial_conditions(n=256, seed=8)
    one, two = nbody.Simulation("cpu32", b), nbody.Simulation("cpu64", b)
    threads = [threading.Thread(target=s.step, args=(40,)) for s in (one, two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, s in (("cpu32", one), ("cpu64", two)):
        with nbody.Simulation(name, b) as alone:
            alone.step(40)
            np.testing.assert_array_equal(s.positions, alone.positions)


def test_a_gl_simulation_stays_on_its_thread():
    if not gl_here():
        pytest.skip(nbody.info()["pipelines"]["gl:forcequad"]["reason"])
    sim = nbody.Simulation("gl:forcequad", nbody.initial_conditions(n=64))
    errors = []

    def other():
        try:
            sim.step()
        except nbody.InputError as e:
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors and "thread that first used GL" in errors[0]
    sim.step()
    sim.close()


def test_ctrl_c_stops_between_batches_and_leaves_the_simulation_usable(tmp_path):
    # The test sends itself SIGINT, so it installs Python's own handler for its duration: a shell's
    # background job (nohup bash scripts/test.sh &) starts with SIGINT ignored, and then Python
    # installs none and the signal reaches nobody.
    try:
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        pytest.skip("a SIGINT handler can only be installed on the main thread, and this test runs on another")

    class Overdue(Exception):
        pass

    t0 = time.monotonic()

    def give_up_after_two_minutes(label, done, total):
        # Bounds the test whatever happens to the signal: the hook's exception stops the steps too.
        if time.monotonic() - t0 > 120:
            raise Overdue(f"{label}: {done} of {total} steps after 120 s and no KeyboardInterrupt")

    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    nbody.set_progress(give_up_after_two_minutes)
    try:
        sim = nbody.Simulation("cpu64", nbody.initial_conditions(n=1024))
        sim.save_checkpoint(tmp_path / "c.nbck")  # writing a file leaves Python's SIGINT handler in place
        timer.start()
        with pytest.raises(KeyboardInterrupt, match="interrupted at step [0-9]+ of cpu64"):
            sim.step(10**6, force=True)  # about an hour of steps: past the limit without force
    finally:
        timer.cancel()
        nbody.set_progress("auto")
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    done = sim.steps
    assert 0 < done < 10**6
    sim.step(2)
    assert sim.steps == done + 2 and np.isfinite(sim.positions).all()


# ---- the other calls -------------------------------------------------------------------------

def test_explain_bench_and_ladder_rows():
    rows = nbody.explain(n=128, steps=20)
    assert rows[0]["variant"] and rows[-1]["factor"].startswith("chaos")
    table = nbody.bench(["cpu32"], n=[256], steps=2, reps=2)
    assert len(table) == 1 and table[0]["status"] == "ok" and table[0]["interactions_per_s"] > 0
    ladder = nbody.ladder(n=256, steps=1, reps=1)
    assert ladder[0]["pipeline"] == "cpu32"
    assert all("reason" in u for u in ladder.document["unavailable"])


def test_forcequad_stages_show_the_quad_and_its_passes():
    if not gl_here():
        pytest.skip(nbody.info()["pipelines"]["gl:forcequad"]["reason"])
    n = 100
    with nbody.Simulation("gl:forcequad", nbody.initial_conditions(n=n)) as sim:
        stages = sim.forcequad_stages()
        name, quad = stages[0]
        assert quad.shape == (n, n, 3) and "force quad" in name
        assert [a.shape[0] for _, a in stages[1:]] == [50, 25, 13, 7, 4, 2, 1]
        np.testing.assert_allclose(stages[-1][1][0], sim.accelerations(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(quad.sum(axis=0, dtype=np.float64), sim.accelerations(), rtol=1e-4, atol=1e-5)
    with nbody.Simulation("cpu32", nbody.initial_conditions(n=n)) as sim:
        with pytest.raises(nbody.InputError):
            sim.forcequad_stages()


# ---- one option table ------------------------------------------------------------------------

def _help_defaults(command):
    """--FLAG -> the default `nbody COMMAND --help` shows (CLI11's "--dt FLOAT=0.01")."""
    import re
    text = cli(command, "--help").stdout
    return {m.group(1): m.group(2) for m in re.finditer(r"(--[a-z][a-z0-9-]*) [A-Z0-9]+=(\S+)", text)}


def _same(python_default, shown):
    if isinstance(python_default, str):
        return python_default == shown
    return float(python_default) == float(shown)


def test_python_defaults_are_the_clis():
    import inspect
    flags = {"steps": "--steps", "dt": "--dt", "softening": "--softening", "ic": "--ic", "seed": "--seed",
             "subset": "--subset", "reference": "--reference", "every": "--every", "energy_every": "--energy-every",
             "validate_n": "--validate-n"}
    shown = _help_defaults("compare")
    compare = inspect.signature(nbody.compare).parameters
    for keyword, flag in flags.items():
        assert flag in shown, f"compare --help shows no default for {flag}"
        assert _same(compare[keyword].default, shown[flag]), (keyword, compare[keyword].default, shown[flag])
    run = _help_defaults("run")
    sim = inspect.signature(nbody.Simulation.__init__).parameters
    for keyword in ("dt", "softening", "diagnostics"):
        assert _same(sim[keyword].default, run["--" + keyword]), keyword
    assert _same(nbody._D["n"], run["--bodies"]), "initial_conditions' n when none is given"


def test_step_takes_the_clis_limits():
    with nbody.Simulation("cpu32", nbody.initial_conditions(n=20)) as sim:
        with pytest.raises(nbody.InputError, match="the limit is 100000000 steps a call"):
            sim.step(10**12)
        assert sim.steps == 0, "refused before any step"
        sim.step(3)
        assert sim.steps == 3
