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
