#version 330 core
// TR04-032 §3, the force quad: the fragment at (x, y) writes f_ij, the softened pull of body
// j = y on body i = x, for one chunk of the n x n all-pairs matrix (§6). The lookup texture turns
// the linear indices into texels of the body texture, as the paper's does.
// Per fragment: 2 lookup + 2 body texel fetches (48 B) and the 16 flops below, 19 with the 3 adds
// of the reduction (the rate's convention, GPU Gems 3's, counts 20 per interaction); one RGBA32F
// write (16 B).
uniform sampler2D bodies;  // xyz position, w mass
uniform sampler2D lookup;  // texel (k, c): body-texture texel of body c * chunk + k
uniform int i_chunk;       // lookup row of the receiving bodies (columns of this quad)
uniform int j_chunk;       // lookup row of the source bodies (rows of this quad)
uniform float eps2;
out vec4 f_ij;

void main() {
  ivec2 p = ivec2(gl_FragCoord.xy);
  ivec2 ti = ivec2(texelFetch(lookup, ivec2(p.x, i_chunk), 0).xy);
  ivec2 tj = ivec2(texelFetch(lookup, ivec2(p.y, j_chunk), 0).xy);
  vec4 bi = texelFetch(bodies, ti, 0);
  vec4 bj = texelFetch(bodies, tj, 0);
  vec3 r = bj.xyz - bi.xyz;                   // r_ij                 [3 flops]
  float d2 = dot(r, r) + eps2;                // |r|^2 + eps^2        [6 flops]
  float inv = inversesqrt(d2);                //                      [1 flop, hardware rsqrt]
  float s = bj.w * inv * inv * inv;           // m_j / d^3            [3 flops]
  f_ij = vec4(r * s, 0.0);                    //                      [3 flops; +3 in the reduction]
}
