# `cmake --install build/<preset> --prefix P`: the public headers (the whole include/pixpath
# tree), the libraries, the `pixpath` command, the runtime-loaded GPU module, a CMake package
# (find_package(pixpath) -> pixpath::core, pixpath::codecs, ...) and pkg-config files
# (pixpath.pc, pixpath-gl.pc). Included last from the top-level CMakeLists.txt, once every
# target exists. scripts/test-install (ctest: install_consumer_test) checks the result.
#
# Libraries link the internal pixpath_flags (warnings) and their build-tree include folder only
# through $<BUILD_INTERFACE:...>: nothing of the source or build tree reaches the package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PIXPATH_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pixpath" CACHE STRING
    "Where pixpath-config.cmake is installed (relative to the prefix)")

# target -> name in the package (pixpath::<name>); the same names work inside this build as
# aliases, so a project that adds pixpath with add_subdirectory() writes the same thing.
set(_pixpath_libraries
  pixpath_core core
  pixpath_codecs codecs
  pixpath_cuda_loader cuda_loader
  pixpath_paint paint
  pixpath_xpra xpra
  pixpath_client client)
if(TARGET pixpath_gl)
  list(APPEND _pixpath_libraries pixpath_gl gl)
endif()
set(_pixpath_targets)
set(_pixpath_components)
while(_pixpath_libraries)
  list(POP_FRONT _pixpath_libraries _target _name)
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_name})
  add_library(pixpath::${_name} ALIAS ${_target})
  list(APPEND _pixpath_targets ${_target})
  list(APPEND _pixpath_components ${_name})
endwhile()

install(TARGETS ${_pixpath_targets} EXPORT pixpathTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The headers by folder, so that a header moving between areas needs no change here.
set(_pixpath_header_excludes PATTERN x11 EXCLUDE)  # pixpath_x11 is not installed (yet)
if(NOT TARGET pixpath_gl)
  set(_pixpath_header_excludes PATTERN gl EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pixpath
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" ${_pixpath_header_excludes})

install(TARGETS pixpath RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The GPU module: never linked, opened at run time by pixpath_cuda_loader, which looks beside
# the program and in <program>/../lib (so bin/pixpath finds lib/libpixpath_cuda.so), on the
# library path, or where PIXPATH_CUDA_MODULE says. nvJPEG usually lives outside the linker's
# search path (the wheel under /opt), so the installed module keeps a run path to it — except in
# a wheel for other machines (PIXPATH_PYTHON_WHEEL, python/CMakeLists.txt), which keeps nothing
# of this one.
if(TARGET pixpath_cuda)
  if(NOT PIXPATH_PYTHON_WHEEL)
    set_target_properties(pixpath_cuda PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
  install(TARGETS pixpath_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(PIXPATH_INSTALLED_CUDA_MODULE "${CMAKE_INSTALL_LIBDIR}/libpixpath_cuda.so")
else()
  set(PIXPATH_INSTALLED_CUDA_MODULE "")
endif()

# Static archives (the default) leave their private libraries to whoever links them: the
# package config finds those again and the .pc files list them under *.private.
get_target_property(_pixpath_type pixpath_core TYPE)
if(_pixpath_type STREQUAL "STATIC_LIBRARY")
  set(PIXPATH_STATIC_LIBRARIES ON)
else()
  set(PIXPATH_STATIC_LIBRARIES OFF)
endif()
set(PIXPATH_HAVE_GL OFF)
if(TARGET pixpath_gl)
  set(PIXPATH_HAVE_GL ON)
endif()
set(PIXPATH_COMPONENTS ${_pixpath_components})

install(EXPORT pixpathTargets
  NAMESPACE pixpath::
  FILE pixpath-targets.cmake
  DESTINATION ${PIXPATH_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pixpath-config.cmake.in
  ${PROJECT_BINARY_DIR}/package/pixpath-config.cmake
  INSTALL_DESTINATION ${PIXPATH_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/pixpath-config-version.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/pixpath-config.cmake
  ${PROJECT_BINARY_DIR}/package/pixpath-config-version.cmake
  DESTINATION ${PIXPATH_INSTALL_CMAKEDIR})

# pkg-config: prefix relative to the .pc file (${pcfiledir}), so a moved prefix still works.
set(_pixpath_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${_pixpath_pcdir}")
  set(PIXPATH_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _pixpath_up "/root/${_pixpath_pcdir}" "/root")
  set(PIXPATH_PC_PREFIX "\${pcfiledir}/${_pixpath_up}")
  string(REGEX REPLACE "/$" "" PIXPATH_PC_PREFIX "${PIXPATH_PC_PREFIX}")
endif()
foreach(_dir INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(PIXPATH_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(PIXPATH_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
set(PIXPATH_PC_LIBS_PRIVATE "-pthread -lyuv")  # libyuv has no pkg-config file
foreach(_lib ${CMAKE_DL_LIBS})
  string(APPEND PIXPATH_PC_LIBS_PRIVATE " -l${_lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/pixpath.pc.in
               ${PROJECT_BINARY_DIR}/package/pixpath.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/pixpath.pc DESTINATION ${_pixpath_pcdir})
if(TARGET pixpath_gl)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/pixpath-gl.pc.in
                 ${PROJECT_BINARY_DIR}/package/pixpath-gl.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/pixpath-gl.pc DESTINATION ${_pixpath_pcdir})
endif()
