#version 330 core
// Frames: one point sprite per body, fetched from the body texture by gl_VertexID; a fixed camera
// tilted 30 degrees about x; colour from blue (slow) to orange (fast).
uniform sampler2D positions;
uniform sampler2D velocities;
uniform int body_width;
uniform float scale;  // world -> clip
uniform float vmax;   // speed that maps to full orange
out vec3 color;

void main() {
  ivec2 t = ivec2(gl_VertexID % body_width, gl_VertexID / body_width);
  vec3 p = texelFetch(positions, t, 0).xyz;
  const float c = 0.8660254, s = 0.5;
  vec2 screen = vec2(p.x, c * p.y - s * p.z);
  gl_Position = vec4(screen * scale, 0.0, 1.0);
  gl_PointSize = 3.0;
  float speed = clamp(length(texelFetch(velocities, t, 0).xyz) / vmax, 0.0, 1.0);
  color = mix(vec3(0.25, 0.45, 1.0), vec3(1.0, 0.55, 0.2), speed) * 0.45;
}
