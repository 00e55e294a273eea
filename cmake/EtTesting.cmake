include(GoogleTest)

# et_add_gtest(NAME SOURCES src... LIBS lib...)
# A GoogleTest executable registered with CTest, one CTest entry per test case.
# With ET_WITH_TESTS off, the executable is declared (so later settings on it still
# apply) but never built: outside every default target, and not linked to GoogleTest.
function(et_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT ET_WITH_TESTS)
    add_executable(${name} EXCLUDE_FROM_ALL ${ARG_SOURCES})
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE ET_FIXTURES_DIR="${ET_FIXTURES_DIR}")
  et_project_target(${name})
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST)
endfunction()
