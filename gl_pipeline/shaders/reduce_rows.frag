#version 330 core
// TR04-032 §3, one pass of the log reduction: output row y = input rows y + (y + half) of an
// h-row partial-sum texture, half = ceil(h / 2). An odd h carries its last row through alone.
// log2(n) passes take n rows down to 1; per pass, 2 texel reads (32 B) and one write per output.
uniform sampler2D partial;
uniform int h;        // rows holding data in `partial`
uniform int half_h;   // rows this pass writes: ceil(h / 2)
uniform int out_row;  // the target row of this pass's first output row (the accumulator's chunk)
out vec4 sum;

void main() {
  ivec2 p = ivec2(gl_FragCoord.xy);
  int y = p.y - out_row;
  vec4 s = texelFetch(partial, ivec2(p.x, y), 0);
  if (y + half_h < h) s += texelFetch(partial, ivec2(p.x, y + half_h), 0);
  sum = s;
}
