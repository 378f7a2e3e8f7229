#!/usr/bin/env python3
"""The walk-through's diagrams (docs/walkthrough.md), drawn as SVG from the project's own numbers:
the force quad and its reduction (gl_pipeline/shaders/reduce_rows.frag), the tile walk of GPU Gems 3
fig. 31-4 (cuda_pipeline/gems31_kernels.cuh) and the symmetric warp-tile walk
(cuda_pipeline/symmetric_kernels.cuh). Plain Python 3, no packages.

    python3 scripts/diagrams.py [OUT_DIR (default docs/images)]
"""
import os
import sys

FONT = 'font-family="DejaVu Sans Mono, monospace"'


def svg(w, h, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">\n'
            f'<rect width="{w}" height="{h}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")


def rect(x, y, w, h, fill, stroke="#444", sw=1, extra=""):
    return f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}" {extra}/>'


def text(x, y, s, size=12, anchor="middle", fill="#111", weight="normal"):
    return (f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
            f'font-weight="{weight}" {FONT}>{s}</text>')


def arrow(x1, y1, x2, y2, colour="#c33", width=2):
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="{width}" '
            f'marker-end="url(#head)"/>')


DEFS = ('<defs><marker id="head" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#c33"/></marker></defs>')


def reduction_passes(h):
    """reduce_rows.frag: rows y and y + ceil(h/2) add; an odd h carries its last row. Returns the
    passes as lists of (output row, [input rows])."""
    passes = []
    while h > 1:
        half = (h + 1) // 2
        passes.append([(y, [y] + ([y + half] if y + half < h else [])) for y in range(half)])
        h = half
    return passes


def forcequad(n=5):
    """The n x n force quad (fragment (i, j) = f_ij, column i, row j) and its log2 reduction."""
    c = 46  # cell size
    x0, y0 = 40, 70
    body = [DEFS, text(10, 24, f"The force quad: {n} x {n} fragments, f_ij at (i, j), then the row reduction",
                       15, anchor="start", weight="bold")]
    body.append(text(10, 46, "column i = the body acted on; row j = the body acting; each pass halves the rows", 12,
                     anchor="start"))
    for j in range(n):
        for i in range(n):
            fill = "#eef" if i != j else "#ddd"
            body.append(rect(x0 + i * c, y0 + j * c, c, c, fill))
            body.append(text(x0 + i * c + c / 2, y0 + j * c + c / 2 + 5, f"f{i}{j}", 13))
    for i in range(n):
        body.append(text(x0 + i * c + c / 2, y0 + n * c + 18, f"i={i}", 11))
    for j in range(n):
        body.append(text(x0 - 16, y0 + j * c + c / 2 + 4, f"j={j}", 11))
    # The passes: each a stack of rows; colour shows which input rows were added.
    palette = ["#fdd", "#dfd", "#ddf", "#ffd", "#dff"]
    px = x0 + n * c + 70
    h = n
    rows_now = [[j] for j in range(n)]  # which original rows each current row sums
    width = 50
    body.append(text(px + 25, y0 - 14, f"h={h}", 12, weight="bold"))
    for j in range(n):
        body.append(rect(px, y0 + j * c, 50, c, palette[j % 5]))
        body.append(text(px + 25, y0 + j * c + c / 2 + 5, f"row {j}", 11))
    for k, p in enumerate(reduction_passes(n)):
        nx = px + width + 80
        half = len(p)
        new_rows = []
        for y, ins in p:
            summed = sum((rows_now[r] for r in ins), [])
            new_rows.append(summed)
            body.append(rect(nx, y0 + y * c, 74, c, "#f4f4f4"))
            body.append(text(nx + 37, y0 + y * c + c / 2 - 2, "+".join(str(s) for s in summed), 11))
            body.append(text(nx + 37, y0 + y * c + c / 2 + 12, "carried" if len(ins) == 1 else "", 9, fill="#777"))
            for r in ins:
                body.append(arrow(px + width + 2, y0 + r * c + c / 2, nx - 4, y0 + y * c + c / 2,
                                  colour="#c33" if len(ins) == 2 else "#999", width=1.5))
        body.append(text(nx + 37, y0 - 14, f"h={half}", 12, weight="bold"))
        body.append(text((px + nx + 74) / 2, y0 + n * c + 40, f"pass {k + 1}", 12))
        rows_now, px, width = new_rows, nx, 74
    w = px + 110
    body.append(text(w / 2, y0 + n * c + 70,
                     f"{n} -> " + " -> ".join(str(len(p)) for p in reduction_passes(n)) +
                     ": out row y = in rows y + (y + ceil(h/2)); an odd h carries its last row alone", 12))
    return svg(w, y0 + n * c + 90, body)


