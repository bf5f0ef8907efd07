# Project-wide compiler flags: warnings (errors in CI) and the sanitizer build.
add_library(edgetap_warnings INTERFACE)
target_compile_options(edgetap_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<BOOL:${EDGETAP_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)

if(EDGETAP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# The engine's loops (kernels/, core/): at -O2, GCC 12 vectorizes only loops whose
# trip count it can prove fits the vector width ("very cheap" cost model); the
# dynamic model also vectorizes ReLU, LayerNorm, the bias adds and the attention
# loops over a row of any width (bench/NOTES-rounds-19-on.md, CPU engine).
add_library(edgetap_vectorize INTERFACE)
target_compile_options(edgetap_vectorize INTERFACE
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<COMPILE_LANGUAGE:CXX>>:-fvect-cost-model=dynamic>)
