// What every WebGPU rung's shader reads at binding 0, prepended to each (wgsl_rung.cpp): the step's
// constants, written once by load().
struct Frame {
  n: u32,     // bodies
  eps2: f32,  // softening squared
  dt: f32,
  pad: u32,
}
@group(0) @binding(0) var<uniform> frame: Frame;
