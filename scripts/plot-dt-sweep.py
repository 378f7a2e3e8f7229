"""Draws `nbody compare --preset dt-sweep --json FILE` as the error-versus-dt figure (log-log), for
the docs: the same figure as --plot, from a JSON made on a machine without gnuplot.

Usage: python scripts/plot-dt-sweep.py SWEEP.json OUT.png "TITLE"  (matplotlib)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = json.load(open(sys.argv[1]))
fig, ax = plt.subplots(figsize=(8, 5.5))
styles = ["-o", "--s", ":^", "-.v", "-D", "--x", ":+", "-.*", "-p", "--h", ":<", "-.>"]
for k, name in enumerate(d["pipelines"]):
    ax.loglog(d["dts"], d["distance"][name], styles[k % len(styles)], label=name, lw=1.5, ms=5)
ax.set_xlabel("dt")
ax.set_ylabel(f"max distance at T = {d['time']:g} to {d['truth']['pipeline']} at dt = {d['truth']['dt']:g}")
ax.set_title(sys.argv[3] if len(sys.argv) > 3 else "nbody compare --preset dt-sweep", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8, loc="upper left")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
