# Build options shared by every target of the project.
#
#   ET_SANITIZE   empty, or a comma list of address, undefined, thread
#                 (address and thread cannot be combined)
#   ET_WERROR     warnings are errors in the project's own code (default ON)
#   ET_FUZZ       build the libFuzzer targets (clang only)

find_program(ET_CCACHE ccache)
if(ET_CCACHE)
  # Paths under the source tree are hashed relative to the build directory, and the
  # build directory itself is not hashed: an object compiled alike in two build trees
  # (build/ and build-tsan/, see et_uninstrumented) is compiled once.
  set(_et_launcher "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
                   CCACHE_NOHASHDIR=1 "${ET_CCACHE}")
  set(CMAKE_C_COMPILER_LAUNCHER ${_et_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_et_launcher})
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

# ET_TSAN: whether this is a ThreadSanitizer tree (targets that mean nothing there skip).
set(ET_TSAN OFF)
if(ET_SANITIZE)
  string(REPLACE "," ";" _et_sanitizers "${ET_SANITIZE}")
  if("thread" IN_LIST _et_sanitizers)
    set(ET_TSAN ON)
  endif()
  foreach(_s IN LISTS _et_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "ET_SANITIZE: unknown sanitizer '${_s}'; use address, undefined or thread")
    endif()
  endforeach()
  if("address" IN_LIST _et_sanitizers AND "thread" IN_LIST _et_sanitizers)
    message(FATAL_ERROR "ET_SANITIZE: address and thread cannot be combined; build twice")
  endif()
  set(_et_flags "-fsanitize=${ET_SANITIZE}" -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # Sanitizer trees keep line tables only, all a report needs (file:line stacks); these
  # come after the build type's -O2 -g, so they win. CI builds two such trees from a
  # cold cache: kernels/util/convert.cc compiles in 13.0 s with clang ASan+UBSan at -O2 -g,
  # 6.7 s at -O1 -gline-tables-only; with GCC TSan 4.5 s at -O2 -g, 3.4 s at -O2 -g1.
  # TSan stays at -O2: at -O1 the tests export more of std::string's members, gRPC
  # (uninstrumented) then runs our instrumented copies, and TSan reports gRPC's own
  # hand-offs as races (seen in ClientReconnect).
  if(ET_TSAN)
    set(_et_debug_flags -g1)
  else()
    set(_et_debug_flags -O1 $<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>)
  endif()
  add_compile_options(${_et_flags} ${_et_debug_flags})
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
    # The mutex-guarded state's annotations (port/thread_annotations.h), checked.
    $<$<CXX_COMPILER_ID:Clang>:-Wthread-safety>
    $<$<BOOL:${ET_WERROR}>:-Werror>)
endfunction()

# et_uninstrumented(target): under TSan, compiles `target` exactly as the normal build
# does (no sanitizer, the build type's flags), so ccache serves its objects from the
# normal tree's. For code whose threads only split work the runtime's pool hands out
# (the kernels): TSan's purpose here is the daemon's and clients' concurrency. Its
# accesses are then invisible to TSan (no reports from it, none about it).
function(et_uninstrumented target)
  if(NOT ET_TSAN)
    return()
  endif()
  get_target_property(_opts ${target} COMPILE_OPTIONS)
  list(REMOVE_ITEM _opts ${_et_flags} ${_et_debug_flags})
  set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "${_opts}")
endfunction()