def gems31_tiles(n=16, p=4):
    """GPU Gems 3 fig. 31-4: the N x N grid, one block of p threads per p rows, walking p x p tiles
    of j left to right, each tile loaded once into shared memory."""
    c = 22
    x0, y0 = 60, 80
    blocks = n // p
    body = [DEFS, text(10, 26, f"GPU Gems 3 fig. 31-4: N = {n}, p = {p} threads per block", 15, anchor="start",
                       weight="bold"),
            text(10, 48, "row i = a thread (body i); a block's p threads walk tiles of p bodies j", 12, anchor="start"),
            text(10, 64, "each tile is loaded once into shared memory, then every thread sums it", 12, anchor="start")]
    shades = ["#fde0dd", "#e0ecf4", "#e5f5e0", "#fff7bc"]
    for bi in range(blocks):
        for t in range(blocks):
            fill = shades[bi % 4] if bi == 1 else "#f7f7f7"
            body.append(rect(x0 + t * p * c, y0 + bi * p * c, p * c, p * c, fill, "#333", 1.5))
            if bi == 1:
                body.append(text(x0 + t * p * c + p * c / 2, y0 + bi * p * c + p * c / 2 + 6, f"tile {t + 1}", 13,
                                 weight="bold"))
    for k in range(n + 1):
        body.append(f'<line x1="{x0}" y1="{y0 + k * c}" x2="{x0 + n * c}" y2="{y0 + k * c}" stroke="#bbb" stroke-width="0.5"/>')
        body.append(f'<line x1="{x0 + k * c}" y1="{y0}" x2="{x0 + k * c}" y2="{y0 + n * c}" stroke="#bbb" stroke-width="0.5"/>')
    yb = y0 + 1 * p * c + p * c / 2
    for t in range(blocks - 1):
        body.append(arrow(x0 + t * p * c + p * c - 18, yb + 22, x0 + (t + 1) * p * c + 14, yb + 22))
    body.append(text(x0 - 8, yb + 4, "block 1", 11, anchor="end"))
    body.append(text(x0 + n * c / 2, y0 + n * c + 22, "j (bodies acting) ->", 12))
    body.append(text(10, y0 + n * c + 44,
                     f"every block does the same walk at once: {blocks} blocks x {blocks} tiles = N^2 interactions", 12,
                     anchor="start"))
    return svg(max(x0 + n * c + 40, 600), y0 + n * c + 60, body)


def symmetric_tiles(t=6):
    """cuda:symmetric: T x T warp tiles of 32K bodies; only the upper triangle J >= I is computed;
    each off-diagonal pair gives f_ij to I and -f_ij to J. Warps take equal contiguous ranges of the
    T(T+1)/2 pairs in row-major order."""
    c = 48
    x0, y0 = 70, 100
    pairs = t * (t + 1) // 2
    warps = 4
    colours = ["#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4"]
    body = [DEFS, text(10, 26, f"cuda:symmetric: {t} x {t} warp tiles of 32K bodies", 15, anchor="start", weight="bold"),
            text(10, 48, f"upper triangle only ({pairs} of {t * t} tile pairs): f_ji = -f_ij", 12, anchor="start"),
            text(10, 64, f"{warps} warps take equal, contiguous, row-major ranges of the pairs (w0..w{warps - 1})", 12,
                 anchor="start")]
    k = 0
    for i in range(t):
        for j in range(t):
            if j < i:
                body.append(rect(x0 + j * c, y0 + i * c, c, c, "#fafafa", "#ddd"))
                body.append(text(x0 + j * c + c / 2, y0 + i * c + c / 2 + 4, "-", 12, fill="#bbb"))
                continue
            # The kernel's split: warp w takes pairs [pairs * w / warps, pairs * (w + 1) / warps).
            w = next(v for v in range(warps) if pairs * v // warps <= k < pairs * (v + 1) // warps)
            body.append(rect(x0 + j * c, y0 + i * c, c, c, colours[w], "#333", 1))
            label = "diag" if i == j else f"{k}"
            body.append(text(x0 + j * c + c / 2, y0 + i * c + c / 2 - 2, label, 12, weight="bold"))
            body.append(text(x0 + j * c + c / 2, y0 + i * c + c / 2 + 13, f"w{w}", 10, fill="#333"))
            k += 1
    for i in range(t):
        body.append(text(x0 - 10, y0 + i * c + c / 2 + 4, f"I={i}", 11, anchor="end"))
        body.append(text(x0 + i * c + c / 2, y0 - 6, f"J={i}", 11))
    leg = y0 + t * c + 26
    body.append(text(x0, leg, "off-diagonal pair: 32 rotation steps, __shfl_sync moves the J bodies", 12, anchor="start"))
    body.append(text(x0, leg + 18, "and their sums one lane a step; J sums go home by atomicAdd;", 12, anchor="start"))
    body.append(text(x0, leg + 36, "diagonal pair (diag): one-sided, every i against every j", 12, anchor="start"))
    return svg(x0 + t * c + 260, leg + 50, body)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "images")
    os.makedirs(out, exist_ok=True)
    for name, content in [("forcequad-reduction.svg", forcequad()), ("gems31-tiles.svg", gems31_tiles()),
                          ("symmetric-tiles.svg", symmetric_tiles())]:
        path = os.path.join(out, name)
        with open(path, "w") as f:
            f.write(content)
        print(path)


if __name__ == "__main__":
    main()
