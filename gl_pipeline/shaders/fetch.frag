#version 330 core
// The fetch-rate probe of gl:gather's bound (fill_rate.cpp): gather.frag's loop and texel fetches
// with the arithmetic taken out (a sum keeps the fetches live). Its rate, fetches per second, is
// the most interactions per second a one-fetch-per-interaction shader can reach here.
uniform sampler2D bodies;
uniform int n;
uniform int body_width;
out vec4 result;

void main() {
  vec4 s = vec4(0.0);
  int j = 0;
  for (int y = 0; j < n; ++y) {
    for (int x = 0; x < body_width && j < n; ++x, ++j) s += texelFetch(bodies, ivec2(x, y), 0);
  }
  result = s;
}
