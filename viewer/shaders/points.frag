#version 330 core
// A soft round sprite; additive blending makes dense regions glow.
in vec3 color;
out vec4 frag;

void main() {
  float r2 = dot(gl_PointCoord - 0.5, gl_PointCoord - 0.5) * 4.0;
  if (r2 > 1.0) discard;
  frag = vec4(color * (1.0 - r2), 1.0);
}
