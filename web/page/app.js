// The page's controller: reads the form, calls nbody.wasm (info() and the page's Session,
// web/src/session.hpp) and shows what comes back. Every number on the page comes from the library;
// this file only asks and draws. window.nbodyPage is also what the browser tests drive
// (tests/web/test_page.py). The session's calls are asynchronous (a WebGPU rung waits for the GPU
// inside them), so each of page.start, step, energy, accelerations, showStages and bench returns a
// promise, and the calls go to nbody.wasm one at a time.
'use strict';

const $ = id => document.getElementById(id);

const page = {
  module: null, info: null, session: null,
  running: false, busy: false, frame: null, points: [], started: null,
  firstStepMs: null,  // ms from navigation to the end of the first step
  timings: {},        // ms from navigation: module (wasm instantiated), info, started, first step
  stages: [], stageIndex: 0,
  pending: Promise.resolve(),  // the last button's work
  measuring: false,            // the ladder is being measured: the controls wait
  workgroup: null,             // one workgroup's sums, as showWorkgroup() asked for them
  h100: {},                    // rung -> its H100 figure of docs/ladder.md
};
window.nbodyPage = page;

function status(text, kind = '') {
  const s = $('status');
  s.textContent = text;
  s.className = 'status' + (kind ? ' ' + kind : '');
}

// A failure from the library ({"error", "kind"}): said in the banner and on the bodies' canvas.
function fail(result, what) {
  page.running = false;
  const text = `${what}: ${result.error}`;
  status(text, 'error');
  Draw.message($('view'), text);
  buttons();
  return result;
}

// The form's fields that go to Session.start(), by the library's names; the numbers among them.
const FIELDS = ['pipeline', 'n', 'ic', 'subset', 'seed', 'dt', 'softening', 'gl_chunk', 'webgpu_p', 'webgpu_k',
                'theta', 'leaf_size'];
const WORDS = ['pipeline', 'ic', 'subset'];
const NUMBERS = FIELDS.filter(k => !WORDS.includes(k));

// One call of the session (web/src/page_api.cpp, nbody_call): its JSON reply, or a failure of the
// call itself (a trap) as one. Calls wait for the one before: nbody.wasm is suspended while a WebGPU
// rung waits for the GPU, and must not be entered meanwhile.
let queue = Promise.resolve();
function ask(method, ...args) {
  const call = queue.then(async () => {
    try {
      const text = await page.module.ccall('nbody_call', 'string', ['string', 'string'],
                                           [method, JSON.stringify(args)], { async: true });
      return JSON.parse(text);
    } catch (e) {
      return { error: `nbody.wasm failed: ${e}`, kind: 'Error' };
    }
  });
  queue = call;
  return call;
}

function buttons() {
  const live = !!page.started && !page.measuring;  // the ladder's measurement owns the session meanwhile
  $('start').disabled = !!page.measuring;
  $('measure-ladder').disabled = !!page.measuring;
  $('pause').disabled = !live;
  $('pause').textContent = page.running ? 'Pause' : 'Run';
  $('step').disabled = !live || page.running;
  $('show-stages').disabled = !live;
  $('bench').disabled = !live;
  $('show-workgroup').disabled = !live;
  $('prev-stage').disabled = page.stageIndex <= 0;
  $('next-stage').disabled = page.stageIndex >= page.stages.length - 1;
}

// The form as the spec Session.start() reads (the page's field names: n, gl_chunk, ...).
function specFromForm() {
  const spec = { reference: $('reference').checked };
  for (const k of FIELDS)
    spec[k] = WORDS.includes(k) ? $(k).value : $(k).value.trim() === '' ? null : Number($(k).value);
  return spec;
}

// Nothing of an earlier run stays on the page: the chart, the texts, the stages.
function clearViews() {
  page.running = false;
  page.started = null;
  page.points = [];
  page.stages = [];
  page.stageIndex = 0;
  page.energyAt = 0;
  page.workgroup = null;
  for (const id of ['step-label', 'rate', 'live-rate', 'energy', 'stage-name', 'stage-note', 'bench-result', 'tile-name'])
    $(id).textContent = '';
  $('next-tile').disabled = $('all-tiles').disabled = true;
  Draw.message($('workgroup'), 'Press "Show the first workgroup\'s tiles": the first p bodies (one workgroup of ' +
               'p invocations) and what each sums, tile by tile, from the current positions.');
  Draw.chart($('chart'), [], 0, page.info.fig9);
  Draw.message($('stage'), 'Press "Draw this step\'s force quad": gl:forcequad draws the n x n force quad of ' +
               'the current positions and halves it, pass by pass, into the accelerations (n up to ' +
               `${page.info.max_stage_bodies}).`);
}

