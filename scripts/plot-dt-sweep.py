"""Draws `nbody compare --preset dt-sweep --json FILE` as the error-versus-dt figure (log-log), for
the docs: the same figure as --plot, from a JSON made on a machine without gnuplot. Each rung's
distance to the converged trajectory is solid (the reference wide and black: the time step's own
error); each float rung's distance to the reference at the same dt, is dashed in the rung's colour
where the JSON has it: an all-pairs rung's rounding alone, a tree's opening angle. The colours are --plot's (no yellow on white).

Usage: python3 scripts/plot-dt-sweep.py SWEEP.json OUT.png ["TITLE"]  (matplotlib)
The default title names the run: n, T, the dts, eps, ic and seed.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# --plot's palette (driver/compare_plot.cpp): the reference black, then these in the JSON's order.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#882255",
           "#8C510A", "#332288", "#44AA99", "#AA4499", "#7F7F7F"]
MARKERS = ["s", "^", "v", "D", "o", "p", "h", "<", ">", "*", "P", "X"]

d = json.load(open(sys.argv[1]))
reference = d["truth"]["pipeline"]
dts = d["dts"]
others = [name for name in d["pipelines"] if name != reference]


def look(name):
    if name == reference:
        return "#000000", "o"
    k = others.index(name)
    return PALETTE[k % len(PALETTE)], MARKERS[k % len(MARKERS)]


def same_as(series, name):
    """ (on OTHER's curve) when an earlier rung's series is equal at every dt: the same distances to
    the truth, not the same trajectories, which the sweep does not compare."""
    for other in d["pipelines"]:
        if other == name:
            return ""
        if other in series and series[other] == series[name]:
            return f" (on {other}'s curve)"
    return ""


def positive(values):
    return [(t, v) for t, v in zip(dts, values) if v > 0]


steps = round(d["time"] / dts[0])
ic = os.path.basename(d["ic"]) if os.path.exists(d["ic"]) else d["ic"]
title = sys.argv[3] if len(sys.argv) > 3 else (
    f"nbody compare --preset dt-sweep: n={d['n']}, T={d['time']:g} (steps={steps} of dt={dts[0]:g} to "
    f"{steps << (len(dts) - 1)} of dt={dts[-1]:g}), eps={d['softening']:g}, ic={ic}, seed={d['seed']}")

fig, ax = plt.subplots(figsize=(11, 6.4))
for name in d["pipelines"]:
    colour, marker = look(name)
    points = positive(d["distance"][name])
    if points:
        ax.loglog(*zip(*points), "-" + marker, color=colour, lw=5 if name == reference else 1.5,
                  ms=7 if name == reference else 5, label=name + same_as(d["distance"], name),
                  zorder=1 if name == reference else 2)
rounding = d.get("rounding", {})
for name in d["pipelines"]:
    if name in rounding and positive(rounding[name]):
        ax.loglog(*zip(*positive(rounding[name])), "--", color=look(name)[0], lw=1.5,
                  label=name + " rounding" + same_as(rounding, name))
opening_angle = d.get("opening_angle", {})
for name in d["pipelines"]:
    if name in opening_angle and positive(opening_angle[name]):
        ax.loglog(*zip(*positive(opening_angle[name])), "--", color=look(name)[0], lw=1.5,
                  label=name + " opening angle" + same_as(opening_angle, name))
floors = ("rounding" if rounding else "") + ("; " if rounding and opening_angle else "") + \
         ("a tree's opening angle" if opening_angle else "")
ax.set_xlim(dts[-1] / 1.25, dts[0] * 1.25)
ax.set_xlabel("dt")
ax.set_ylabel(f"max distance at T = {d['time']:g} to {reference} at dt = {d['truth']['dt']:g}")
fig.suptitle(title, fontsize=11)
ax.grid(True, which="major", alpha=0.3)
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0,
          title=f"dashed: to {reference} at the same dt ({floors})" if floors else None, title_fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
