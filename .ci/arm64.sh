#!/usr/bin/env bash
# arm64 cross build, tests under qemu-user. Run from anywhere in the checkout;
# as root on a fresh Debian 12 (CI=true) it installs what is missing first.
#
#   1. cross-build with cmake/aarch64-linux-gnu.cmake (no benchmarks)
#   2. run every test_kernels* and test_core* executable under
#      qemu-aarch64 -cpu max (best path: i8mm), then again with PEAK_ISA=dotprod
#      and PEAK_ISA=neon (the baseline NEON kernels), and the quantizers' byte checks against
#      llama.cpp's files (test_model ReferenceQuant.*) once
#   3. compile every kernels header and arm/ fragment on its own with the cross
#      compiler (the layer check's header test; x86 builds cannot compile them)
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
  -DPEAK_BUILD_BENCH=OFF -DPEAK_WERROR=$werror
targets=()
for t in $(cmake --build "$BUILD" --target help | sed -n 's/^\.\.\. \(test_\(kernels\|core\)[^ ]*\).*/\1/p'); do
  targets+=("$t")
done
((${#targets[@]})) || { echo "no test_kernels*/test_core* targets" >&2; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]}" test_model
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -R '^layering_headers_kernels$'

run() {
  local label=$1 filter=$2
  shift 2
  for exe in $(find "$BUILD/tests" -type f -perm -u+x \( -name 'test_kernels*' -o -name 'test_core*' \) | sort); do
    echo "--- $(basename "$exe") [$label]"
    env "$@" qemu-aarch64 -L "$SYSROOT" -cpu max "$exe" --gtest_brief=1 --gtest_filter="$filter"
  done
}
run "cpu max" '*'
run "PEAK_ISA=dotprod" '*' PEAK_ISA=dotprod
run "PEAK_ISA=neon" '*' PEAK_ISA=neon
echo "--- test_model [ReferenceQuant]"
qemu-aarch64 -L "$SYSROOT" -cpu max "$BUILD/tests/model/test_model" --gtest_brief=1 --gtest_filter='*ReferenceQuant*'
echo "arm64: all tests passed"