// What the URL asks for: `given`, its values of the form's fields, as given (a value the form could
// not hold, an unknown pipeline or n=abc, reaches the library, which names it); `unknown`, what is
// wrong with every other parameter but run; `run`: false for run=0.
function readUrl() {
  const params = new URLSearchParams(location.search);
  const given = {};
  for (const k of FIELDS) {
    if (!params.has(k)) continue;
    const v = params.get(k);
    given[k] = WORDS.includes(k) || v.trim() === '' || !isFinite(Number(v)) ? v : Number(v);
  }
  const unknown = [...new Set(params.keys())].filter(k => k !== 'run' && !FIELDS.includes(k))
    .map(k => `${k}=${params.get(k)}: the page has no parameter ${k} (it takes ${[...FIELDS, 'run'].join(', ')})`);
  return { given, unknown, run: params.get('run') !== '0' };
}

// What the page refuses of its URL, as the command line refuses options: a parameter it does not
// take, and a rung option away from its default that the rung does not take (the library would run
// without it). The form sends every rung's fields whichever rung is chosen: only the URL's values
// are judged here. `r` is the library's reply to the start (its rung's canonical name, or its refusal).
function urlRefusals(url, spec, r) {
  const out = [...url.unknown];
  const rung = page.info.rungs.find(x => x.name === (r.error ? spec.pipeline : r.pipeline));
  if (!rung) return out;  // an unknown pipeline: the library named it
  for (const [k, v] of Object.entries(url.given)) {
    const takers = page.info.rungs.filter(x => x.options.includes(k)).map(x => x.name);
    if (!takers.length || rung.options.includes(k) || typeof v !== 'number' || v === page.info.defaults[k]) continue;
    if (r.error && r.error.startsWith(`${k} `)) continue;  // the library refused the value itself
    out.push(`${k} ${v}: ${takers.join(', ')} take${takers.length === 1 ? 's' : ''} it, not ${rung.name} ` +
             '(it would be ignored)');
  }
  return out;
}

// Starts the spec's run (`url`: what the URL asked for, when the spec holds it: its refusals are
// named with the library's, and nothing runs).
async function start(spec, run = true, url = null) {
  clearViews();
  for (const k of ['n', 'seed', 'dt', 'softening']) if (spec[k] === undefined) spec[k] = null;
  let r = await ask('start', spec);
  const refused = url ? urlRefusals(url, spec, r) : [];
  if (refused.length) r = { error: [...refused, ...(r.error ? [r.error] : [])].join('; '), kind: 'InputError' };
  if (r.error) {  // the form shows the values refused (a URL's included), not the defaults
    for (const k of NUMBERS) if (spec[k] !== null && spec[k] !== undefined) $(k).value = spec[k];
    for (const k of WORDS)
      if ([...$(k).options].some(o => o.value === spec[k])) $(k).value = spec[k];
    return fail(r, 'cannot start');
  }
  page.started = r;
  // The form shows what runs (the library's resolved values: n of a file, the canonical name).
  for (const k of FIELDS) $(k).value = r[k];
  $('reference').checked = !!r.reference || r.pipeline === 'cpu64';
  page.frame = Draw.frameRadius(page.session.drawPositions());
  const said = `${r.pipeline}: ${r.n} bodies (${r.ic}, seed ${r.seed}), dt ${r.dt}, softening ${r.softening}` +
               (r.reference ? '; cpu64 in float64 beside it' : '') + `; set-up ${(r.setup_s * 1e3).toFixed(0)} ms`;
  if (r.warnings.length) status(`${said}. Warning: ${r.warnings.join(' ')}`, 'warn');
  else status(said);
  $('energy').textContent = `E\u2080 = ${r.energy0.toPrecision(8)}.`;
  draw(0);
  page.running = run;
  buttons();
  return r;
}

