"""The arguments' checks: every value's type (the library checks every value and names the keyword
arguments itself: the module tells it that its front end is Python)."""

import numbers as _numbers
import os as _os

import numpy as np

from ._core import InputError

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


