#version 330 core
// The quad that covers the viewport: "computing is drawing". With a viewport of w x h, one
// fragment lands on each texel of the target (Göddeke's 1:1 mapping), and gl_FragCoord.xy - 0.5
// is that texel's integer coordinate.
void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
