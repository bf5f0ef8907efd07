# Project-wide compiler flags: warnings (errors in CI) and the sanitizer build.
add_library(edgetap_warnings INTERFACE)
target_compile_options(edgetap_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<BOOL:${EDGETAP_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)

if(EDGETAP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
