#version 330 core
// TR04-032 §3, the position program (the leapfrog drift): x' = x + v' dt; the mass in w rides along.
uniform sampler2D positions;
uniform sampler2D velocities;
uniform float dt;
out vec4 p_out;

void main() {
  ivec2 t = ivec2(gl_FragCoord.xy);
  vec4 p = texelFetch(positions, t, 0);
  p_out = vec4(p.xyz + texelFetch(velocities, t, 0).xyz * dt, p.w);
}
