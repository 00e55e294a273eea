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
