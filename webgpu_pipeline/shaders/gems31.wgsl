// webgpu:gems31: GPU Gems 3 listing 31-3 in WGSL. One invocation per body; a workgroup of P
// invocations loads one tile of P bodies into workgroup memory, waits at a barrier, and every
// invocation sums the tile into its own registers, then the next tile. The rung prepends P and
// frame.wgsl (the Frame uniform at binding 0) to this text (wgsl_rung.cpp). In the vocabulary of
// docs/ladder.md: the storage buffer `pos` is the body texture, an invocation is a fragment, the
// dispatch covers the N x N grid without storing it, and the register sum `a` replaces the log2(n)
// reduction passes.
@group(0) @binding(1) var<storage, read> pos: array<vec4f>;  // xyz position, w mass
@group(0) @binding(2) var<storage, read_write> acc: array<vec4f>;

var<workgroup> tile: array<vec4f, P>;  // __shared__ float4 shPosition[p]

// Listing 31-1: a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2), with the chapter's 1/sqrt(d^6).
fn body_body(bi: vec3f, bj: vec4f, ai: vec3f) -> vec3f {
  let r = bj.xyz - bi;                   // r_ij            [3 flops]
  let d2 = dot(r, r) + frame.eps2;       // |r|^2 + eps^2   [6 flops]
  let inv_cube = inverseSqrt(d2 * d2 * d2);  //             [2 flops + 1]
  return ai + r * (bj.w * inv_cube);     //                 [1 + 6 flops]
}

@compute @workgroup_size(P)
fn forces(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) t: u32) {
  let n = frame.n;
  let i = gid.x;
  let bi = pos[min(i, n - 1u)].xyz;
  var a = vec3f(0.0);
  for (var base = 0u; base < n; base += P) {
    let j = base + t;
    tile[t] = select(vec4f(0.0), pos[min(j, n - 1u)], j < n);  // zero mass past n
    workgroupBarrier();                                          // __syncthreads()
    for (var k = 0u; k < P; k += 4u) {                           // #pragma unroll 4
      a = body_body(bi, tile[k], a);
      a = body_body(bi, tile[k + 1u], a);
      a = body_body(bi, tile[k + 2u], a);
      a = body_body(bi, tile[k + 3u], a);
    }
    workgroupBarrier();
  }
  if (i < n) {
    acc[i] = vec4f(a, 0.0);
  }
}
