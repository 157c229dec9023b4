#!/usr/bin/env bash
# A bounded load test of `peak serve` on loopback: 8 clients x 20 requests
# (chat, streamed and not, and completions) on --parallel 2. Every request must
# answer 200, or 503 when the queue is full (the documented refusal); no slot
# may stay busy afterwards; after a first round of the same load, the resident
# memory must come back to its idle size within 5 % (the first round grows the
# allocator's per-thread arenas to what this concurrency needs).
# Usage: serve_load.sh PEAK MODEL WORKDIR [sanitized]: a sanitizer build's
# allocator keeps freed memory in quarantine, so there the memory is reported,
# not bounded. Exit 77 (skipped) without curl, but in CI
# (CI=true).
set -uo pipefail
peak=$1 model=$2 work=$3 build=${4:-plain}
if ! command -v curl >/dev/null; then
  [[ ${CI:-} == true ]] && { echo "curl is missing (CI installs it)"; exit 1; }
  echo "curl is missing: skipped"
  exit 77
fi
mkdir -p "$work"
rm -f "$work"/load-*.codes

source "$(dirname "$0")/serve_start.sh"
start_server load --parallel 2 --queue 4 -c 1024
trap 'kill -TERM $pid 2>/dev/null' EXIT

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }

# client ID REQUESTS: the HTTP status of each request, one a line.
client() {
  local id=$1 n=$2 i body
  for ((i = 0; i < n; i++)); do
    case $(((id + i) % 3)) in
      0) body="{\"messages\": [{\"role\": \"user\", \"content\": \"Client $id asks $i.\"}], \"max_tokens\": 24}"
         url=$base/v1/chat/completions ;;
      1) body="{\"messages\": [{\"role\": \"user\", \"content\": \"Once upon a time $id\"}], \"max_tokens\": 24, \"stream\": true}"
         url=$base/v1/chat/completions ;;
      2) body="{\"prompt\": \"Lily and Tom $i\", \"max_tokens\": 24}"
         url=$base/v1/completions ;;
    esac
    curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' -d "$body" "$url" >>"$work/load-$id.codes"
  done
}

round() {
  local n=$1 c
  for c in $(seq 8); do client "$c" "$n" & done
  wait $(jobs -p | grep -v "^$pid$")
}

idle_wait() {
  for _ in $(seq 100); do
    [[ $(curl -s "$base/health") == *'"slots_processing":0,"queued":0'* ]] && return 0
    sleep 0.1
  done
  return 1
}

round 20  # warm-up: both slots' sessions and contexts and the allocator's arenas exist now
idle_wait || { echo "FAIL: slots busy after the warm-up"; exit 1; }
idle=$(rss_kb)
rm -f "$work"/load-*.codes
start=$SECONDS
round 20
idle_wait || { echo "FAIL: a slot stays busy after the load: $(curl -s "$base/health")"; exit 1; }
after=$(rss_kb)
codes=$(cat "$work"/load-*.codes | sort | uniq -c | tr -s ' ' | tr '\n' ';')
total=$(cat "$work"/load-*.codes | wc -l)
bad=$(grep -vc -E '^(200|503)$' "$work"/load-*.codes | awk -F: '{ s += $2 } END { print s }')
echo "160 requests in $((SECONDS - start)) s: $codes RSS idle ${idle} kB, after ${after} kB"
echo "metrics: $(curl -s "$base/metrics")"
status=0
[[ $total == 160 ]] || { echo "FAIL: $total answers of 160"; status=1; }
[[ $bad == 0 ]] || { echo "FAIL: $bad requests failed with other than 503"; status=1; }
[[ $build == sanitized ]] || awk -v a="$after" -v i="$idle" 'BEGIN { d = (a - i) / i; if (d < 0) d = -d; exit !(d <= 0.05) }' ||
  { echo "FAIL: RSS $after kB after the load, more than 5 % from the idle $idle kB"; status=1; }
kill -TERM "$pid"
wait "$pid"
exit_status=$?
trap - EXIT
[[ $exit_status == 0 ]] || { echo "FAIL: exit status $exit_status after SIGTERM"; status=1; }
exit $status
