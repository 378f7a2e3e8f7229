#version 330 core
// gl:gather: one fragment per body i loops over every body j. The same sum as the force quad,
// but accumulated in registers: per interaction one texel fetch (16 B, cached) and the 19 flops
// below (the rate's convention, GPU Gems 3's, counts 20).
uniform sampler2D bodies;  // xyz position, w mass
uniform int n;
uniform int body_width;
uniform float eps2;
out vec4 a_out;

void main() {
  ivec2 t = ivec2(gl_FragCoord.xy);
  vec3 bi = texelFetch(bodies, t, 0).xyz;
  vec3 a = vec3(0.0);
  int j = 0;
  for (int y = 0; j < n; ++y) {
    for (int x = 0; x < body_width && j < n; ++x, ++j) {
      vec4 bj = texelFetch(bodies, ivec2(x, y), 0);
      vec3 r = bj.xyz - bi;                       // r_ij            [3 flops]
      float d2 = dot(r, r) + eps2;                // |r|^2 + eps^2   [6 flops]
      float inv = inversesqrt(d2);                //                 [1 flop]
      a += r * (bj.w * inv * inv * inv);          //                 [3 + 6 flops]
    }
  }
  a_out = vec4(a, 0.0);
}
