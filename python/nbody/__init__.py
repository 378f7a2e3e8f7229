"""nbody: gravitational N-body on rungs from the 2004 shader method (gl:*) to CUDA (cuda:*) and
Barnes-Hut trees (cpu:tree, cuda:tree), cross-checked against a float64 reference (cpu64), from
Python.

The same library as the ``nbody`` command line, with NumPy arrays in and out::

    import nbody
    bodies = nbody.initial_conditions("plummer", n=4096, seed=1)
    with nbody.Simulation("gl:forcequad", bodies, dt=0.01) as sim:
        sim.step(100)
        x = sim.positions          # (n, 3) float64, read back once per step count
    result = nbody.compare(["cpu32", "gl:forcequad"], n=2048, steps=50)
    result.max_distance["cpu64|gl:forcequad"]   # per compared step

Errors: bad input (a value or a type) raises ``nbody.InputError`` (a ValueError); a rung that cannot run here raises
``nbody.Unavailable`` with the reason the CLI gives; a state that is not finite raises
``nbody.NonFinite``. Long calls release the GIL and stop between batches on Ctrl-C
(KeyboardInterrupt), leaving the objects usable, and report their progress (``set_progress``: by
default a line on stderr in a terminal or a notebook once a task has taken a second).
"""

from __future__ import annotations

import json as _json
import numbers as _numbers
import os as _os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _core, _progress
from ._args import _bool, _float, _int, _path, _str
from ._core import InputError, NonFinite, OutputError, Unavailable

__all__ = [
    "Bodies", "CompareResult", "InputError", "NonFinite", "OutputError", "Simulation", "Table", "Unavailable",
    "bench", "compare", "explain", "info", "initial_conditions", "ladder", "pipelines", "set_progress",
]

__version__ = _core.version()
_D = _core.option_defaults()  # every default, from the library's option table (the CLI's --help shows the same)

def set_progress(hook="auto") -> None:
    """Where long work reports its progress: ``"auto"`` (the default: a line on stderr, rewritten in
    place, in a terminal or a notebook once a task has taken a second; nothing elsewhere), ``None``
    (nothing), or a callable ``hook(label, done, total)``, called at a task's start, at most every
    0.2 s while it runs, and at its end. An exception the hook raises stops the work at its next
    batch (the objects stay usable) and is raised from the call."""
    if isinstance(hook, str):
        if hook != "auto":
            raise InputError(f"progress '{hook}': must be 'auto', None or a callable (label, done, total)")
        hook = _progress.Line()
    _core.set_progress(hook)


set_progress("auto")


def info() -> dict:
    """What this build has: devices, the GL renderer, the float64 engine, HDF5, and each pipeline
    available or not with the reason (the same as ``nbody info``)."""
    return _json.loads(_core.info())


def pipelines() -> List[str]:
    """Every pipeline name, in ladder order (cpu64 first)."""
    return list(_core.pipeline_names())