function draw(step) {
  Draw.bodies($('view'), page.session.drawPositions(), page.frame);
  $('step-label').textContent = `step ${step}`;
  Draw.chart($('chart'), page.points, step, page.info.fig9);
}

async function step(count) {
  const run = page.started;
  const r = await ask('step', count);
  if (page.started !== run || !run) return r;  // another start came meanwhile: this step was of the run before
  if (r.error) return fail(r, 'step failed');
  if (page.firstStepMs === null) page.firstStepMs = page.timings.firstStep = performance.now();
  if (r.divergence) page.points.push([r.step, r.divergence.max]);
  draw(r.step);
  const ref = r.reference_ms_per_step !== undefined
    ? `; cpu64 beside it ${r.reference_ms_per_step.toFixed(2)} ms/step` : '';
  $('rate').textContent = `${run.pipeline}: ${r.ms_per_step.toFixed(2)} ms/step` + ref;
  $('live-rate').textContent = `${run.pipeline} at n = ${run.n}: ` +
    `${r.interactions_per_s.toExponential(3)} interactions/s (N\u00b2 per step; ${r.timer})`;
  const every = run.energy_every;  // 50 steps, whatever the steps per frame; 0: on pause only
  if (every && Math.floor(r.step / every) > page.energyAt) {
    page.energyAt = Math.floor(r.step / every);
    await energy();
  }
  return r;
}

async function energy() {
  const run = page.started;
  const e = await ask('energy');
  if (page.started !== run || !run) return e;
  if (e.error) return fail(e, 'energy');
  const drift = e.relative_drift === null ? e.relative_drift_undefined : e.relative_drift.toExponential(2);
  $('energy').textContent = `E\u2080 = ${e.initial.toPrecision(8)}; at step ${e.step} E = ` +
    `${e.total.toPrecision(8)} (relative drift ${drift}).`;
  return e;
}

async function tick() {
  try {
    if (page.running && !page.busy && !page.measuring) {
      page.busy = true;
      await step(Math.max(1, Math.min(100, Number($('per-frame').value) || 1)));
    }
  } finally {
    page.busy = false;
    requestAnimationFrame(tick);
  }
}

// ---- computing is drawing: gl:forcequad's stages ----------------------------------------------

const counterparts = {
  'force quad': 'CUDA counterpart: the N x N grid of GPU Gems 3 fig. 31-4. A thread walks its body\'s row ' +
    'of it tile by tile and never stores it; here every pixel is written to a texture.',
  'reduction pass': 'CUDA counterpart: per-thread accumulation in registers. Each pass draws half as many ' +
    'rows, each the sum of two; log\u2082(n) passes leave one row: the accelerations.',
};

async function showStages(index) {
  const list = await ask('stages');
  if (list.error) {
    page.stages = [];
    status(`force quad stages: ${list.error}`, 'warn');
    Draw.message($('stage'), list.error);
    buttons();
    return list;
  }
  page.stages = list;
  showStage(Math.min(index, list.length - 1));
  return list;
}

function showStage(k) {
  page.stageIndex = k;
  const s = page.stages[k];
  const side = Math.max(page.stages[0].width, page.stages[0].height);
  const scale = $('stage').width / side;  // every stage at the force quad's scale: the halving shows
  const range = Draw.stage($('stage'), page.session.stageData(k), s.width, s.height, scale);
  $('stage-name').textContent = `stage ${k + 1} of ${page.stages.length}: ${s.name} (${s.width} x ${s.height})`;
  const kind = s.name.startsWith('force quad') ? 'force quad' : 'reduction pass';
  $('stage-note').textContent = `|xyz| of each texel on a log scale, ${(10 ** range.lo).toExponential(1)} ` +
    `(dark) to ${(10 ** range.hi).toExponential(1)} (yellow); black: zero; row 0 at the bottom. ${counterparts[kind]}`;
  buttons();
}

// ---- computing in workgroups: one workgroup's tiles --------------------------------------------

async function showWorkgroup() {
  const p = page.started.webgpu_p;
  const r = await ask('workgroup', p);
  if (r.error) {
    status(`workgroup: ${r.error}`, 'warn');
    return r;
  }
  page.workgroup = { ...r, sums: Array.from(page.module.workgroupData()), upto: 0 };
  showTile(0);
  return r;
}

