# Installs libpeak, its one public header, the `peak` tool, a CMake package
# (find_package(peak) -> peak::peak) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS peak EXPORT peakTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/peak/peak.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/peak)
install(TARGETS peak_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The demo model `peak chat` runs without -m (found next to the installed binary).
install(FILES ${PROJECT_SOURCE_DIR}/tests/data/stories260K.gguf DESTINATION ${CMAKE_INSTALL_DATADIR}/peak)

set(_peak_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/peak)
install(EXPORT peakTargets NAMESPACE peak:: DESTINATION ${_peak_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/peakConfig.cmake.in
  ${PROJECT_BINARY_DIR}/peakConfig.cmake INSTALL_DESTINATION ${_peak_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/peakConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/peakConfig.cmake ${PROJECT_BINARY_DIR}/peakConfigVersion.cmake
  DESTINATION ${_peak_cmake_dir})

configure_file(${PROJECT_SOURCE_DIR}/cmake/peak.pc.in ${PROJECT_BINARY_DIR}/peak.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/peak.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
