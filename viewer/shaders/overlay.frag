#version 330 core
in vec4 color;
out vec4 frag;

void main() { frag = color; }