function showTile(k) {
  const w = page.workgroup;
  w.upto = Math.min(k, w.tiles);
  Draw.workgroup($('workgroup'), w.sums, w.rows, w.tiles, w.upto);
  const bodies = Math.min(w.p, w.n - w.upto * w.p), pad = w.p - bodies;
  const plural = (k, what) => `${k} ${what}${k === 1 ? '' : 's'}`;
  $('tile-name').textContent = w.upto < w.tiles
    ? `tile ${w.upto + 1} of ${w.tiles}: bodies j = ${w.upto * w.p}..${w.upto * w.p + bodies - 1} in workgroup ` +
      `memory${pad ? ` and ${pad} of zero mass (padding past n)` : ''}; each invocation adds ` +
      `${plural(w.p, 'interaction')} to its sum`
    : `${w.tiles === 1 ? 'the one tile' : `all ${w.tiles} tiles`} summed: each of the ${plural(w.rows, 'invocation')} ` +
      `with a body writes its acceleration once`;
  $('next-tile').disabled = w.upto >= w.tiles;
  $('all-tiles').disabled = w.upto >= w.tiles;
}

// ---- the ladder measured here ---------------------------------------------------------------------

// The all-pairs rungs this browser runs, in the ladder's order (the ones off it after, in the
// registry's), cpu64 left out: it is the reference every row is checked against.
function ladderHere() {
  const place = r => (r.ladder >= 0 ? r.ladder : 1000 + page.info.rungs.indexOf(r));
  return page.info.rungs.filter(r => r.available && r.name !== 'cpu64' && r.method === 'all pairs')
    .sort((a, b) => place(a) - place(b))
    .map(r => r.name);
}

async function measureLadder(n, steps = 3, reps = 3) {
  page.running = false;
  page.measuring = true;
  buttons();
  const keep = specFromForm(), rows = [], body = $('ladder-here').tBodies[0];
  body.replaceChildren();
  $('ladder-n').value = n;
  for (const name of ladderHere()) {
    const tr = body.insertRow();
    tr.insertCell().textContent = name;
    const cell = tr.insertCell();
    cell.textContent = 'validating, then timing\u2026';
    // The bench's own bodies: a Plummer sphere of n from the form's seed (whatever ic the form holds).
    const started = await ask('start', { ...keep, pipeline: name, n: n, ic: 'plummer', reference: false });
    const b = started.error ? started : await ask('bench', steps, reps);
    const below = rows.length ? rows[rows.length - 1] : null;
    const row = { rung: name, ...b };
    if (b.error || b.status !== 'ok') {
      cell.textContent = b.error || `${b.status}: ${b.failure}`;
    } else {
      row.speedup = below && below.interactions_per_s ? b.interactions_per_s / below.interactions_per_s : null;
      cell.textContent = b.interactions_per_s.toExponential(3);
      tr.insertCell().textContent = b.ms_per_step.toFixed(2);
      tr.insertCell().textContent = row.speedup ? `${row.speedup.toFixed(2)}x` : '';
      tr.insertCell().textContent = b.timer.split(' (')[0];  // the reason in brackets is in the note
      tr.insertCell().textContent = (page.h100 || {})[name] || (name.startsWith('webgpu:') ? 'browser only' : '');
    }
    rows.push(row);
  }
  const timers = [...new Set(rows.filter(r => r.timer).map(r => r.timer))].join('; ');
  $('ladder-note').textContent = `n = ${n}, ${reps} timed repetitions of ${steps} steps each (median); timers: ${timers}; ` +
    `${navigator.userAgent.match(/Chrom\S+|Firefox\S+|Safari\S+/) || 'this browser'}, ` +
    `WebGPU: ${page.info.webgpu || page.info.webgpu_error}; WebGL2: ${page.info.gl || page.info.gl_error}.`;
  page.measuring = false;
  await start(keep, false);  // the run the form held, back at its step 0
  return rows;
}

// ---- files, the ladder, the form ----------------------------------------------------------------

