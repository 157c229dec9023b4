# Cross build for Linux arm64 with Debian's GNU toolchain; binaries run under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR also lets ctest run them, and, with
# -DPEAK_TEST_SHARDS=0, gtest_discover_tests list their cases at build time):
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DPEAK_BUILD_BENCH=OFF
#   cmake --build build-arm64 -j2
#   qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max build-arm64/peak run -p "Once upon a time"
#
# (-L: where qemu finds the arm64 loader and libraries). .ci/arm64.sh runs the
# kernel and core test executables the same way.
#
# Packages: g++-aarch64-linux-gnu qemu-user. GoogleTest is built from
# /usr/src/googletest by tests/CMakeLists.txt when cross-compiling.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -cpu max: every extension qemu knows (dotprod, i8mm ...); PEAK_ISA lowers the path.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max)
