# Project-wide compiler flags: warnings (errors in CI) and the sanitizer builds.
add_library(edgetap_warnings INTERFACE)
target_compile_options(edgetap_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<BOOL:${EDGETAP_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)

if(EDGETAP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(EDGETAP_TSAN)
  if(EDGETAP_SANITIZE OR EDGETAP_FUZZ)
    message(FATAL_ERROR "EDGETAP_TSAN cannot be combined with EDGETAP_SANITIZE or EDGETAP_FUZZ (ASan)")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# The fuzz build: every library carries libFuzzer's coverage instrumentation and
# ASan + UBSan; fuzz/ links the targets with libFuzzer's main. x86-64-v3 (AVX2):
# clang refuses the CPU kernels' 8-float vectors in a baseline build, where the
# always-inline helpers that carry them are still calls at -O1.
if(EDGETAP_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "EDGETAP_FUZZ needs clang (libFuzzer): configure with the fuzz preset or CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -march=x86-64-v3)
  add_link_options(-fsanitize=address,undefined)
endif()

# The engine's loops (kernels/, engine/): at -O2, GCC 12 vectorizes only loops whose
# trip count it can prove fits the vector width ("very cheap" cost model); the
# dynamic model also vectorizes ReLU, LayerNorm, the bias adds and the attention
# loops over a row of any width (bench/NOTES.md, "Where the time goes").
add_library(edgetap_vectorize INTERFACE)
target_compile_options(edgetap_vectorize INTERFACE
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<COMPILE_LANGUAGE:CXX>>:-fvect-cost-model=dynamic>)
