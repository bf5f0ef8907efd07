# Resolves EDGETAP_CUDA (AUTO|ON|OFF) into EDGETAP_HAVE_CUDA and, when on,
# enables the CUDA language with the project's one list of GPU architectures.
include(CheckLanguage)
set(EDGETAP_HAVE_CUDA OFF)
if(EDGETAP_CUDA STREQUAL "ON" OR EDGETAP_CUDA STREQUAL "AUTO")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(EDGETAP_HAVE_CUDA ON)
  elseif(EDGETAP_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EDGETAP_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
elseif(NOT EDGETAP_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "EDGETAP_CUDA must be AUTO, ON or OFF, not '${EDGETAP_CUDA}'")
endif()

if(EDGETAP_HAVE_CUDA)
  # The GPU architectures of the fat binary, one list for the whole project:
  #   75 = Turing (T4, the design target: 64 KB shared memory/SM, 4 MB L2)
  #   86 = Ampere consumer/A10, 89 = Ada (L4), 90 = Hopper (H100/H200, where we measure)
  #   90-virtual = PTX for GPUs newer than this list, JIT-compiled by the driver.
  # Override with -DCMAKE_CUDA_ARCHITECTURES=... for quicker local builds.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75-real 86-real 89-real 90-real 90-virtual)
  endif()
  # The CUDA runtime as a shared library, as CUDA::cudart: the plugin and its
  # package depend on NVIDIA's runtime package rather than carrying a copy.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  find_package(CUDAToolkit REQUIRED)
endif()
message(STATUS "EdgeTAP CUDA backend: ${EDGETAP_HAVE_CUDA} (EDGETAP_CUDA=${EDGETAP_CUDA})")
