#!/usr/bin/env bash
# Checks the C and C++ lines changed since .clang-format arrived against it
# (clang-format from Debian's clang-format package): older lines keep their
# layout until a change touches them. Prints the reformatting it wants and
# fails when there is any.
#   .ci/format-check.sh [BASE]   (BASE: the commit to compare with; default:
#                                 the one that added .clang-format)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)}
if [[ -z "$base" ]] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "format check: no base commit in this checkout (shallow clone?); nothing checked" >&2
  exit 0
fi
out=$(git clang-format --binary clang-format-14 --diff --extensions c,h,cpp,inc "$base" -- \
  include src kernels tools tests bench)
case "$out" in
  "" | "no modified files to format" | "clang-format did not modify any files") echo "format check: clean since ${base:0:7}" ;;
  *)
    printf '%s\n' "$out"
    echo "format check: the lines above, changed since ${base:0:7}, differ from .clang-format" >&2
    exit 1
    ;;
esac
