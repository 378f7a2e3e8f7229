// Drawing for the page: the bodies, the divergence chart (TR04-032 Fig. 9 on log axes) and the
// force-quad stages as images. Pure functions of the arrays nbody.wasm hands over; no physics here.
'use strict';

const Draw = (() => {
  // Writes `text` centred on a canvas: what the page shows instead of a blank one.
  function message(canvas, text) {
    const g = canvas.getContext('2d');
    g.fillStyle = '#000';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.fillStyle = '#ffd7dc';
    g.font = '15px system-ui, sans-serif';
    const words = String(text).split(' ');
    const lines = [];
    let line = '';
    for (const w of words) {
      if (g.measureText(line + ' ' + w).width > canvas.width - 40 && line) { lines.push(line); line = w; }
      else line = line ? line + ' ' + w : w;
    }
    lines.push(line);
    lines.forEach((l, k) => g.fillText(l, 20, canvas.height / 2 - 10 * lines.length + 20 * k));
  }

  // A radius that frames most bodies: 1.6 x the 90th percentile of |(x, y)| about the centre of mass.
  function frameRadius(xyz) {
    const n = xyz.length / 3;
    let cx = 0, cy = 0;
    for (let i = 0; i < n; ++i) { cx += xyz[3 * i]; cy += xyz[3 * i + 1]; }
    cx /= n; cy /= n;
    const r = new Float64Array(n);
    for (let i = 0; i < n; ++i) r[i] = Math.hypot(xyz[3 * i] - cx, xyz[3 * i + 1] - cy);
    r.sort();
    return { cx, cy, radius: Math.max(1.6 * r[Math.floor(0.9 * (n - 1))], 1e-6) };
  }

  // The bodies seen along z, each one pixel (2 x 2 below 4096 bodies), brighter where they crowd.
  function bodies(canvas, xyz, frame) {
    const g = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height;
    const img = g.createImageData(w, h);
    const px = img.data;
    const scale = 0.5 * Math.min(w, h) / frame.radius;
    const n = xyz.length / 3, size = n < 4096 ? 2 : 1;
    const plot = (x, y) => {
      if (x < 0 || y < 0 || x >= w || y >= h) return;
      const k = 4 * (y * w + x);
      px[k] = Math.min(255, px[k] + 170);
      px[k + 1] = Math.min(255, px[k + 1] + 200);
      px[k + 2] = Math.min(255, px[k + 2] + 255);
    };
    for (let i = 0; i < n; ++i) {
      const x = Math.round(w / 2 + (xyz[3 * i] - frame.cx) * scale);
      const y = Math.round(h / 2 - (xyz[3 * i + 1] - frame.cy) * scale);
      for (let dy = 0; dy < size; ++dy) for (let dx = 0; dx < size; ++dx) plot(x + dx, y + dy);
    }
    for (let k = 3; k < px.length; k += 4) px[k] = 255;  // opaque black where no body is
    g.putImageData(img, 0, 0);
  }

  // Largest distance per step on log-log axes, with the paper's bound and the project's goal
  // (fig9: the library's {paper, goal}, each [[until step, distance], ...]).
  function chart(canvas, points, lastStep, fig9) {
    const g = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height, left = 52, bottom = 28, top = 10, right = 10;
    g.fillStyle = '#000';
    g.fillRect(0, 0, w, h);
    const xmax = Math.max(100, lastStep);
    const ymin = 1e-9, ymax = 10;
    const X = s => left + (w - left - right) * Math.log10(Math.max(s, 1)) / Math.log10(xmax);
    const Y = d => top + (h - top - bottom) * (Math.log10(ymax) - Math.log10(Math.min(Math.max(d, ymin), ymax))) /
                   (Math.log10(ymax) - Math.log10(ymin));
    g.strokeStyle = '#2a2f3b';
    g.fillStyle = '#8a90a0';
    g.font = '11px system-ui, sans-serif';
    for (let e = -9; e <= 1; e += 2) {
      g.beginPath(); g.moveTo(left, Y(10 ** e)); g.lineTo(w - right, Y(10 ** e)); g.stroke();
      g.fillText('1e' + e, 8, Y(10 ** e) + 4);
    }
    for (let s = 1; s <= xmax; s *= 10) {
      g.beginPath(); g.moveTo(X(s), top); g.lineTo(X(s), h - bottom); g.stroke();
      g.fillText(String(s), Math.min(X(s) - 4, w - right - g.measureText(String(s)).width), h - 10);
    }
    g.fillText('step', 8, h - 10);  // left of the first tick label
    g.fillText('largest distance', left + 4, top + 12);
    const bound = (steps, colour, dash) => {  // [[until step, distance], ...] as a staircase
      g.strokeStyle = colour; g.setLineDash(dash); g.beginPath();
      let from = 1;
      for (const [until, d] of steps) { g.moveTo(X(from), Y(d)); g.lineTo(X(until), Y(d)); from = until; }
      g.stroke(); g.setLineDash([]);
    };
    bound(fig9.paper, '#e0af68', [6, 4]);  // TR04-032 Fig. 9
    bound(fig9.goal, '#9ece6a', [2, 3]);   // the goal here (compare --preset tr04-fig9)
    g.strokeStyle = '#7aa2f7';
    g.lineWidth = 1.5;
    g.beginPath();
    points.forEach(([s, d], k) => (k ? g.lineTo(X(s), Y(d)) : g.moveTo(X(s), Y(d))));
    g.stroke();
    g.lineWidth = 1;
  }

  // A colour ramp from dark blue through purple and orange to yellow (plasma-like), t in [0, 1].
  function ramp(t) {
    const stops = [[13, 8, 135], [84, 2, 163], [139, 10, 165], [185, 50, 137], [219, 92, 104],
                   [244, 136, 73], [254, 188, 43], [240, 249, 33]];
    const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
    const k = Math.min(Math.floor(x), stops.length - 2), f = x - k;
    return stops[k].map((c, i) => Math.round(c + f * (stops[k + 1][i] - c)));
  }

  // A stage (width x height RGBA floats, f_ij or partial sums in xyz) as |xyz| on a log scale, row 0
  // at the bottom as GL draws it, `scale` screen pixels per texel. Returns the range shown.
  function stage(canvas, rgba, width, height, scale) {
    const mag = new Float64Array(width * height);
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < width * height; ++k) {
      const m = Math.hypot(rgba[4 * k], rgba[4 * k + 1], rgba[4 * k + 2]);
      mag[k] = m > 0 ? Math.log10(m) : -Infinity;
      if (m > 0) { lo = Math.min(lo, mag[k]); hi = Math.max(hi, mag[k]); }
    }
    const tile = document.createElement('canvas');
    tile.width = width; tile.height = height;
    const tg = tile.getContext('2d');
    const img = tg.createImageData(width, height);
    for (let y = 0; y < height; ++y)
      for (let x = 0; x < width; ++x) {
        const m = mag[y * width + x];
        const c = m === -Infinity ? [0, 0, 0] : ramp(hi > lo ? (m - lo) / (hi - lo) : 1);
        const o = 4 * ((height - 1 - y) * width + x);
        img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255;
      }
    tg.putImageData(img, 0, 0);
    const g = canvas.getContext('2d');
    g.fillStyle = '#000';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.imageSmoothingEnabled = scale < 1;
    const dh = height * scale;
    g.drawImage(tile, 0, canvas.height - dh, width * scale, dh);
    return { lo, hi };
  }

  // One workgroup's sums (rows x tiles values, row by row: |a_i| after each tile) as a picture:
  // invocation i from the top, tile k from the left, each magnitude against the row's final |a_i|
  // on a ramp (dark: off by 100% or more, yellow: there); tiles after `upto` are left black (not yet loaded),
  // tile `upto` is outlined (the one in workgroup memory now).
  function workgroup(canvas, sums, rows, tiles, upto) {
    const g = canvas.getContext('2d');
    g.fillStyle = '#000';
    g.fillRect(0, 0, canvas.width, canvas.height);
    const w = canvas.width / tiles, h = canvas.height / rows;
    for (let i = 0; i < rows; ++i) {
      const last = sums[i * tiles + tiles - 1];
      for (let k = 0; k <= Math.min(upto, tiles - 1); ++k) {
        const off = last > 0 ? Math.abs(sums[i * tiles + k] - last) / last : 0;  // a body alone: a = 0 throughout
        const c = ramp(1 - Math.min(1, off));
        g.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
        g.fillRect(k * w, i * h, Math.ceil(w), Math.ceil(h));
      }
    }
    if (upto < tiles) {
      g.strokeStyle = '#fff';
      g.lineWidth = 2;
      g.strokeRect(upto * w + 1, 1, Math.max(w - 2, 1), canvas.height - 2);
    }
  }

  return { message, frameRadius, bodies, chart, stage, workgroup };
})();
