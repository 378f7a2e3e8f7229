#!/usr/bin/env python3
"""The Fig. 9 figures from a `nbody compare --every 1 --json` file: the max distance of each pair
from the reference over steps <= 15 and <= 100 (docs/divergence.md).
    python3 scripts/fig9_max.py compare.json"""
import json
import sys

j = json.load(open(sys.argv[1]))
pairs = sorted({p for s in j["divergence"] for p in s["pairs"] if p.startswith(j["reference"] + "|")})
print(f"n = {j['n']}, steps = {j['steps']}, reference = {j['reference']}")
for p in pairs:
    upto = {k: max((s["pairs"][p]["max"] for s in j["divergence"] if s["step"] <= k), default=float("nan"))
            for k in (15, 100)}
    print(f"{p:32s} max, steps <= 15: {upto[15]:.3e}   max, steps <= 100: {upto[100]:.3e}")
