// The WebGPU rungs' host calls, against the browser's WebGPU API (an emscripten JS library, linked
// into nbody.js). Plumbing only: buffers, pipelines, dispatches, copies and timers. The physics is
// the WGSL of webgpu_pipeline/shaders, which wgsl_rung.cpp hands in; the C++ side (wgsl_rung.cpp)
// declares these functions. Calls that wait for the GPU return promises through Asyncify, so the
// library's synchronous Pipeline interface holds: the page calls into nbody.wasm asynchronously.
//
// The device is opened once, before main (a run dependency), so that `nbody info` can say at once
// whether the WebGPU rungs run here and, if not, why.
mergeInto(LibraryManager.library, {
  $NbodyGpu: {
    device: null,
    why: 'WebGPU was not opened yet',
    timestamps: false,  // the adapter offers 'timestamp-query'
    errors: [],         // validation and device errors not yet reported to the C++ side
    rungs: {},
    next: 1,

    open: async function() {
      if (typeof isSecureContext !== 'undefined' && !isSecureContext) {
        NbodyGpu.why = 'WebGPU needs a secure context: serve the page on localhost (or https), not ' +
                       (typeof location !== 'undefined' ? location.origin : 'this address');
        return;
      }
      if (typeof navigator === 'undefined' || !navigator.gpu) {
        NbodyGpu.why = 'this browser offers no WebGPU (navigator.gpu is undefined)';
        return;
      }
      try {
        const adapter = await navigator.gpu.requestAdapter();
        if (!adapter) {
          NbodyGpu.why = 'WebGPU found no adapter (navigator.gpu.requestAdapter() gave none; on Linux, ' +
                         'Chrome and Chromium need --enable-unsafe-webgpu or chrome://flags/#enable-unsafe-webgpu)';
          return;
        }
        NbodyGpu.timestamps = adapter.features.has('timestamp-query');
        const device = await adapter.requestDevice({requiredFeatures: NbodyGpu.timestamps ? ['timestamp-query'] : []});
        device.onuncapturederror = e => NbodyGpu.errors.push(e.error.message);
        device.lost.then(info => {
          NbodyGpu.device = null;
          NbodyGpu.why = 'the WebGPU device was lost' + (info.message ? ': ' + info.message : '');
        });
        NbodyGpu.device = device;
        NbodyGpu.why = '';
        const info = adapter.info || {};
        NbodyGpu.adapter = [info.vendor, info.architecture, info.description].filter(x => x).join(' ');
      } catch (e) {
        NbodyGpu.why = 'WebGPU could not open a device: ' + e;
      }
    },

    // The first error the GPU reported since the last call, or '' (and the error scope's, if any).
    take: function(extra) {
      if (extra) NbodyGpu.errors.push(extra.message);
      if (!NbodyGpu.device && NbodyGpu.why) return NbodyGpu.why;
      return NbodyGpu.errors.length ? NbodyGpu.errors.splice(0).join('; ') : '';
    },

    buffer: function(bytes, usage) {
      return NbodyGpu.device.createBuffer({size: Math.max(bytes, 16), usage: usage});
    },

    // `copies` ([source, bytes] pairs) into one mappable buffer, mapped: its bytes in order.
    readBack: async function(encoder, copies) {
      const total = copies.reduce((s, c) => s + c[1], 0);
      const staging = NbodyGpu.buffer(total, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      let at = 0;
      for (const copy of copies) {  // (no destructuring: emscripten 3.1.6's minifier drops it)
        encoder.copyBufferToBuffer(copy[0], 0, staging, at, copy[1]);
        at += copy[1];
      }
      try {
        NbodyGpu.device.queue.submit([encoder.finish()]);
        await staging.mapAsync(GPUMapMode.READ);
        return new Uint8Array(staging.getMappedRange().slice(0));
      } finally {
        staging.destroy();
      }
    },

    // One force dispatch and one kick-drift dispatch per step, into `pass`, from buffers `r.cur`.
    encodeSteps: function(r, pass, count) {
      for (let s = 0; s < count; ++s) {
        pass.setPipeline(r.forces);
        pass.setBindGroup(0, r.forceGroups[r.cur]);
        pass.dispatchWorkgroups(r.groups);
        pass.setPipeline(r.leapfrog);
        pass.setBindGroup(0, r.leapfrogGroups[r.cur]);
        pass.dispatchWorkgroups(Math.ceil(r.n / 64));
        r.cur = 1 - r.cur;  // ping-pong: this step's output is the next step's input
      }
    },
  },
  $NbodyGpu__postset: 'addOnPreRun(function() { addRunDependency("webgpu"); ' +
                      'NbodyGpu.open().finally(function() { removeRunDependency("webgpu"); }); });',

  // '' when the WebGPU rungs can run here, else why not, into why[0..capacity).
  nbody_wgpu_why__deps: ['$NbodyGpu'],
  nbody_wgpu_why: function(why, capacity) {
    stringToUTF8(NbodyGpu.device ? '' : NbodyGpu.why, why, capacity);
  },

  nbody_wgpu_has_timestamps__deps: ['$NbodyGpu'],
  nbody_wgpu_has_timestamps: function() {
    return NbodyGpu.timestamps ? 1 : 0;
  },

  // A rung: its two compute pipelines from WGSL (`forces` of forces_source, `kick_drift` of
  // leapfrog_source), compiled and checked. Its handle, or 0 with the reason in why.
  nbody_wgpu_create__deps: ['$NbodyGpu'],
  nbody_wgpu_create: function(forces_source, leapfrog_source, why, capacity) {
    return Asyncify.handleAsync(async () => {
      const device = NbodyGpu.device;
      if (!device) {
        stringToUTF8(NbodyGpu.why, why, capacity);
        return 0;
      }
      const compile = async (source, entry) => {
        const module = device.createShaderModule({code: UTF8ToString(source)});
        const info = await module.getCompilationInfo();
        const errors = info.messages.filter(m => m.type === 'error');
        if (errors.length)
          throw new Error(`${entry}: ` + errors.map(m => `line ${m.lineNum}: ${m.message}`).join('; '));
        return device.createComputePipelineAsync({layout: 'auto', compute: {module: module, entryPoint: entry}});
      };
      device.pushErrorScope('validation');
      let r = null, failure = null;
      try {
        r = {forces: await compile(forces_source, 'forces'), leapfrog: await compile(leapfrog_source, 'kick_drift')};
      } catch (e) {
        failure = e;
      }
      const error = await device.popErrorScope();  // popped however the compiling ended
      failure = failure || error;
      if (failure) {
        stringToUTF8('WGSL: ' + (failure.message || failure), why, capacity);
        return 0;
      }
      const h = NbodyGpu.next++;
      NbodyGpu.rungs[h] = r;
      return h;
    });
  },

  nbody_wgpu_destroy__deps: ['$NbodyGpu'],
  nbody_wgpu_destroy: function(h) {
    const r = NbodyGpu.rungs[h];
    if (!r) return;
    for (const b of r.buffers || []) b.destroy();
    delete NbodyGpu.rungs[h];
  },

  // The state in: n bodies as float x y z m (pos) and vx vy vz 0 (vel), eps^2 and dt; `groups`
  // workgroups cover the bodies in the force dispatch.
  nbody_wgpu_load__deps: ['$NbodyGpu'],
  nbody_wgpu_load: function(h, pos, vel, n, eps2, dt, groups) {
    const r = NbodyGpu.rungs[h], device = NbodyGpu.device;
    if (!r || !device) return;
    for (const b of r.buffers || []) b.destroy();
    const U = GPUBufferUsage, bytes = 16 * n;
    const state = () => NbodyGpu.buffer(bytes, U.STORAGE | U.COPY_SRC | U.COPY_DST);
    r.n = n;
    r.groups = groups;
    r.pos = [state(), state()];
    r.vel = [state(), state()];
    r.acc = state();
    r.frame = NbodyGpu.buffer(16, U.UNIFORM | U.COPY_DST);
    r.buffers = r.pos.concat(r.vel, [r.acc, r.frame]);
    r.cur = 0;
    const frame = new ArrayBuffer(16);
    new Uint32Array(frame, 0, 1)[0] = n;
    new Float32Array(frame, 4, 2).set([eps2, dt]);
    device.queue.writeBuffer(r.frame, 0, frame);
    device.queue.writeBuffer(r.pos[0], 0, HEAPF32.buffer, pos, bytes);
    device.queue.writeBuffer(r.vel[0], 0, HEAPF32.buffer, vel, bytes);
    const group = (pipeline, buffers) => device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((b, k) => ({binding: k, resource: {buffer: b}})),
    });
    r.forceGroups = [0, 1].map(c => group(r.forces, [r.frame, r.pos[c], r.acc]));
    r.leapfrogGroups = [0, 1].map(c => group(r.leapfrog, [r.frame, r.pos[c], r.vel[c], r.acc, r.pos[1 - c], r.vel[1 - c]]));
  },

  // a(x) of the current positions into out (x y z 0 per body, float), without a step. 0, or an
  // error into why.
  nbody_wgpu_accelerations__deps: ['$NbodyGpu'],
  nbody_wgpu_accelerations: function(h, out, why, capacity) {
    return Asyncify.handleAsync(async () => {
      const r = NbodyGpu.rungs[h];
      try {
        const encoder = NbodyGpu.device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(r.forces);
        pass.setBindGroup(0, r.forceGroups[r.cur]);
        pass.dispatchWorkgroups(r.groups);
        pass.end();
        HEAPU8.set(await NbodyGpu.readBack(encoder, [[r.acc, 16 * r.n]]), out);
      } catch (e) {
        NbodyGpu.errors.push(String(e.message || e));
      }
      const error = NbodyGpu.take();
      stringToUTF8(error, why, capacity);
      return error ? 1 : 0;
    });
  },

  // `count` steps, queued (the GPU runs them while the caller goes on).
  nbody_wgpu_step__deps: ['$NbodyGpu'],
  nbody_wgpu_step: function(h, count) {
    const r = NbodyGpu.rungs[h], device = NbodyGpu.device;
    if (!r || !device) return;
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    NbodyGpu.encodeSteps(r, pass, count);
    pass.end();
    device.queue.submit([encoder.finish()]);
  },

  // `count` steps, timed: milliseconds between timestamps written at the start and the end of the
  // one compute pass that holds them (timestamp-query), or the wall clock from submit to the queue's
  // completion without it. Negative with an error in why.
  nbody_wgpu_timed_steps__deps: ['$NbodyGpu'],
  nbody_wgpu_timed_steps: function(h, count, why, capacity) {
    return Asyncify.handleAsync(async () => {
      const r = NbodyGpu.rungs[h], device = NbodyGpu.device;
      let ms = -1;
      try {
        const encoder = device.createCommandEncoder();
        if (NbodyGpu.timestamps) {
          const queries = device.createQuerySet({type: 'timestamp', count: 2});
          const resolved = NbodyGpu.buffer(16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
          try {
            const pass = encoder.beginComputePass(
                {timestampWrites: {querySet: queries, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1}});
            NbodyGpu.encodeSteps(r, pass, count);
            pass.end();
            encoder.resolveQuerySet(queries, 0, 2, resolved, 0);
            const t = new BigInt64Array((await NbodyGpu.readBack(encoder, [[resolved, 16]])).buffer);
            if (t[1] < t[0]) throw new Error('the GPU\'s timestamps ran backwards (' + t[0] + ' then ' + t[1] + ' ns)');
            ms = Number(t[1] - t[0]) / 1e6;
          } finally {
            queries.destroy();
            resolved.destroy();
          }
        } else {
          const pass = encoder.beginComputePass();
          NbodyGpu.encodeSteps(r, pass, count);
          pass.end();
          const t0 = performance.now();
          device.queue.submit([encoder.finish()]);
          await device.queue.onSubmittedWorkDone();
          ms = performance.now() - t0;
        }
      } catch (e) {
        NbodyGpu.errors.push(String(e.message || e));
      }
      const error = NbodyGpu.take();
      stringToUTF8(error, why, capacity);
      return error ? -1 : ms;
    });
  },

  // The state out: x y z m and vx vy vz 0 per body (float). 0, or an error into why.
  nbody_wgpu_read__deps: ['$NbodyGpu'],
  nbody_wgpu_read: function(h, pos, vel, why, capacity) {
    return Asyncify.handleAsync(async () => {
      const r = NbodyGpu.rungs[h];
      try {
        const bytes = 16 * r.n;
        const both = await NbodyGpu.readBack(NbodyGpu.device.createCommandEncoder(),
                                             [[r.pos[r.cur], bytes], [r.vel[r.cur], bytes]]);
        HEAPU8.set(both.subarray(0, bytes), pos);
        HEAPU8.set(both.subarray(bytes), vel);
      } catch (e) {
        NbodyGpu.errors.push(String(e.message || e));
      }
      const error = NbodyGpu.take();
      stringToUTF8(error, why, capacity);
      return error ? 1 : 0;
    });
  },

  // Waits until the queued work is done. 0, or an error into why.
  nbody_wgpu_finish__deps: ['$NbodyGpu'],
  nbody_wgpu_finish: function(why, capacity) {
    return Asyncify.handleAsync(async () => {
      if (NbodyGpu.device) await NbodyGpu.device.queue.onSubmittedWorkDone();
      const error = NbodyGpu.take();
      stringToUTF8(error, why, capacity);
      return error ? 1 : 0;
    });
  },

  // The adapter, in words, for `nbody info` ('' without one).
  nbody_wgpu_adapter__deps: ['$NbodyGpu'],
  nbody_wgpu_adapter: function(out, capacity) {
    stringToUTF8(NbodyGpu.device ? (NbodyGpu.adapter || 'a WebGPU adapter') : '', out, capacity);
  },
});
