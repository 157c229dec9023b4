#!/usr/bin/env bash
# arm64 cross build, tests under qemu-user. Run from anywhere in the checkout;
# as root on a fresh Debian 12 (CI=true) it installs what is missing first.
#
#   1. cross-build with cmake/aarch64-linux-gnu.cmake (no benchmarks)
#   2. run every test_kernels* and test_core* executable under
#      qemu-aarch64 -cpu max (best path: i8mm), again with PEAK_ISA=dotprod
#      and with PEAK_ISA=neon (the baseline NEON kernels), and the quantizers' byte
#      checks against llama.cpp's files (test_model ReferenceQuant.*) once; the
#      dotprod and neon passes leave out the kernel tests that compare every
#      path the CPU has against scalar themselves (already run for all three
#      paths by the cpu max pass); in two lanes of about equal length
#   3. compile every kernels header and arm/ fragment on its own with the cross
#      compiler (the layer check's header test; x86 builds cannot compile them)
#   4. the libraries an Android app ships, linked as the NDK build links them:
#      libpeak_jni.so (the JNI glue with libpeak inside; jni.h from the host
#      JDK) and, in a second tree, the release libpeak.so, both with 16 KB
#      segment alignment (PEAK_MAX_PAGE_SIZE, the Android default); checked with
#      readelf (every LOAD segment aligned to 0x4000) and nm (libpeak.so exports
#      the C API alone, libpeak_jni.so the Java_* methods and JNI_OnLoad)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD=${BUILD_DIR:-build-arm64}
SYSROOT=/usr/aarch64-linux-gnu

missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
command -v cmake >/dev/null || missing+=(cmake)
test -f /usr/src/googletest/CMakeLists.txt || missing+=(googletest)
command -v javac >/dev/null || missing+=(default-jdk-headless)
if ((${#missing[@]})); then
  if [[ "${CI:-}" == true && $(id -u) == 0 ]]; then
    echo "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing: ${missing[*]} (install them, or run as root with CI=true)" >&2
    exit 1
  fi
fi

werror=OFF
[[ "${CI:-}" == true ]] && werror=ON
cmake -S . -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DPEAK_BUILD_BENCH=OFF -DPEAK_WERROR=$werror -DPEAK_BUILD_JAVA=ON -DPEAK_MAX_PAGE_SIZE=16384
targets=()
for t in $(cmake --build "$BUILD" --target help | sed -n 's/^\.\.\. \(test_\(kernels\|core\)[^ ]*\).*/\1/p'); do
  targets+=("$t")
done
((${#targets[@]})) || { echo "no test_kernels*/test_core* targets" >&2; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]}" test_model
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -R '^layering_headers_kernels$'

# run LABEL TEST_KERNELS_FILTER EXE_PATTERN [VAR=VALUE...]: the matching test_kernels*
# and test_core* executables under qemu, test_kernels* with the given gtest filter;
# fails if any of them failed (set -e does not apply where a lane calls it in a
# && list, so each status is kept here).
run() {
  local label=$1 kernels_filter=$2 pattern=$3 filter status=0
  shift 3
  for exe in $(find "$BUILD/tests" -type f -perm -u+x -name "$pattern" \( -name 'test_kernels*' -o -name 'test_core*' \) | sort); do
    filter='*'
    [[ $(basename "$exe") == test_kernels* ]] && filter=$kernels_filter
    echo "--- $(basename "$exe") [$label]"
    env "$@" qemu-aarch64 -L "$SYSROOT" -cpu max "$exe" --gtest_brief=1 --gtest_filter="$filter" || status=1
  done
  return "$status"
}
reference_quant() {
  echo "--- test_model [ReferenceQuant]"
  qemu-aarch64 -L "$SYSROOT" -cpu max "$BUILD/tests/model/test_model" --gtest_brief=1 --gtest_filter='*ReferenceQuant*'
}
# PEAK_ISA picks the path that kernels_for() and the core ops use; it does not
# change which paths the CPU has. The long kernel tests that loop over every path
# the CPU has (the AllPaths suites, Repack's every-path and quad-path gemms, the
# weighted sums' every-path checks) so compare neon, dotprod and i8mm against
# scalar in the cpu max pass already; the dotprod and neon passes run all the
# rest (every test_core* test, which computes on the selected path, and the
# other kernel tests, a few seconds).
per_isa_kernels='-*AllPaths/*:Repack.EveryPathEqualsItsLayoutsReference:Repack.QuadPaths*:*WeightedSum.EveryPathMatchesScalar*:WeightedSumQ8_0.*'
# The passes run in two lanes side by side (most tests are single-threaded),
# each lane into its own log, printed when both are done. Under qemu, cpu max's
# test_kernels* takes about as long as the dotprod pass's test_core*, and cpu
# max's test_core* about as long as the neon pass and ReferenceQuant together.
logs=$BUILD/qemu-logs
mkdir -p "$logs"
( run "cpu max" '*' 'test_kernels*' && run "PEAK_ISA=dotprod" "$per_isa_kernels" '*' PEAK_ISA=dotprod ) \
  >"$logs/lane1.log" 2>&1 &
lane1=$!
( run "cpu max" '*' 'test_core*' && run "PEAK_ISA=neon" "$per_isa_kernels" '*' PEAK_ISA=neon && reference_quant ) \
  >"$logs/lane2.log" 2>&1 &
lane2=$!
failed=0
wait "$lane1" || failed=1
wait "$lane2" || failed=1
cat "$logs/lane1.log" "$logs/lane2.log"
((failed == 0)) || { echo "arm64: a test under qemu failed (above)" >&2; exit 1; }

# 4. What an Android app ships. The shared libpeak comes from a tree of the
# library alone (its objects are those of the static build, compiled again).
cmake --build "$BUILD" -j"$JOBS" --target peak_jni
cmake -S . -B "$BUILD-shared" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DPEAK_BUILD_SHARED=ON -DPEAK_BUILD_CLI=OFF -DPEAK_BUILD_TESTS=OFF -DPEAK_BUILD_BENCH=OFF -DPEAK_BUILD_JAVA=OFF \
  -DPEAK_WERROR=$werror -DPEAK_MAX_PAGE_SIZE=16384 >/dev/null
cmake --build "$BUILD-shared" -j"$JOBS" --target peak
libpeak=$(readlink -f "$BUILD-shared/src/libpeak.so")
libpeak_jni=$BUILD/tools/bindings/java/libpeak_jni.so
check_16k_segments() {
  local lib=$1 aligns
  aligns=$(readelf -lW "$lib" | awk '$1 == "LOAD" { print $NF }')
  [[ -n $aligns ]] || { echo "$lib: no LOAD segment" >&2; exit 1; }
  for align in $aligns; do
    if [[ $align != 0x4000 ]]; then
      echo "$lib: a LOAD segment is aligned to $align, not 0x4000 (16 KB pages)" >&2
      readelf -lW "$lib" >&2
      exit 1
    fi
  done
  echo "$lib: $(wc -w <<<"$aligns") LOAD segments, each aligned to 0x4000"
}
check_16k_segments "$libpeak"
check_16k_segments "$libpeak_jni"
cmake -DLIBRARY="$libpeak" -DHEADER=include/peak/peak.h -DNM=aarch64-linux-gnu-nm -P cmake/PeakCheckExports.cmake
cmake -DLIBRARY="$libpeak_jni" -DJNI_HEADER="$BUILD/tools/bindings/java/native-headers/peak_Native.h" \
  -DNM=aarch64-linux-gnu-nm -P cmake/PeakCheckExports.cmake
echo "arm64: all tests passed"