// A dropped body file goes where the library's readers find it (the wasm file system).
function loadFile(name, bytes) {
  const FS = page.module.FS;
  try { FS.mkdir('/input'); } catch (e) { /* already there */ }
  const path = '/input/' + name.replace(/[^A-Za-z0-9._-]/g, '_');
  FS.writeFile(path, bytes);
  let option = [...$('ic').options].find(o => o.value === path);
  if (!option) {
    option = new Option(`${name} (dropped)`, path);
    $('ic').add(option);
  }
  $('ic').value = path;
  $('n').value = '';  // all of its bodies, unless n is given
  return start(specFromForm());
}

async function ladder() {
  try {
    const table = await (await fetch('ladder.json')).json();
    const body = $('ladder').tBodies[0];
    for (const r of table.rows) {
      const tr = body.insertRow();
      for (const v of [r.rung, r.source, r.h100]) tr.insertCell().textContent = v;
      for (const name of r.rung.split(', ')) page.h100[name] = r.h100;
      const here = page.info.rungs.some(x => x.available && r.rung.split(', ').includes(x.name));
      if (here) tr.className = 'here';
    }
  } catch (e) {
    $('ladder').insertAdjacentText('afterend', `ladder.json could not be read: ${e}`);
  }
}

// One line for the rungs that cannot run here: how many, and why, each reason's first clause (up to
// a bracket, a colon or a semicolon) with the number of rungs it stops.
function unrunnableLine(cannot) {
  const count = new Map();
  for (const r of cannot) {
    const why = r.reason.split(/ \(|: |;/)[0];
    count.set(why, (count.get(why) || 0) + 1);
  }
  return `${cannot.length} rung${cannot.length === 1 ? '' : 's'} cannot run here: ` +
    [...count].map(([why, k]) => `${why} (${k})`).join('; ');
}

function fillForm(info) {
  // The list offers what runs here; what cannot is folded under one line, each rung with its reason.
  const cannot = info.rungs.filter(r => !r.available);
  for (const r of info.rungs.filter(r => r.available)) $('pipeline').add(new Option(r.name, r.name));
  for (const r of cannot) {
    const li = document.createElement('li');
    li.textContent = `${r.name}: ${r.reason}`;
    $('unavailable').append(li);
  }
  $('unrunnable-line').textContent = unrunnableLine(cannot);
  $('unrunnable').hidden = !cannot.length;
  const gl = info.rungs.find(r => r.name === 'gl:forcequad');
  $('pipeline').value = gl && gl.available ? 'gl:forcequad' : 'cpu32';
  for (const g of info.generators) $('ic').add(new Option(g, g));
  // Every default from the library's option table (the command line's), n the page's own.
  for (const k of FIELDS.filter(k => k !== 'pipeline')) $(k).value = info.defaults[k];
  for (const [k, f] of Object.entries(info.fields)) {  // the values the rungs take, and --help's words
    Object.assign($(k), {min: f.min, max: f.max});
    $(k).parentElement.title = f.help;
  }
  $('n').max = info.max_bodies_alone;  // (info.max_bodies with cpu64 beside the rung)
}

// A button's work, kept as page.pending (what the tests wait on after a click).
function act(work) {
  return () => { page.pending = work(); };
}

function wire() {
  $('setup').addEventListener('submit', e => {
    e.preventDefault();
    if (!page.measuring) page.pending = start(specFromForm());
  });
  $('pause').onclick = act(async () => { page.running = !page.running; buttons(); if (!page.running) await energy(); });
  $('step').onclick = act(() => step(1));
  $('show-stages').onclick = act(() => showStages(page.stageIndex));
  $('show-workgroup').onclick = act(() => showWorkgroup());
  $('next-tile').onclick = () => showTile(page.workgroup.upto + 1);
  $('all-tiles').onclick = () => showTile(page.workgroup.tiles);
  $('measure-ladder').onclick = act(() => measureLadder(Number($('ladder-n').value) || 4096));
  $('prev-stage').onclick = () => showStage(page.stageIndex - 1);
  $('next-stage').onclick = () => showStage(page.stageIndex + 1);
  $('bench').onclick = act(async () => {
    page.running = false;
    buttons();
    $('bench-result').textContent = 'benching: validating against float64, then timing 3 repetitions\u2026';
    await new Promise(r => setTimeout(r, 30));  // let the message paint first
    await page.bench(10, 3);
  });
  const drop = $('drop');
  for (const ev of ['dragenter', 'dragover']) drop.addEventListener(ev, e => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async e => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = e.dataTransfer.files[0];
    if (f) loadFile(f.name, new Uint8Array(await f.arrayBuffer()));
  });
}

