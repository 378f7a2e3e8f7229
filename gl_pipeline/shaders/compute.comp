#version 430 core
// gl:compute: GPU Gems 3 listing 31-3 written in GLSL. One invocation per body, a work group of
// 256 loads one tile of 256 bodies into shared memory, two barriers per tile, the sum in registers.
// Per interaction the 19 flops marked below (the rate's convention, GPU Gems 3's, counts 20).
layout(local_size_x = 256) in;
uniform sampler2D bodies;  // xyz position, w mass
uniform int n;
uniform int first;  // bodies first.. (a rank's block; 0 in one process)
uniform int body_width;
uniform float eps2;
layout(rgba32f, binding = 0) uniform writeonly image2D accel;

shared vec4 tile[256];

vec4 body(int k) {
  return k < n ? texelFetch(bodies, ivec2(k % body_width, k / body_width), 0) : vec4(0.0);
}

void main() {
  int i = first + int(gl_GlobalInvocationID.x);
  vec3 bi = body(min(i, n - 1)).xyz;
  vec3 a = vec3(0.0);
  for (int base = 0; base < n; base += 256) {
    tile[gl_LocalInvocationID.x] = body(base + int(gl_LocalInvocationID.x));  // zero mass past n
    barrier();
    for (int k = 0; k < 256; ++k) {
      vec4 bj = tile[k];
      vec3 r = bj.xyz - bi;                       // r_ij            [3 flops]
      float d2 = dot(r, r) + eps2;                // |r|^2 + eps^2   [6 flops]
      float inv = inversesqrt(d2);                //                 [1 flop]
      a += r * (bj.w * inv * inv * inv);          //                 [3 + 6 flops]
    }
    barrier();
  }
  if (i < n) imageStore(accel, ivec2(i % body_width, i / body_width), vec4(a, 0.0));
}
