// One line per compute device this build can see, for `info` and the bench's "device" field.
#pragma once
#include <string>
#include <vector>

namespace nbody {

std::string cpu_model();
// GL renderer and version, or why there is no GL.
std::string gl_description();
// One entry per CUDA device ("NVIDIA H100 80GB HBM3, 132 SMs, 1980 MHz, 79.1 GiB"), or empty
// with `reason` set.
std::vector<std::string> cuda_descriptions(std::string& reason);
// The name of CUDA device `index` ("NVIDIA H100 80GB HBM3"), or "" where there is none.
std::string cuda_device_name(int index);
// "cpu: ...; gl: ...; cuda: ..." (the first CUDA device): the bench's "device".
std::string device_line();

}  // namespace nbody
