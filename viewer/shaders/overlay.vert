#version 330 core
// Text and rectangles: pixel coordinates, origin at the top left, one colour per vertex.
layout(location = 0) in vec2 position;
layout(location = 1) in vec4 rgba;
uniform vec2 size;  // the framebuffer, in pixels
out vec4 color;

void main() {
  gl_Position = vec4(position.x / size.x * 2.0 - 1.0, 1.0 - position.y / size.y * 2.0, 0.0, 1.0);
  color = rgba;
}
