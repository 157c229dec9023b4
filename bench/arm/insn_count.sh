#!/usr/bin/env bash
# Executed arm64 instructions per token and per kernel call, counted under
# qemu-user with ../shared/tools/qemu-insn (README.md in this folder says why
# this is the figure ARM work is judged by). Cross-builds what it needs first.
#
#   bench/arm/insn_count.sh tokens  [options] MODEL...   decode and prefill, per token
#   bench/arm/insn_count.sh kernels [options] MODEL...   every matmul shape of the model
#
# options:
#   --isa LIST      ARM paths to force with PEAK_ISA (default neon,dotprod,i8mm)
#   --build DIR     arm64 build directory (default build-arm64)
#   --no-build      use DIR as it is
#
# tokens: `peak bench` at 1 thread, run twice per figure and differenced, so
# loading, warm-up and the first prompt cancel out: decode = tg12 - tg4 over 8
# tokens, prefill = pp48 - pp16 over 32 tokens (each bench runs its test twice:
# one warm-up, one repetition).
# kernels: for each distinct (type, K, N) weight matrix of layer 0 and the
# output matrix, one mul_mat's kernel call with M = 1 (decode) and M = 64
# (prefill), and the activation conversion, each differenced between 3 and 1
# repetitions; "per token" weighs the calls by how many matrices of that shape
# the model has (the output matrix once, for decode only).
set -euo pipefail
cd "$(dirname "$0")/../.."
SHARED=$(cd .. && pwd)/shared
SYSROOT=/usr/aarch64-linux-gnu

mode=${1:-}
[[ $mode == tokens || $mode == kernels ]] || { sed -n 2,24p "$0" >&2; exit 2; }
shift
isas=neon,dotprod,i8mm
build=build-arm64
do_build=1
models=()
while (($#)); do
  case $1 in
    --isa) isas=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
((${#models[@]})) || { echo "no model given" >&2; exit 2; }
for m in "${models[@]}"; do [[ -f $m ]] || { echo "no such model file: $m" >&2; exit 2; }; done
for tool in qemu-aarch64 aarch64-linux-gnu-g++ gcc; do
  command -v $tool >/dev/null || { echo "missing $tool (apt-get install qemu-user g++-aarch64-linux-gnu gcc)" >&2; exit 1; }
done

if ((do_build)); then
  cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
    -DPEAK_BUILD_BENCH=ON -DPEAK_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j"${JOBS:-2}" --target peak_cli kernel_insns >/dev/null
fi
plugin=$build/insn_count.so
if [[ ! -f $plugin || $SHARED/tools/qemu-insn/insn_count.c -nt $plugin ]]; then
  gcc -O2 -shared -fPIC -o "$plugin" "$SHARED/tools/qemu-insn/insn_count.c"
fi

# Instructions executed by one program run on the path $1.
count() {
  local isa=$1
  shift
  local out
  out=$(PEAK_ISA=$isa qemu-aarch64 -plugin "$plugin" -d plugin -cpu max -L "$SYSROOT" "$@" 2>&1 >/dev/null) ||
    { echo "failed: PEAK_ISA=$isa $*" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^insns: //p' <<<"$out" | tail -1
}

# (a - b) / d in millions, one decimal.
per() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { printf "%.1f", (a - b) / d / 1e6 }'; }

if [[ $mode == tokens ]]; then
  echo "| model | path | decode M insn/token | prefill M insn/token |"
  echo "|---|---|---:|---:|"
  for model in "${models[@]}"; do
    for isa in ${isas//,/ }; do
      bench=("$build/peak" bench -m "$model" -t 1 -r 1 --no-probe)
      tg4=$(count "$isa" "${bench[@]}" -p 0 -n 4)
      tg12=$(count "$isa" "${bench[@]}" -p 0 -n 12)
      pp16=$(count "$isa" "${bench[@]}" -p 16 -n 0)
      pp48=$(count "$isa" "${bench[@]}" -p 48 -n 0)
      echo "| $(basename "$model") | $isa | $(per "$tg12" "$tg4" 16) | $(per "$pp48" "$pp16" 64) |"
    done
  done
  exit 0
fi

# kernels: "type K N count" for every matrix shape (layer 0 times the layer
# count, plus the output matrix: output.weight, else the tied token_embd).
shapes() {
  qemu-aarch64 -cpu max -L "$SYSROOT" "$build/peak" inspect "$1" 2>/dev/null | awk '
    $2 ~ /\.weight$/ && $4 ~ /^\[[0-9]+,$/ && $5 ~ /^[0-9]+\]$/ && $3 != "F32" {
      k = substr($4, 2, length($4) - 2); n = substr($5, 1, length($5) - 1)
      if ($2 ~ /^blk\.0\./) layer0[$3 " " k " " n]++
      else if ($2 ~ /^blk\.[0-9]+\./) { split($2, parts, "."); if (parts[2] + 1 > layers) layers = parts[2] + 1 }
      else if ($2 == "output.weight") output = $3 " " k " " n
      else if ($2 == "token_embd.weight") embd = $3 " " k " " n
    }
    END {
      if (layers == 0) layers = 1
      for (s in layer0) print s, layer0[s] * layers, "layer"
      print (output != "" ? output : embd), 1, "output"
    }' | sort
}

echo "| model | path | type | K x N | matrices | decode call (M insn) | prefill M=64 call (M insn) | convert M=1 (K insn) |"
echo "|---|---|---|---|---:|---:|---:|---:|"
for model in "${models[@]}"; do
  mapfile -t rows < <(shapes "$model")
  for isa in ${isas//,/ }; do
    decode_total=0
    prefill_total=0
    for row in "${rows[@]}"; do
      read -r type k n matrices role <<<"$row"
      probe=("$build/bench/arm/kernel_insns")
      d1=$(count "$isa" "${probe[@]}" gemm "$type" "$k" "$n" 1 1)
      d3=$(count "$isa" "${probe[@]}" gemm "$type" "$k" "$n" 1 3)
      decode=$(per "$d3" "$d1" 2)
      c1=$(count "$isa" "${probe[@]}" convert "$type" "$k" 1 1)
      c3=$(count "$isa" "${probe[@]}" convert "$type" "$k" 1 3)
      convert=$(awk -v a="$c3" -v b="$c1" 'BEGIN { printf "%.1f", (a - b) / 2 / 1e3 }')
      prefill=-
      if [[ $role == layer ]]; then
        p1=$(count "$isa" "${probe[@]}" gemm "$type" "$k" "$n" 64 1)
        p3=$(count "$isa" "${probe[@]}" gemm "$type" "$k" "$n" 64 3)
        prefill=$(per "$p3" "$p1" 2)
        prefill_total=$(awk -v t="$prefill_total" -v p="$prefill" -v c="$matrices" 'BEGIN { print t + p * c / 64 }')
      fi
      decode_total=$(awk -v t="$decode_total" -v d="$decode" -v c="$matrices" 'BEGIN { print t + d * c }')
      echo "| $(basename "$model") | $isa | $type | $k x $n | $matrices | $decode | $prefill | $convert |"
    done
    printf '| %s | %s | **matmuls per token** | | | **%.1f** | **%.1f** | |\n' "$(basename "$model")" "$isa" \
      "$decode_total" "$prefill_total"
  done
done