// ---- what the tests (and a curious reader's console) call ----------------------------------------

page.start = (spec, run = false) => start(spec, run);
page.step = count => step(count);
page.energy = () => energy();
page.showStages = index => showStages(index || 0);
page.showWorkgroup = () => showWorkgroup();
page.measureLadder = (n, steps, reps) => measureLadder(n, steps, reps);
page.ladderHere = () => ladderHere();
page.loadFile = (name, bytes) => loadFile(name, new Uint8Array(bytes));
page.positions = () => ({ rung: Array.from(page.session.positions()),
                          reference: Array.from(page.session.referencePositions()) });  // [] without one
page.accelerations = async () => {
  const r = await ask('accelerations');
  if (r.error) return r;
  return { ...r, rung: Array.from(page.session.rungAccelerations()),
           reference: Array.from(page.session.referenceAccelerations()) };
};
page.bench = async (steps, reps) => {
  const r = await ask('bench', steps, reps);
  $('bench-result').textContent = r.error ? `bench: ${r.error}` : r.status !== 'ok' ? `bench: ${r.status}: ${r.failure}` :
    `${r.pipeline} at n = ${r.n}: ${r.interactions_per_s.toExponential(3)} interactions/s, ` +
    `${r.ms_per_step.toFixed(2)} ms/step (median of ${reps}, ${r.timer}); accelerations of ` +
    `${r.validated_bodies} bodies within the tolerance against float64 ` +
    `(rms relative ${r.accel_rms_rel.toExponential(2)}). The same check and timing as nbody bench.`;
  return r;
};

page.ready = (async () => {
  if (location.protocol === 'file:') {
    const why = 'Browsers do not load WebAssembly from file://. Serve this folder: ' +
                'python3 -m http.server 8000, then open http://localhost:8000/';
    status(why, 'error');
    Draw.message($('view'), why);
    throw new Error(why);
  }
  if (typeof createNbody !== 'function') {
    const why = 'nbody.js did not load: the folder is incomplete (scripts/build-web.sh makes it)';
    status(why, 'error');
    Draw.message($('view'), why);
    throw new Error(why);
  }
  try {
    page.module = await createNbody();
    // The session's arrays, as views of wasm memory (valid until its next call).
    page.session = {};
    for (const f of ['drawPositions', 'positions', 'referencePositions', 'rungAccelerations',
                     'referenceAccelerations', 'stageData'])
      page.session[f] = (...args) => page.module[f](...args);
  } catch (e) {
    const why = `nbody.wasm could not be loaded (${e}): either the folder is incomplete (scripts/build-web.sh ` +
                'makes it) or this browser lacks WebAssembly SIMD (Chrome and Firefox since 2021, Safari since 16.4)';
    status(why, 'error');
    Draw.message($('view'), why);
    throw new Error(why);
  }
  page.timings.module = performance.now();
  page.info = JSON.parse(page.module.info());
  page.timings.info = performance.now();
  $('version').textContent = page.info.version;
  $('gl-info').textContent = page.info.gl || `no WebGL2 here: ${page.info.gl_error}`;
  fillForm(page.info);
  wire();
  const table = ladder();  // fetched while the first step runs
  const url = readUrl();
  const r = await start({ ...specFromForm(), ...url.given }, url.run, url);
  page.timings.started = performance.now();
  if (!r.error && page.info.gl_error)
    status(`No GL rung can run here (${page.info.gl_error}); ${r.pipeline} runs in WebAssembly. ` +
           $('status').textContent, 'warn');
  requestAnimationFrame(tick);
  if (!r.error && (location.hash === '#forcequad' || location.hash === '#reduction')) {
    await showStages(location.hash === '#reduction' ? 1 : 0);
    $('forcequad').scrollIntoView();
  }
  await table;
  return page.info;
})();
page.ready.catch(e => { if (!$('status').classList.contains('error')) fail({ error: String(e) }, 'nbody.wasm'); });
