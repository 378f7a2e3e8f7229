#version 330 core
// A tree's cells as the edges of their boxes: world corners through the bodies' orthographic
// camera (bodies.vert's rotation and scale), one colour per vertex.
layout(location = 0) in vec3 corner;
layout(location = 1) in vec4 rgba;
uniform mat3 rotation;  // world -> view
uniform vec2 scale;     // view -> clip, per axis (aspect)
out vec4 color;

void main() {
  vec3 q = rotation * corner;
  gl_Position = vec4(q.xy * scale, 0.0, 1.0);
  color = rgba;
}
