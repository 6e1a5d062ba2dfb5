# pixpath_add_test(NAME SOURCES a_test.cc ... LIBS lib ... [LABELS threaded integration ...]
#                  [TIMEOUT s] [COST s])
# Every test gets the label "unit" unless it names "integration"; the tsan preset runs "threaded".
# COST: about how many seconds the test takes where it is slowest (a sanitizer preset). ctest
# starts the costliest tests first; without it, a fresh build tree (CI's) starts them in file
# order, and a long test that starts last holds its stage open while the other cores idle.
if(PIXPATH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  enable_testing()
  # What the tsan preset runs (label "threaded"), and only that: scripts/test builds this target
  # there instead of everything (the CLI is added where it is defined, src/tools).
  add_custom_target(pixpath_threaded_tests)
endif()
if(PIXPATH_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

function(pixpath_add_test name)
  if(NOT PIXPATH_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "TIMEOUT;COST" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main pixpath_flags)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  set(labels ${T_LABELS})
  if(NOT "integration" IN_LIST labels)
    list(APPEND labels unit)
  endif()
  if("threaded" IN_LIST labels)
    add_dependencies(pixpath_threaded_tests ${name})
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}"
    ENVIRONMENT "PIXPATH_TEST_DATA=${PROJECT_SOURCE_DIR}/tests/data;PIXPATH_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(T_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_COST)
    set_tests_properties(${name} PROPERTIES COST ${T_COST})
  endif()
endfunction()

# pixpath_add_benchmark(NAME SOURCES ... LIBS ...)
function(pixpath_add_benchmark name)
  if(NOT PIXPATH_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES})
  target_link_libraries(${name} PRIVATE ${B_LIBS} benchmark::benchmark benchmark::benchmark_main pixpath_flags)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
endfunction()
