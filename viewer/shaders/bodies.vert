#version 330 core
// One point sprite per body, fetched by gl_VertexID (no vertex buffers): from a gl:* rung's body
// texture (source 0: texel (i % body_width, i / body_width), TR04-032's layout) or from a buffer
// texture of float4 per body (source 1: cpu*, or a CUDA rung's array shared through interop).
// Orthographic camera: rotate, scale, no depth (additive blending is order-free).
uniform int source;
uniform sampler2D pos_tex;
uniform sampler2D vel_tex;
uniform samplerBuffer pos_buf;
uniform samplerBuffer vel_buf;
uniform samplerBuffer divergence;  // log10 distance to the twin body on the other pane, or its rank
uniform sampler2D ramp;             // 256 x 1: the divergence colour ramp (render.cpp)
uniform int body_width;
uniform mat3 rotation;  // world -> view
uniform vec2 scale;     // view -> clip, per axis (aspect)
uniform float point_size;   // pixels, for a body of the reference mass
uniform float brightness;   // for a body of the reference mass
uniform float mass_ref;
uniform float vmax;         // the speed drawn full orange
uniform int colour;         // 0 plain, 1 speed, 2 species, 3 divergence, 4 rank (viewer.hpp)
uniform float div_lo, div_hi;
uniform int groups;             // species: bodies [group_end[k-1], group_end[k]) are species k
uniform int group_end[6];
uniform vec3 group_colour[6];  // the species' colours, or those of the ranks
out vec3 color;

void main() {
  int i = gl_VertexID;
  vec4 p;
  vec3 v;
  if (source == 0) {
    ivec2 t = ivec2(i % body_width, i / body_width);
    p = texelFetch(pos_tex, t, 0);
    v = texelFetch(vel_tex, t, 0).xyz;
  } else {
    p = texelFetch(pos_buf, i);
    v = texelFetch(vel_buf, i).xyz;
  }
  vec3 q = rotation * p.xyz;
  gl_Position = vec4(q.xy * scale, 0.0, 1.0);
  float m = max(p.w / mass_ref, 0.0);
  gl_PointSize = point_size * clamp(pow(m, 1.0 / 3.0), 0.6, 3.0);
  float glow = brightness * clamp(sqrt(m), 0.3, 2.0);
  vec3 c = vec3(0.55, 0.65, 1.0);
  if (colour == 1) {
    c = mix(vec3(0.25, 0.45, 1.0), vec3(1.0, 0.55, 0.2), clamp(length(v) / vmax, 0.0, 1.0));
  } else if (colour == 2) {
    int k = 0;
    while (k < groups - 1 && i >= group_end[k]) ++k;
    c = group_colour[k];
  } else if (colour == 3) {
    float t = clamp((texelFetch(divergence, i).x - div_lo) / max(div_hi - div_lo, 1e-6), 0.0, 1.0);
    c = texture(ramp, vec2(t, 0.5)).rgb;
    glow = max(glow, 0.35);  // every body visible: the colour is the message
  } else if (colour == 4) {
    c = group_colour[int(texelFetch(divergence, i).x + 0.5) % 6];
    glow = max(glow, 0.35);
  }
  color = c * glow;
}
