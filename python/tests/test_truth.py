"""Divergence against the truth: the same bodies integrated by an independent N-body code, REBOUND
(IAS15, its adaptive 15th-order integrator, as the converged trajectory; gravity="basic" with the
same Plummer softening), measured against nbody's cpu64 at three time steps and its float rungs.

Skips with the reason only when REBOUND cannot be imported (pip install rebound).
"""

import numpy as np
import pytest

import nbody

rebound = pytest.importorskip("rebound", reason="REBOUND is not installed (pip install rebound)")

N, T, EPS, SEED = 256, 1.0, 0.05, 11


@pytest.fixture(scope="module")
def truth(request):
    """IAS15's positions at T from nbody's initial conditions (synchronised velocities)."""
    bodies = nbody.initial_conditions("plummer", n=N, seed=SEED)
    sim = rebound.Simulation()
    sim.G = 1.0
    sim.softening = EPS
    sim.gravity = "basic"
    sim.integrator = "ias15"
    for (x, y, z), (vx, vy, vz), m in zip(bodies.x, bodies.v, bodies.m):
        sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz)
    sim.integrate(T, exact_finish_time=1)
    capman = request.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        print(f"\n[ REBOUND  ] version {rebound.__version__}, IAS15, N = {N}, T = {T}, softening {EPS} "
              f"({sim.steps_done} steps)")
    return bodies, np.array([[p.x, p.y, p.z] for p in sim.particles])


def distance(pipeline, bodies, dt):
    with nbody.Simulation(pipeline, bodies, dt=dt, softening=EPS) as sim:
        sim.step(round(T / dt))
        return sim.positions


def max_distance(a, b):
    return float(np.max(np.linalg.norm(a - b, axis=1)))


def test_cpu64_converges_to_ias15_at_second_order(truth):
    bodies, x_true = truth
    d = [max_distance(distance("cpu64", bodies, dt), x_true) for dt in (0.02, 0.01, 0.005)]
    ratios = [d[0] / d[1], d[1] / d[2]]
    for r in ratios:
        assert 3.6 <= r <= 4.4, f"distances to IAS15 {d}: each halving of dt should divide them by 4 ({ratios})"


def test_the_richardson_estimate_predicts_the_distance_to_ias15(truth):
    bodies, x_true = truth
    dt = 0.01
    measured = max_distance(distance("cpu64", bodies, dt), x_true)
    rows = nbody.explain(n=N, steps=round(T / dt), dt=dt, softening=EPS, seed=SEED)
    estimate = next(r for r in rows if r["factor"].startswith("time step: Richardson"))["max_distance"]
    assert abs(estimate - measured) <= 0.2 * measured, f"Richardson {estimate:.3e}, measured against IAS15 {measured:.3e}"
    verdict = next(r for r in rows if r["factor"] == "verdict")["text"]
    assert "limits accuracy" in verdict


def test_a_float_rung_is_no_farther_from_ias15_than_cpu64_plus_its_own_float_distance(truth):
    bodies, x_true = truth
    dt = 0.01
    x64 = distance("cpu64", bodies, dt)
    d64 = max_distance(x64, x_true)
    rungs = [p for p, s in nbody.info()["pipelines"].items()
             if s["available"] and p not in ("cpu64",) and not p.endswith("-fp64")]
    assert "cpu32" in rungs
    for p in rungs:
        x = distance(p, bodies, dt)
        own = max_distance(x, x64)
        assert max_distance(x, x_true) <= d64 + own + 1e-15, p


def test_a_substepped_cpu64_is_closer_to_ias15(truth):
    bodies, x_true = truth
    dt = 0.02
    plain = max_distance(distance("cpu64", bodies, dt), x_true)
    sub = max_distance(distance("cpu64/4", bodies, dt), x_true)
    assert sub < plain / 10, f"cpu64/4 {sub:.3e} against cpu64 {plain:.3e}: the error should fall about 16x"
