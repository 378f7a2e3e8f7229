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

// Dekker's exact product: p + e = a * b (Veltkamp splits into 12-bit halves). Not fma(a, b, -p):
// GLSL 4.30 does not require fma() to round once, and Mesa llvmpipe's does not.
vec2 two_prod(float a, float b) {
  precise float ca = 4097.0 * a;
  precise float ah = ca - (ca - a);
  precise float al = a - ah;
  precise float cb = 4097.0 * b;
  precise float bh = cb - (cb - b);
  precise float bl = b - bh;
  precise float p = a * b;
  precise float e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return vec2(p, e);
}

// (hi, lo) x (d_hi, d_lo) -> pair: the product of the his exact (two_prod), the cross terms added.
vec2 ds_mul(vec2 a, vec2 d) {
  vec2 pe = two_prod(a.x, d.x);
  precise float p = pe.x;
  precise float e = pe.y + (a.x * d.y + a.y * d.x);
  precise float hi = p + e;
  precise float lo = e - (hi - p);
  return vec2(hi, lo);
}

// lo rounded to the grid of hi's float64 ulp, so that hi + lo is exactly a double: a float64
// checkpoint then holds the pair exactly, and a resume splits it back to the same bits.
float trim(float hi, float lo) {
  int e;
  frexp(hi, e);
  float q = ldexp(1.0, e - 53);
  return q > 0.0 ? roundEven(lo / q) * q : lo;
}

void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= n) return;
  vec4 xh = pos_hi[i], xl = pos_lo[i], vh = vel_hi[i], vl = vel_lo[i];
  vec3 a = acc[i].xyz;
  for (int k = 0; k < 3; ++k) {
    vec2 v = ds_add(vec2(vh[k], vl[k]), ds_mul(vec2(a[k], 0.0), dt));  // kick
    vec2 x = ds_add(vec2(xh[k], xl[k]), ds_mul(v, dt));               // drift with the new v
    vh[k] = v.x, vl[k] = trim(v.x, v.y), xh[k] = x.x, xl[k] = trim(x.x, x.y);
  }
  pos_hi[i] = xh;
  pos_lo[i] = xl;
  vel_hi[i] = vh;
  vel_lo[i] = vl;
}
