"""The arguments' checks: every value's type, and the library's messages in the keyword arguments'
names (the library names the CLI's options)."""

import functools as _functools
import numbers as _numbers
import os as _os
import re as _re

import numpy as np

from ._core import InputError, NonFinite

# The library's messages name the CLI's options; a Python user gave keyword arguments.
_NAMES = {"--bodies": "n", "--dt": "dt", "--softening": "softening", "--ic": "ic", "--seed": "seed",
          "--subset": "subset", "--steps": "steps", "--every": "every", "--energy-every": "energy_every",
          "--validate-n": "validate_n", "--reference": "reference", "--pipelines": "pipelines", "--force": "force",
          "--reps": "reps", "--device": "device", "--gl-chunk": "gl_chunk", "--gl-precision": "gl_precision",
          "--cuda-block": "cuda_block", "--cuda-unroll": "cuda_unroll", "--cuda-q": "cuda_q",
          "--cuda-bodies": "cuda_bodies", "--cuda-split": "cuda_split", "--snapshot-format": "format"}


def _python_names(f):
    @_functools.wraps(f)
    def wrapped(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except (InputError, NonFinite) as e:
            text = _re.sub(r"--[a-z][a-z0-9-]*", lambda m: _NAMES.get(m.group(0), m.group(0)), str(e))
            raise type(e)(text) from None
    return wrapped


def _int(name, v, low=None):
    if isinstance(v, bool) or not isinstance(v, _numbers.Integral):
        raise InputError(f"{name} must be an integer, not {v!r}")
    v = int(v)
    if low is not None and v < low:
        raise InputError(f"{name} = {v}: must be >= {low}")
    if v >= 2**63:
        raise InputError(f"{name} = {v} is out of range")
    return v


def _float(name, v):
    if isinstance(v, bool) or not isinstance(v, _numbers.Real):
        raise InputError(f"{name} must be a number, not {v!r}")
    return float(v)


def _str(name, v):
    if isinstance(v, _os.PathLike):
        v = _os.fspath(v)
    if not isinstance(v, str):
        raise InputError(f"{name} must be a string, not {v!r}")
    return v


def _bool(name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, not {v!r}")
    return bool(v)


def _path(name, v):
    if not isinstance(v, (str, _os.PathLike)):
        raise InputError(f"{name} must be a path (str or os.PathLike), not {v!r}")
    return _os.fspath(v)


