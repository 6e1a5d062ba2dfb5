# Compiler flags shared by every pixpath target, and the sanitizer presets.
find_program(PIXPATH_CCACHE ccache)
if(PIXPATH_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER "${PIXPATH_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${PIXPATH_CCACHE}")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${PIXPATH_CCACHE}")
endif()

add_library(pixpath_flags INTERFACE)
target_compile_options(pixpath_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers>)
# Lock contracts (core/thread_annotations.h) are checked by clang and a broken one fails the
# build. GCC has no such analysis; the asan and tsan presets (CI) and the clang preset build with
# clang.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(pixpath_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety -Werror=thread-safety>)
  # The check must bite: tests/compile_fail/thread_safety_violation.cc, built through these
  # flags, has to be refused for its lock violation (a few seconds per configure).
  if(PROJECT_NAME STREQUAL "pixpath")
    cmake_path(GET CMAKE_CURRENT_LIST_DIR PARENT_PATH _pixpath_root)
    try_compile(_tsa_violation_built
      "${CMAKE_BINARY_DIR}/compile_fail" "${_pixpath_root}/tests/compile_fail"
      pixpath_compile_fail thread_safety_violation
      CMAKE_FLAGS "-DPIXPATH_SOURCE_DIR=${_pixpath_root}" "-DPIXPATH_SANITIZER=none"
                  "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
      OUTPUT_VARIABLE _tsa_out)
    if(_tsa_violation_built)
      message(FATAL_ERROR "clang compiled tests/compile_fail/thread_safety_violation.cc: "
                          "lock contracts are no longer checked (-Werror=thread-safety on "
                          "pixpath_flags, or the macros in core/thread_annotations.h)")
    elseif(NOT _tsa_out MATCHES "error: writing variable 'value_' requires holding mutex 'mu_'")
      message(FATAL_ERROR "tests/compile_fail/thread_safety_violation.cc failed to build, but "
                          "not for its lock violation:\n${_tsa_out}")
    endif()
  endif()
endif()

if(PIXPATH_SANITIZER STREQUAL "asan")
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(PIXPATH_SANITIZER STREQUAL "tsan")
  set(_san -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT PIXPATH_SANITIZER STREQUAL "none")
  message(FATAL_ERROR "PIXPATH_SANITIZER must be none, asan or tsan, not '${PIXPATH_SANITIZER}'")
endif()
if(_san)
  # Quoted: unquoted, the ";" of the list splits the generator expression into broken flags.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:${_san}>")
  add_link_options(${_san})
endif()
