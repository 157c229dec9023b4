# Installs libpeak, its one public header, the `peak` tool (PEAK_BUILD_CLI), the
# demo model, a CMake package (find_package(peak) -> peak::peak) and a
# pkg-config file. `cmake --install` also works after building only the library
# (`--target peak`): the tool is then left out.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS peak EXPORT peakTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/peak/peak.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/peak)
if(TARGET peak_cli)
  if(PEAK_BUILD_SHARED)
    # The installed tool finds libpeak beside it, wherever the prefix is.
    set_target_properties(peak_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  endif()
  install(TARGETS peak_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
endif()
# The demo model: `peak chat` runs it without -m (found next to the installed
# binary), and programs built against the package can try it.
install(FILES ${PROJECT_SOURCE_DIR}/tests/data/stories260K.gguf DESTINATION ${CMAKE_INSTALL_DATADIR}/peak)

# What a static libpeak needs when a C program links it with the C compiler: the
# libraries the C++ compiler links by itself and the C compiler does not
# (libstdc++ and libm with GCC), and the threads library where it is separate.
set(PEAK_CXX_RUNTIME_LIBS)
foreach(_lib ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
  if(NOT _lib IN_LIST CMAKE_C_IMPLICIT_LINK_LIBRARIES AND NOT _lib IN_LIST PEAK_CXX_RUNTIME_LIBS)
    list(APPEND PEAK_CXX_RUNTIME_LIBS ${_lib})
  endif()
endforeach()
if(NOT m IN_LIST PEAK_CXX_RUNTIME_LIBS)
  list(APPEND PEAK_CXX_RUNTIME_LIBS m)  # the kernels call libm themselves
endif()

set(_peak_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/peak)
install(EXPORT peakTargets NAMESPACE peak:: DESTINATION ${_peak_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/peakConfig.cmake.in
  ${PROJECT_BINARY_DIR}/peakConfig.cmake INSTALL_DESTINATION ${_peak_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/peakConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/peakConfig.cmake ${PROJECT_BINARY_DIR}/peakConfigVersion.cmake
  DESTINATION ${_peak_cmake_dir})

# pkg-config: `pkg-config --cflags --libs peak` is all a C or C++ program needs,
# with or without --static. A static libpeak lists its C++ runtime in Libs; a
# shared one links it itself, and Libs.private keeps the list for --static.
find_package(Threads REQUIRED)  # CMAKE_THREAD_LIBS_INIT, in this scope
set(_peak_pc_runtime)
foreach(_lib ${PEAK_CXX_RUNTIME_LIBS})
  string(APPEND _peak_pc_runtime " -l${_lib}")
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND _peak_pc_runtime " ${CMAKE_THREAD_LIBS_INIT}")
endif()
if(PEAK_BUILD_SHARED)
  set(PEAK_PC_LIBS "")
  set(PEAK_PC_LIBS_PRIVATE "${_peak_pc_runtime}")
  set(PEAK_PC_CFLAGS " -DPEAK_SHARED")
else()
  set(PEAK_PC_LIBS "${_peak_pc_runtime}")
  set(PEAK_PC_LIBS_PRIVATE "")
  set(PEAK_PC_CFLAGS "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/peak.pc.in ${PROJECT_BINARY_DIR}/peak.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/peak.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
