#version 330 core
// The bench's fill-rate probe: the cheapest fragment there is, one RGBA32F write and nothing
// read. Its rate over the same number of texels a force-quad step draws bounds that step.
out vec4 texel;

void main() { texel = vec4(1.0, 0.5, 0.25, 1.0); }
