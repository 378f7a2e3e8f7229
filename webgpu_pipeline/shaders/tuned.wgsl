// webgpu:tuned: cuda:tuned's idea in WGSL. Each invocation owns K bodies (i = first + k P), so one
// read of body j from the workgroup tile feeds K interactions and the K sums are independent work;
// each interaction is one inverseSqrt of |r|^2 + eps^2 and fused multiply-adds. The rung prepends
// P, K and frame.wgsl (the Frame uniform at binding 0) to this text (wgsl_rung.cpp); a workgroup
// covers P K bodies.
@group(0) @binding(1) var<storage, read> pos: array<vec4f>;  // xyz position, w mass
@group(0) @binding(2) var<storage, read_write> acc: array<vec4f>;

var<workgroup> tile: array<vec4f, P>;

@compute @workgroup_size(P)
fn forces(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) t: u32) {
  let n = frame.n;
  let first = group.x * P * K + t;
  var x: array<vec3f, K>;
  var a: array<vec3f, K>;
  for (var k = 0u; k < K; k++) {
    x[k] = pos[min(first + k * P, n - 1u)].xyz;
    a[k] = vec3f(0.0);
  }
  for (var base = 0u; base < n; base += P) {
    let j = base + t;
    tile[t] = select(vec4f(0.0), pos[min(j, n - 1u)], j < n);  // zero mass past n
    workgroupBarrier();
    for (var jj = 0u; jj < P; jj++) {
      let bj = tile[jj];
      for (var k = 0u; k < K; k++) {
        let r = bj.xyz - x[k];
        let d2 = fma(r.z, r.z, fma(r.y, r.y, fma(r.x, r.x, frame.eps2)));
        let inv = inverseSqrt(d2);
        a[k] = fma(r, vec3f(bj.w * inv * inv * inv), a[k]);
      }
    }
    workgroupBarrier();
  }
  for (var k = 0u; k < K; k++) {
    let i = first + k * P;
    if (i < n) {
      acc[i] = vec4f(a[k], 0.0);
    }
  }
}
