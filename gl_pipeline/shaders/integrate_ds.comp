#version 430 core
// gl:compute-ds, the leapfrog in double-single: v += a dt, then x += v dt (kick, drift), each sum
// an exact two-sum and each product an exact fma split, renormalised so |lo| <= ulp(hi) / 2.
// `precise` keeps the compiler from re-associating them.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer PosHi { vec4 pos_hi[]; };
layout(std430, binding = 1) buffer PosLo { vec4 pos_lo[]; };
layout(std430, binding = 2) buffer VelHi { vec4 vel_hi[]; };
layout(std430, binding = 3) buffer VelLo { vec4 vel_lo[]; };
layout(std430, binding = 4) readonly buffer Acc { vec4 acc[]; };
uniform int n;
uniform vec2 dt;  // dt as hi + lo

// (hi, lo) + (b_hi, b_lo) -> renormalised pair: Knuth's two-sum of the his (exact), the los added
// to its error, then a fast two-sum.
vec2 ds_add(vec2 a, vec2 b) {
  precise float s = a.x + b.x;
  precise float bb = s - a.x;
  precise float e = (a.x - (s - bb)) + (b.x - bb);
  precise float t = e + (a.y + b.y);
  precise float hi = s + t;
  precise float lo = t - (hi - s);
  return vec2(hi, lo);
}

// (hi, lo) x (d_hi, d_lo) -> pair, the product of the his split exactly by fma.
vec2 ds_mul(vec2 a, vec2 d) {
  precise float p = a.x * d.x;
  precise float e = fma(a.x, d.x, -p) + (a.x * d.y + a.y * d.x);
  precise float hi = p + e;
  precise float lo = e - (hi - p);
  return vec2(hi, lo);
}

void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= n) return;
  vec4 xh = pos_hi[i], xl = pos_lo[i], vh = vel_hi[i], vl = vel_lo[i];
  vec3 a = acc[i].xyz;
  for (int k = 0; k < 3; ++k) {
    vec2 v = ds_add(vec2(vh[k], vl[k]), ds_mul(vec2(a[k], 0.0), dt));  // kick
    vec2 x = ds_add(vec2(xh[k], xl[k]), ds_mul(v, dt));               // drift with the new v
    vh[k] = v.x, vl[k] = v.y, xh[k] = x.x, xl[k] = x.y;
  }
  pos_hi[i] = xh;
  pos_lo[i] = xl;
  vel_hi[i] = vh;
  vel_lo[i] = vl;
}
