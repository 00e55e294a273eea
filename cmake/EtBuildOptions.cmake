# Build options shared by every target of the project.
#
#   ET_SANITIZE   empty, or a comma list of address, undefined, thread
#                 (address and thread cannot be combined)
#   ET_WERROR     warnings are errors in the project's own code (default ON)
#   ET_FUZZ       build the libFuzzer targets (clang only)

find_program(ET_CCACHE ccache)
if(ET_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER "${ET_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${ET_CCACHE}")
endif()

set(ET_SANITIZE "" CACHE STRING "Sanitizers: address, undefined, thread (comma-separated)")
option(ET_WERROR "Treat warnings as errors in the project's own code" ON)
option(ET_FUZZ "Build the libFuzzer targets; instruments all code for coverage (needs clang)" OFF)

if(ET_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ET_FUZZ needs clang: configure with CMAKE_CXX_COMPILER=clang++ (scripts/fuzz)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(ET_SANITIZE)
  string(REPLACE "," ";" _et_sanitizers "${ET_SANITIZE}")
  foreach(_s IN LISTS _et_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "ET_SANITIZE: unknown sanitizer '${_s}'; use address, undefined or thread")
    endif()
  endforeach()
  if("address" IN_LIST _et_sanitizers AND "thread" IN_LIST _et_sanitizers)
    message(FATAL_ERROR "ET_SANITIZE: address and thread cannot be combined; build twice")
  endif()
  set(_et_flags "-fsanitize=${ET_SANITIZE}" -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_et_flags})
  # Sanitizer trees compile at -O1 with line tables only (these come after the build
  # type's -O2 -g, so they win): what a sanitizer's report needs (file:line stacks), in
  # about half the compile time of -O2 -g (kernels/convert.cc: clang ASan+UBSan 13.0 s
  # -> 6.7 s, GCC TSan 4.5 s -> 2.6 s). CI builds two such trees from a cold cache.
  add_compile_options(-O1 $<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>)
  add_link_options(${_et_flags})
  message(STATUS "et-serverd: sanitizers ${ET_SANITIZE}")
endif()

# Applies the project's warning policy to one of its own targets.
function(et_project_target target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic
    $<$<BOOL:${ET_WERROR}>:-Werror>)
endfunction()
