#version 330 core
// TR04-032 §3, the velocity program (the leapfrog kick): v' = v + a dt for the body of this texel.
// The accelerations come from the rung's own layout: body i at (i % acc_width, i / acc_width).
uniform sampler2D velocities;
uniform sampler2D accel;
uniform float dt;
uniform int n;
uniform int body_width;
uniform int acc_width;
out vec4 v_out;

void main() {
  ivec2 t = ivec2(gl_FragCoord.xy);
  int i = t.y * body_width + t.x;
  vec4 v = texelFetch(velocities, t, 0);
  if (i < n) v.xyz += texelFetch(accel, ivec2(i % acc_width, i / acc_width), 0).xyz * dt;
  v_out = v;
}