def _float64(name: str, a, shape) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype.kind not in "fiu":
        raise InputError(f"{name} must hold numbers, not {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim != len(shape) or any(want not in (-1, got) for want, got in zip(shape, arr.shape)):
        want = "(n, 3)" if len(shape) == 2 else "(n,)"
        raise InputError(f"{name} has shape {arr.shape}; expected {want}")
    return arr


@dataclass
class Bodies:
    """Initial conditions: positions ``x`` (n, 3), synchronised velocities ``v`` (n, 3) and masses
    ``m`` (n,), all float64; ``species`` lists (name, count, luminous) in body order."""

    x: np.ndarray
    v: np.ndarray
    m: np.ndarray
    species: List[tuple] = field(default_factory=list)
    ic: str = "arrays"

    def __post_init__(self):
        self.x = _float64("x", self.x, (-1, 3))
        self.v = _float64("v", self.v, (-1, 3))
        self.m = _float64("m", self.m, (-1,))
        if not (len(self.x) == len(self.v) == len(self.m)):
            raise InputError(f"x, v and m hold {len(self.x)}, {len(self.v)} and {len(self.m)} bodies: give the same n")
        if len(self.m) == 0:
            raise InputError("no bodies: give at least one")
        if not self.species:
            self.species = [("bodies", len(self.m), True)]
        if sum(int(k[1]) for k in self.species) != len(self.m):
            raise InputError(f"species {self.species} count {sum(int(k[1]) for k in self.species)} bodies; "
                             f"there are {len(self.m)}")

    def __len__(self) -> int:
        return len(self.m)


def initial_conditions(ic: str = _D["ic"], n: Optional[int] = None, seed: int = _D["seed"],
                       subset: str = _D["subset"]) -> Bodies:
    """A generator (plummer, uniform, shell, expand, collision; ``n`` bodies) or a file (Tipsy .bin,
    .csv, HDF5 .h5; all its bodies, or ``n`` of them by ``subset``: first | random), the same bodies
    as ``nbody run --ic IC -n N --seed SEED``."""
    ic, subset = _str("ic", ic), _str("subset", subset)
    n = None if n is None else _int("n", n, 1)
    seed = _int("seed", seed, 0)
    x, v, m, species = _core.initial_conditions(ic, _D["n"] if n is None else n, n is not None, seed, subset)
    return Bodies(np.array(x), np.array(v), m, list(species), ic)


class Simulation:
    """One rung stepping one state, as ``nbody run`` does (the same bits for the same run).

    ``Simulation(pipeline, bodies, dt, softening, diagnostics, **rung_options)`` (defaults as ``nbody run``'s):
    the bodies' velocities are staggered by one pass of the diagnostics engine (which gives E_0), then
    loaded. ``diagnostics`` is ``nbody run --diagnostics``: "all-pairs" (float64, O(N^2) a pass), "tree" (a tree
    rung's own tree, checked once against float64 all pairs on sampled bodies: ``sim.diagnostics``) or
    "auto" (the tree for a tree rung from the size ``nbody run --help`` names). Rung options:
    gl_chunk, gl_precision, cuda_block, cuda_unroll, cuda_q, cuda_bodies, cuda_split, theta, leaf_size, multipole, device.
    A context manager: leaving it frees the rung's GPU resources. One call at a time per
    simulation (another thread's call waits); gl:* simulations run on the thread that first used
    GL in this process (the GL context is current there); CPU and CUDA ones on any.
    """

    def __init__(self, pipeline: str, bodies: Bodies, dt: float = _D["dt"], softening: float = _D["softening"],
                 diagnostics: str = _D["diagnostics"], **rung_options):
        if not isinstance(bodies, Bodies):
            raise InputError("bodies must be nbody.Bodies (nbody.initial_conditions(), or Bodies(x, v, m))")
        bodies = Bodies(bodies.x, bodies.v, bodies.m, bodies.species, bodies.ic)  # checked again: fields may have changed
        self._sim = _core.Simulation(_str("pipeline", pipeline), bodies.x, bodies.v, bodies.m, _float("dt", dt),
                                     _float("softening", softening), dict(rung_options), bodies.ic,
                                     _str("diagnostics", diagnostics))

    @classmethod
    def resume(cls, path) -> "Simulation":
        """The state a checkpoint holds (``save_checkpoint`` or ``nbody run --checkpoint-every``), bit
        for bit, on the rung it was written from."""
        self = cls.__new__(cls)
        self._sim = _core.Simulation(_path("path", path))
        return self

    def step(self, k: int = 1, force: bool = False) -> "Simulation":
        """Advance k leapfrog steps (the GIL released; Ctrl-C stops between batches, the steps taken
        kept). As ``nbody run``: more than 1e8 steps, or steps whose measured pace would take over an
        hour (stopped at the first check), need ``force=True``."""
        self._sim.step(_int("k", k, 0), _bool("force", force))
        return self

    @property
    def positions(self) -> np.ndarray:
        """x_n, (n, 3) float64, a read-only view of the state read back (once per step count)."""
        return self._sim.positions()

    @property
    def velocities(self) -> np.ndarray:
        """The synchronised v_n (one pass of the diagnostics engine), (n, 3) float64."""
        return self._sim.velocities()

    @property
    def masses(self) -> np.ndarray:
        return self._sim.masses()

    def accelerations(self) -> np.ndarray:
        """a(x_n) as the rung computes it, (n, 3) float64; the state does not change."""
        return self._sim.accelerations()

    def energy(self) -> dict:
        """The step, kinetic, potential and total energy (softened potential, float64), E_0 and the relative drift."""
        return _json.loads(self._sim.energy())

    def save_checkpoint(self, path) -> None:
        """The exact state, as ``nbody run`` writes it: ``Simulation.resume`` or ``nbody run --resume`` go on."""
        self._sim.save_checkpoint(_path("path", path))

    def snapshot(self, path, format: Optional[str] = None) -> None:
        """A snapshot other tools read, synchronised velocities: hdf5 (GADGET-style) | tipsy | csv; by
        default the path's extension says which (.h5/.hdf5, .bin/.tipsy/.std, .csv)."""
        path = _path("path", path)
        if format is None:
            ext = _os.path.splitext(path)[1].lower()
            kinds = {".h5": "hdf5", ".hdf5": "hdf5", ".bin": "tipsy", ".tipsy": "tipsy", ".std": "tipsy", ".csv": "csv"}
            if ext not in kinds:
                raise InputError(f"snapshot '{path}': give format= (hdf5, tipsy or csv) or a .h5, .bin or .csv name")
            format = kinds[ext]
        self._sim.snapshot(path, _str("format", format))

    def forcequad_stages(self) -> List[tuple]:
        """gl:forcequad only (TR04-032 §3 made visible): one evaluation of the accelerations with every
        stage read back as drawn, as (name, array) pairs: the force quad, an (n, n, 3) float32 array
        whose pixel [j, i] is f_ij, then each halving reduction pass, down to the (1, n, 3) accelerations."""
        return [(name, np.asarray(a)) for name, a in self._sim.forcequad_stages()]

    @property
    def pipeline(self) -> str:
        return self._sim.pipeline

    @property
    def time(self) -> float:
        return self._sim.time

    @property
    def steps(self) -> int:
        return self._sim.steps

    @property
    def dt(self) -> float:
        return self._sim.dt

    @property
    def fp64_engine(self) -> str:
        return self._sim.fp64_engine

    @property
    def diagnostics(self) -> dict:
        """How the stagger, the energies and the synchronised velocities are computed: ``method``
        ("all-pairs" or "tree") and ``engine``; with a tree, ``check``: its potential's and force's
        error against float64 all pairs on sampled bodies, W's error and ``drift_floor`` (the relative
        drift two tree energies can show with no change of the true energy), as ``nbody run --json``."""
        return _json.loads(self._sim.diagnostics())

    def close(self) -> None:
        """Free the rung (its GPU memory, its GL objects); the object then refuses further use."""
        self._sim.close()

    @property
    def closed(self) -> bool:
        return self._sim.closed

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"step {self.steps}, t = {self.time:g}"
        return f"<nbody.Simulation {self.pipeline}: {state}>"


class Table(list):
    """Rows as dicts (the same as the CLI's JSON); ``to_pandas()`` when pandas is installed."""

    def __init__(self, rows, document: Optional[dict] = None):
        super().__init__(rows)
        self.document = document or {}

    def to_pandas(self):
        try:
            import pandas  # optional: only this method needs it
        except ImportError as e:
            raise ImportError("to_pandas() needs pandas: pip install pandas (or nbody[pandas])") from e
        return pandas.DataFrame(list(self))


@dataclass
class CompareResult:
    """``nbody compare``'s result: per compared step, each pair's max and rms distance; each
    pipeline's energy at the sampled steps and its drift; momentum changes; the configuration."""

    config: dict
    pipelines: List[str]
    skipped: Dict[str, str]
    steps: np.ndarray
    max_distance: Dict[str, np.ndarray]
    rms_distance: Dict[str, np.ndarray]
    energy_steps: np.ndarray
    energy: Dict[str, np.ndarray]
    energy_drift: Dict[str, Optional[float]]  # None where E_0 = 0 (undefined)
    momentum: Dict[str, dict]
    accel_error: Dict[str, dict]
    document: dict

    @classmethod
    def from_document(cls, d: dict) -> "CompareResult":
        div = d["divergence"]
        pairs = list(div[0]["pairs"]) if div else []
        sampled = [s for s in div if "energy" in s]
        return cls(
            config={k: d[k] for k in ("n", "steps", "dt", "softening", "ic", "seed", "subset", "reference", "fp64_engine")},
            pipelines=list(d["pipelines"]),
            skipped=dict(d["skipped"]),
            steps=np.array(d["compared_steps"], dtype=np.int64),
            max_distance={p: np.array([s["pairs"][p]["max"] for s in div]) for p in pairs},
            rms_distance={p: np.array([s["pairs"][p]["rms"] for s in div]) for p in pairs},
            energy_steps=np.array([s["step"] for s in sampled], dtype=np.int64),
            energy={p: np.array([s["energy"][p] for s in sampled]) for p in d["pipelines"]},
            energy_drift={p: e["rel_drift"] for p, e in d["energy"].items()},
            momentum=dict(d["momentum"]),
            accel_error=dict(d["accel_error"]),
            document=d,
        )

    def pairs(self) -> List[str]:
        return list(self.max_distance)


def _pipeline_list(pipelines) -> List[str]:
    if isinstance(pipelines, (str, _os.PathLike)):
        pipelines = [pipelines]
    try:
        names = [_core.canonical_name(_str("pipeline", p)) for p in pipelines]
    except TypeError:
        raise InputError(f"pipelines must be a list of names, not {pipelines!r}") from None
    if not names:
        raise InputError("pipelines is empty: name at least one, or give None for every one that runs here")
    if len(set(names)) != len(names):
        raise InputError(f"pipelines {list(pipelines)} name a pipeline twice")
    return names


def _names(pipelines: Optional[Sequence[str]], reference: str) -> tuple:
    ref = _core.canonical_name(_str("reference", reference))
    if pipelines is None:
        names, skip = list(_core.pipeline_names()), True
    else:
        names, skip = _pipeline_list(pipelines), False
    return [ref] + [p for p in names if p != ref], skip


def compare(pipelines: Optional[Sequence[str]] = None, reference: str = _D["reference"], n: Optional[int] = None,
            steps: int = _D["steps"], dt: float = _D["dt"], softening: float = _D["softening"], ic: str = _D["ic"],
            seed: int = _D["seed"], subset: str = _D["subset"], every: int = _D["every"],
            energy_every: int = _D["energy_every"], validate_n: int = _D["validate_n"], force: bool = False,
            **rung_options) -> CompareResult:
    """Pipelines in lock step from identical initial conditions against a float64 reference (as
    ``nbody compare``). Named pipelines must run here (Unavailable otherwise); ``pipelines=None``
    runs every one that can, the others in ``result.skipped`` with the reason."""
    names, skip = _names(pipelines, reference)
    n = None if n is None else _int("n", n, 1)
    doc = _core.compare(names, skip, _D["n"] if n is None else n, n is not None, _int("steps", steps, 0), _float("dt", dt),
                        _float("softening", softening), _str("ic", ic), _int("seed", seed, 0), _str("subset", subset),
                        _int("every", every, 1), _int("energy_every", energy_every, 0), _int("validate_n", validate_n, 1),
                        _bool("force", force), dict(rung_options))
    return CompareResult.from_document(_json.loads(doc))


def explain(n: Optional[int] = None, steps: int = _D["steps"], dt: float = _D["dt"], softening: float = _D["softening"],
            ic: str = _D["ic"], seed: int = _D["seed"], subset: str = _D["subset"], force: bool = False) -> Table:
    """``compare --explain``: what each float32 factor (summation order, rsqrt, FMA, storage
    precision) contributes to the divergence from cpu64; the time step's own error in the same
    units (cpu64 at dt against dt/2 and dt/4, the measured order, the Richardson estimate) and a
    verdict row saying which limits accuracy; then the chaos row (e-folding time). ``n``: a
    generator's count (default ``nbody compare``'s), or a file's bodies (default all)."""
    n = None if n is None else _int("n", n, 1)
    rows = _json.loads(_core.explain(_D["n"] if n is None else n, n is not None, _int("steps", steps, 0),
                                     _float("dt", dt), _float("softening", softening), _str("ic", ic),
                                     _int("seed", seed, 0), _str("subset", subset), _bool("force", force)))
    return Table(rows)


def bench(pipelines: Sequence[str] = tuple(_D["bench_pipelines"].split(",")),
          n: Sequence[int] = tuple(int(k) for k in _D["bench_n"].split(",")), steps: int = _D["bench_steps"],
          reps: int = _D["reps"], validate_n: int = _D["bench_validate_n"], seed: int = _D["seed"], dt: float = _D["dt"],
          softening: float = _D["softening"], force: bool = False, **rung_options) -> Table:
    """``nbody bench``: each pipeline validated against float64 at the timed N, then timed; the rows
    of the CLI's JSON (rate, bound, spread, ...). Every pipeline named must run here."""
    names = _pipeline_list(pipelines)
    if isinstance(n, _numbers.Integral) and not isinstance(n, bool):
        n = [n]
    if isinstance(n, (str, bytes)) or not hasattr(n, "__iter__"):
        raise InputError(f"n must be an integer or a list of them, not {n!r}")
    sizes = [_int("n", k, 1) for k in n]
    if not sizes:
        raise InputError("n is empty: give at least one body count")
    doc = _json.loads(_core.bench(names, sizes, _int("steps", steps, 1), _int("reps", reps, 1),
                                  _int("validate_n", validate_n, 1), _int("seed", seed, 0), _float("dt", dt),
                                  _float("softening", softening), _bool("force", force), dict(rung_options), False))
    return Table(doc["results"], doc)


def ladder(n: int = _D["ladder_n"], steps: int = _D["ladder_steps"], reps: int = _D["ladder_reps"],
           validate_n: int = _D["bench_validate_n"], seed: int = _D["seed"],
           force: bool = False, **rung_options) -> Table:
    """``nbody ladder``: every rung that runs here at one N, with the speed-up over the rung below,
    then the tree rungs beside it, each against its family's fastest float32 all-pairs rung;
    ``table.document["unavailable"]`` lists the others with the reason."""
    doc = _json.loads(_core.bench(list(_core.ladder_table_names()), [_int("n", n, 1)], _int("steps", steps, 1),
                                  _int("reps", reps, 1), _int("validate_n", validate_n, 1), _int("seed", seed, 0),
                                  _D["dt"], _D["softening"], _bool("force", force), dict(rung_options), True))
    return Table(doc["results"], doc)
