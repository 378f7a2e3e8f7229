# The GPUs the CUDA kernels are built for. Included before enable_language(CUDA).
#
# - CMAKE_CUDA_ARCHITECTURES given (-D, a preset or the CUDAARCHS environment variable): taken as
#   it is; `every` is the list below, and `native` is read here from nvidia-smi, so that the binary
#   can name what it holds.
# - Not given and a GPU visible (nvidia-smi): that GPU's architecture only, a quick developer build.
# - Not given and no GPU visible: every GPU the CUDA 13 toolkit supports, Turing to Blackwell, as
#   native code, plus PTX of the newest for GPUs after it (the driver compiles it at first load).
#   scripts/package.sh always builds this list (`every`).
set(NBODY_CUDA_EVERY_GPU "75-real;80-real;86-real;89-real;90-real;100-real;120"
    CACHE INTERNAL "Turing (7.5) to Blackwell (12.0) as SASS, and compute_120 as PTX")

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
  set(${out} "${caps}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
endif()
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(nbody_arch_why "as given")
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "every")
    set(CMAKE_CUDA_ARCHITECTURES "${NBODY_CUDA_EVERY_GPU}" CACHE STRING "CUDA architectures" FORCE)
    set(nbody_arch_why "every: every GPU from Turing to Blackwell, PTX for newer ones")
  elseif(CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
    nbody_visible_gpu_architectures(nbody_visible)
    if(NOT nbody_visible)
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=native: nvidia-smi sees no GPU here; name the "
                          "architectures (e.g. 86) or leave the option out for every GPU")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${nbody_visible}" CACHE STRING "CUDA architectures" FORCE)
    set(nbody_arch_why "native: the GPU(s) nvidia-smi sees")
  endif()
else()
  nbody_visible_gpu_architectures(nbody_visible)
  if(nbody_visible)
    set(CMAKE_CUDA_ARCHITECTURES "${nbody_visible}")
    set(nbody_arch_why "the GPU(s) nvidia-smi sees here; the binary runs on these only")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${NBODY_CUDA_EVERY_GPU}")
    set(nbody_arch_why "every GPU from Turing to Blackwell, PTX for newer ones")
  endif()
endif()
message(STATUS "nbody: CUDA kernels for ${CMAKE_CUDA_ARCHITECTURES} (${nbody_arch_why}); change with "
               "-DCMAKE_CUDA_ARCHITECTURES=<list>: every, native, or e.g. 86 or \"86-real;90\"")
