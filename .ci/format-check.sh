#!/usr/bin/env bash
# Checks the C and C++ lines changed since .clang-format arrived against it
# (clang-format from Debian's clang-format package): older lines keep their
# layout until a change touches them. Prints the reformatting it wants and
# fails when there is any.
#   .ci/format-check.sh [BASE]   (BASE: the commit to compare with; default:
#                                 the one that added .clang-format)
# What `git clang-format --diff BASE` checks, without its clang-format process
# per file one after another (two of it cannot run at once: they share one
# temporary index in .git): one process over every changed file, then the
# per-file check of changed lines, JOBS (default 2) at a time, only where that
# one found anything to reformat.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)}
if [[ -z "$base" ]] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "format check: no base commit in this checkout (shallow clone?); nothing checked" >&2
  exit 0
fi
# The changed lines of every file, from one diff: "PATH --lines=A:B ..." per file.
# Hunk headers "@@ -a,b +start[,count] @@" give the changed lines of the work
# tree's file; a count of 0 is a deletion, with no line left to check.
ranges=$(git diff-index -p -U0 --no-color --diff-filter=d "$base" -- include src kernels tools tests bench | awk '
  /^\+\+\+ b\// { if (lines != "") print file lines; file = substr($0, 7); lines = ""; next }
  /^@@ / {
    split($3, r, ",")
    start = substr(r[1], 2); count = (2 in r) ? r[2] : 1
    if (count > 0) lines = lines " --lines=" start ":" (start + count - 1)
  }
  END { if (lines != "") print file lines }' | { grep -E '^[^ ]+\.(c|h|cpp|inc) ' || true; })
if [[ -z "$ranges" ]]; then
  echo "format check: clean since ${base:0:7} (no changed C or C++ line)"
  exit 0
fi

# A file that clang-format would leave as it is whole has no changed line to
# reformat either: one process looks over every file first (a process per file
# costs ten times as long, most of it starting clang-format), and only the files
# with anything to reformat, old lines included, are checked line by line.
untidy=$(cut -d' ' -f1 <<<"$ranges" | xargs clang-format-14 --style=file --dry-run 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: .*/\1/p' | sort -u)
ranges=$(awk 'NR == FNR { untidy[$0]; next } $1 in untidy' <(printf '%s\n' "$untidy") <(printf '%s\n' "$ranges"))

# check_file PATH --lines=...: the reformatting clang-format wants in those
# lines of PATH, as a unified diff (nothing when they follow the style).
check_file() {
  local file=$1
  shift
  clang-format-14 --style=file "$@" "$file" | diff -u --label "a/$file" --label "b/$file" "$file" - || true
}
export -f check_file

out=
if [[ -n "$ranges" ]]; then
  out=$(xargs -L 1 -P "${JOBS:-2}" bash -c 'check_file "$@"' _ <<<"$ranges")
fi
if [[ -z "$out" ]]; then
  echo "format check: clean since ${base:0:7}"
else
  printf '%s\n' "$out"
  echo "format check: the lines above, changed since ${base:0:7}, differ from .clang-format" >&2
  exit 1
fi
