#version 430 core
// gl:compute-ds, the force stage: positions in double-single (a float pair hi + lo, 48 bits; the
// 2004-era technique for precision past the hardware's), r_ij formed from both parts (the his'
// difference plus the los': within an ulp of the correctly rounded float), the force in float, and each body's sum compensated (Kahan),
// so that the sum carries no more error than its terms. `precise` forbids the compiler to
// re-associate the two-sums (which would cancel the compensation to zero).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer PosHi { vec4 pos_hi[]; };  // xyz hi, w mass
layout(std430, binding = 1) readonly buffer PosLo { vec4 pos_lo[]; };  // xyz lo
layout(std430, binding = 4) writeonly buffer Acc { vec4 acc[]; };
uniform int n;
uniform float eps2;

shared vec4 tile_hi[256];
shared vec4 tile_lo[256];

void main() {
  int i = int(gl_GlobalInvocationID.x);
  int me = min(i, n - 1);
  vec3 xi_hi = pos_hi[me].xyz, xi_lo = pos_lo[me].xyz;
  precise vec3 sum = vec3(0.0), c = vec3(0.0);
  for (int base = 0; base < n; base += 256) {
    int k = base + int(gl_LocalInvocationID.x);
    tile_hi[gl_LocalInvocationID.x] = k < n ? pos_hi[k] : vec4(0.0);  // zero mass past n
    tile_lo[gl_LocalInvocationID.x] = k < n ? pos_lo[k] : vec4(0.0);
    barrier();
    for (int t = 0; t < 256; ++t) {
      vec4 bj = tile_hi[t];
      precise vec3 r = (bj.xyz - xi_hi) + (tile_lo[t].xyz - xi_lo);  // hi difference + lo difference
      float d2 = dot(r, r) + eps2;
      float inv = inversesqrt(d2);
      vec3 term = r * (bj.w * inv * inv * inv);
      precise vec3 y = term - c;  // Kahan: carry what the last addition dropped
      precise vec3 s = sum + y;
      c = (s - sum) - y;
      sum = s;
    }
    barrier();
  }
  if (i < n) acc[i] = vec4(sum, 0.0);
}
