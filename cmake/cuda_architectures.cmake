# The GPUs the CUDA kernels are built for. Included before enable_language(CUDA).
#
# - CMAKE_CUDA_ARCHITECTURES given (-D, a preset or the CUDAARCHS environment variable): taken as
#   it is; `every` is the list below, and `native` is read here from nvidia-smi, so that the binary
#   can name what it holds (cuda_pipeline/include/architectures.hpp reads the list).
# - Not given and a GPU visible (nvidia-smi): that GPU's architecture only, a quick developer build.
# - Not given and no GPU visible: PTX only (compute_75), which the driver compiles for any GPU from
#   Turing on at first load: a quick build for a machine that runs no kernel itself. The ci and
#   package presets, and scripts/package.sh, build every GPU's native code (`every`).
set(NBODY_CUDA_EVERY_GPU "75-real;80-real;86-real;89-real;90-real;100-real;120"
    CACHE INTERNAL "Turing (7.5) to Blackwell (12.0) as SASS, and compute_120 as PTX")

# The compute capabilities (x 10) of the GPUs nvidia-smi sees that CUDA 13 can build for (7.5 and up).
function(nbody_visible_gpu_architectures out)
  set(${out} "" PARENT_SCOPE)
  find_program(NBODY_NVIDIA_SMI nvidia-smi)
  if(NOT NBODY_NVIDIA_SMI)
    return()
  endif()
  execute_process(COMMAND ${NBODY_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR caps STREQUAL "")
    return()
  endif()
  string(REPLACE "." "" caps "${caps}")
  string(REGEX REPLACE "[\r\n]+" ";" caps "${caps}")
  list(REMOVE_DUPLICATES caps)
  set(usable "")
  foreach(cap IN LISTS caps)
    if(cap MATCHES "^[0-9]+$" AND cap GREATER_EQUAL 75)
      list(APPEND usable ${cap})
    else()
      message(STATUS "nbody: a GPU of compute capability ${cap} is visible; CUDA 13 builds nothing for it")
    endif()
  endforeach()
  set(${out} "${usable}" PARENT_SCOPE)
endfunction()

# One place that sets the list: the cache and the variable (a normal variable would hide the cache).
macro(nbody_set_cuda_architectures list why)
  set(CMAKE_CUDA_ARCHITECTURES "${list}" CACHE STRING "CUDA architectures (every, native or a list)" FORCE)
  set(CMAKE_CUDA_ARCHITECTURES "${list}")
  set(nbody_arch_why "${why}")
endmacro()

set(nbody_asked "")
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(nbody_asked "${CMAKE_CUDA_ARCHITECTURES}")
elseif(NOT "${NBODY_CUDAARCHS}" STREQUAL "")  # the CUDAARCHS environment variable
  set(nbody_asked "${NBODY_CUDAARCHS}")
endif()
if(nbody_asked STREQUAL "every")
  nbody_set_cuda_architectures("${NBODY_CUDA_EVERY_GPU}" "every: every GPU from Turing to Blackwell, PTX for newer ones")
elseif(nbody_asked STREQUAL "native")
  nbody_visible_gpu_architectures(nbody_visible)
  if(NOT nbody_visible)
    message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=native: nvidia-smi sees no GPU that CUDA 13 builds for; name "
                        "the architectures (e.g. 86), or give every")
  endif()
  nbody_set_cuda_architectures("${nbody_visible}" "native: the GPU(s) nvidia-smi sees")
elseif(nbody_asked MATCHES "^all")
  message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=${nbody_asked}: CMake's list is not the one this binary can "
                      "name; give every (sm_75 to sm_120 and PTX), native, or a list such as \"86-real;90\"")
elseif(NOT nbody_asked STREQUAL "")
  nbody_set_cuda_architectures("${nbody_asked}" "as given")
else()
  nbody_visible_gpu_architectures(nbody_visible)
  if(nbody_visible)
    nbody_set_cuda_architectures("${nbody_visible}" "the GPU(s) nvidia-smi sees here; the binary runs on these only")
  else()
    nbody_set_cuda_architectures("75-virtual" "no GPU visible: PTX only, compiled by the driver for whatever GPU runs it")
  endif()
endif()
message(STATUS "nbody: CUDA kernels for ${CMAKE_CUDA_ARCHITECTURES} (${nbody_arch_why}); change with "
               "-DCMAKE_CUDA_ARCHITECTURES=<list>: every, native, or e.g. 86 or \"86-real;90\"")
