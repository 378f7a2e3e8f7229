// The leapfrog kick and drift of every WebGPU rung (common/leapfrog.hpp), from one pair of storage
// buffers into the other: TR04-032's velocity and position programs with their render-to-texture
// ping-pong, as one invocation per body.
// The rung prepends frame.wgsl (the Frame uniform at binding 0) to this text.
@group(0) @binding(1) var<storage, read> pos_in: array<vec4f>;  // x_n, mass in w
@group(0) @binding(2) var<storage, read> vel_in: array<vec4f>;  // v_{n-1/2}
@group(0) @binding(3) var<storage, read> acc: array<vec4f>;     // a(x_n)
@group(0) @binding(4) var<storage, read_write> pos_out: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> vel_out: array<vec4f>;

@compute @workgroup_size(64)
fn kick_drift(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= frame.n) {
    return;
  }
  let v = vel_in[i].xyz + acc[i].xyz * frame.dt;  // the velocity program: v_{n+1/2}
  let p = pos_in[i];
  vel_out[i] = vec4f(v, 0.0);
  pos_out[i] = vec4f(p.xyz + v * frame.dt, p.w);   // the position program: x_{n+1}
}
