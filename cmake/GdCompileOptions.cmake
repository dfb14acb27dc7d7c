# Warnings and sanitizers for the project's own targets.
set(GD_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wstrict-prototypes
    -Wmissing-prototypes -Wno-unused-parameter
    -Wno-missing-field-initializers) # option tables leave trailing fields zero
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND GD_WARNINGS -Wno-format-truncation) # truncating snprintf is deliberate
endif()
# _GNU_SOURCE: getrandom, explicit_bzero, open_memstream, memmem.
add_compile_definitions(_GNU_SOURCE)

# No floating-point contraction anywhere: the bits of a training step, of G
# and of the learning rates feed state hashes that every host must reproduce.
# Fusing a * b + c into one FMA rounds once instead of twice, and compilers
# disagree on when to do it: gcc in ISO C mode never does, clang does by
# default (-ffp-contract=on): with -march=x86-64-v3 it fused 67 operations
# in the float ops and changed 204 of 1,000 learning rates. CUDA code (none
# yet) needs the same for whatever feeds a hash: nvcc's --fmad=false.
add_compile_options($<$<COMPILE_LANGUAGE:C>:-ffp-contract=off>)

if(GD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GD_FUZZ needs clang: configure with CC=clang")
  endif()
  # Coverage instrumentation everywhere; fuzz binaries add -fsanitize=fuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(GD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# gd_target_warnings(target): the project's warning set on one target.
function(gd_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${GD_WARNINGS}>)
  if(GD_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>)
  endif()
endfunction()

# gd_library(name folder SOURCES ... DEPS ...): one static library per folder.
# The include root is the repository root, so code includes "chain/wire/tx.h".
function(gd_library name)
  cmake_parse_arguments(GL "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${GL_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${GL_DEPS})
  gd_target_warnings(${name})
endfunction()
