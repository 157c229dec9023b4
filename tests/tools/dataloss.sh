#!/usr/bin/env bash
# Data loss by the files the `peak` command writes: every writer is aimed at a
# regular file, a symbolic link, a dangling link, a FIFO, a device, a
# directory, its own input and a full tmpfs, and interrupted by SIGINT,
# SIGTERM, SIGHUP and SIGQUIT while it writes. After each, the old target must
# be byte-identical (a refusal names the path) or the new file complete, and no
# temporary "*.partial*" file may be left. Prints one line per case and fails
# on any FAIL; a case the machine cannot stage (no mknod, no tmpfs) is a SKIP.
#   dataloss.sh PEAK MODEL TEXT WORKDIR
# MODEL is stories260K.gguf (its expected shapes are spelled out below), TEXT
# a few KiB of prose.
set -u
if [[ ${1:-} == --full-tmpfs ]]; then
  full_tmpfs_only=1
  shift
fi
peak=$1 model_src=$2 text_src=$3
work=$4/dataloss
ulimit -c 0  # SIGQUIT's default action dumps core
TIMEOUT=60   # seconds for any one command; a FIFO must not block a writer

results=$work/results
in=$work/in
if [[ -z ${full_tmpfs_only:-} ]]; then
  rm -rf "$work"
  mkdir -p "$in"
  : >"$results"
  cp "$model_src" "$in/m.gguf"
  cp "$text_src" "$in/text.txt"
  printf 'Once upon a time' >"$in/prompt.txt"
  "$peak" lora synth "$in/m.gguf" "$in/a.gguf" --rank 4 >/dev/null 2>&1 || { echo "cannot make the adapter" >&2; exit 1; }
  for f in "$in"/*; do cp "$f" "$f.orig"; done
fi

record() {  # record WRITER CASE PASS|FAIL|SKIP [why]
  printf '%s|%s|%s|%s\n' "$1" "$2" "$3" "${4:-}" >>"$results"
}

# The writers. write_<w> OUT runs the writer onto OUT (stdout and stderr in
# $case_dir/out, $case_dir/err); complete_<w> OUT says whether OUT is the
# whole file it writes; inputs_<w> lists the files it reads.
write_quantize() { timeout $TIMEOUT "$peak" quantize "$in/m.gguf" "$1" Q8_0 -t 1; }
complete_quantize() { "$peak" inspect "$1" 2>/dev/null | grep -q '^totals: 48 tensors, 292800 parameters'; }
inputs_quantize() { echo "$in/m.gguf"; }

# A SmolLM2-135M of random weights: the smallest preset, seconds to write.
write_synth() {
  timeout $TIMEOUT "$peak" synth --preset smollm2-135m --type Q4_0 -o "$1" ${synth_vocab:+--vocab-from "$synth_vocab"}
}
complete_synth() { "$peak" inspect "$1" 2>/dev/null | grep -q '^totals: 272 tensors, 134515008 parameters'; }
inputs_synth() { :; }  # --vocab-from, below (it needs a model of SmolLM2's vocabulary size)

# stories260K's 5 layers x 7 projections, an A and a B matrix each.
write_lora_synth() { timeout $TIMEOUT "$peak" lora synth "$in/m.gguf" "$1" --rank 4; }
complete_lora_synth() { "$peak" inspect "$1" 2>/dev/null | grep -q '^LoRA adapter for llama: 35 matrices, rank 4'; }
inputs_lora_synth() { echo "$in/m.gguf"; }

write_lora_merge() { timeout $TIMEOUT "$peak" lora merge "$in/m.gguf" "$in/a.gguf" "$1" -t 1; }
complete_lora_merge() { complete_quantize "$1"; }
inputs_lora_merge() { printf '%s\n' "$in/m.gguf" "$in/a.gguf"; }

# peak chat goes on after a failed /save (the conversation is not lost): a
# refusal is its message, whatever the exit status.
write_chat_save() {
  printf 'Once\n/save %s\n' "$1" | timeout $TIMEOUT "$peak" chat -m "$in/m.gguf" -n 4 -t 1
  local rc=$?
  if ((rc == 0)) && grep -q "peak chat: .*'$1'" "$case_dir/err"; then return 1; fi
  return $rc
}
complete_chat_save() { echo /stats | "$peak" chat -m "$in/m.gguf" --load "$1" 2>/dev/null | grep -q '^(restored .*: 1 turns)'; }
inputs_chat_save() { echo "$in/m.gguf"; }

# BOS + 4 tokens: a 16-byte header, 5 ids and 5 rows of 512 logits.
write_run_logits() { timeout $TIMEOUT "$peak" run -m "$in/m.gguf" -f "$in/prompt.txt" -n 1 -t 1 --logits-out "$1"; }
complete_run_logits() { [[ $(stat -c %s "$1") == $((16 + 4 * 5 + 4 * 5 * 512)) ]]; }
inputs_run_logits() { printf '%s\n' "$in/m.gguf" "$in/prompt.txt"; }

# 2 chunks of 64 tokens: a 20-byte header, the tokens, and the logits and
# log-sum-exp of the second half of each chunk (tests/tools/output_files.cmake).
write_perplexity_kl() {
  timeout $TIMEOUT "$peak" perplexity -m "$in/m.gguf" -f "$in/text.txt" -c 64 --chunks 2 -t 1 --kl-divergence-base "$1"
}
complete_perplexity_kl() { [[ $(stat -c %s "$1") == $((20 + 4 * 2 * 64 + 2 * (64 - 1 - 32) * (512 + 4) * 2)) ]]; }
inputs_perplexity_kl() { printf '%s\n' "$in/m.gguf" "$in/text.txt"; }

write_bench_csv() {
  timeout $TIMEOUT "$peak" bench --chat -m "$in/m.gguf" --turns 2 --user-tokens 4 --answer-tokens 2 --modes none -t 1 \
    --think-time 0 --csv "$1"
}
complete_bench_csv() {
  [[ $(head -n 1 "$1") == mode,turn,seconds,rebuilt,worker_busy,rebuild,catch_up,window_shift,prefill,generation,settle ]] &&
    [[ $(cut -d, -f1-2 "$1" | tail -n +2 | tr '\n' ' ') == "none,1 none,2 " ]]
}
inputs_bench_csv() { echo "$in/m.gguf"; }

# peak chat at a terminal appends each message to $XDG_STATE_HOME/peak/history
# (a pseudo-terminal from script(1); the line editor drops keys typed before
# it starts, hence the pause). A file it cannot use is a warning, and the
# chat goes on.
write_history() {
  { sleep 1; printf 'Hello\r/quit\r'; } | XDG_STATE_HOME=${1%/peak/history} TERM=xterm \
    timeout $TIMEOUT script -qec "'$peak' chat -m '$in/m.gguf' -n 2 -t 1" /dev/null >&2
  local rc=$?
  if ((rc == 0)) && grep -q "history file '$1'" "$case_dir/err"; then return 1; fi
  return $rc
}
complete_history() { [[ $(cat "$1") == $'Hello\n/quit' || $(cat "$1") == $'old\nHello\n/quit' ]]; }

writers=(quantize synth lora_synth lora_merge chat_save run_logits perplexity_kl bench_csv history)

# A fresh directory for a case; the target is $case_dir/target (the history
# file's own path for history), what it points to (if anything) in
# $case_dir/real/.
new_case() {
  case_dir=$work/$1-$2
  rm -rf "$case_dir"
  mkdir -p "$case_dir/real"
  t=$case_dir/target
  if [[ $1 == history ]]; then
    t=$case_dir/state/peak/history
    mkdir -p "${t%/history}"
  fi
}

run_writer() {  # run_writer WRITER OUT: the writer's exit status
  "write_$1" "$2" >"$case_dir/out" 2>"$case_dir/err" </dev/null
}

# Temporary files left anywhere a writer could have put one.
left_partials() { find "$case_dir" "$in" -name '*.partial*' 2>/dev/null; }

# Says which input changed, and puts it back for the cases after.
inputs_intact() {
  local f
  for f in "$in"/*.orig; do
    cmp -s "$f" "${f%.orig}" && continue
    echo "${f%.orig} changed"
    cp "$f" "${f%.orig}"
  done
}

# Checks common to every case: no temporary file, the inputs untouched.
finish() {  # finish WRITER CASE FAILURE-OR-EMPTY
  local why=$3 left changed
  left=$(left_partials)
  [[ -z $left ]] || why+="${why:+; }left behind: ${left//$'\n'/ }"
  changed=$(inputs_intact)
  [[ -n $why ]] || why=$changed
  if [[ -z $why ]]; then record "$1" "$2" PASS; else record "$1" "$2" FAIL "$why"; fi
}

# A refusal: a failure within the time limit whose message names the path
# (or, for the command's own input, the input it is).
refused() {  # refused RC PATH [INPUT]
  if (($1 == 124)); then echo "still running after ${TIMEOUT} s"; return; fi
  if (($1 == 0)); then echo "exit status 0"; return; fi
  grep -qF -e "'$2'" ${3:+-e "'$3'"} "$case_dir/err" ||
    echo "the message does not name '$2': $(head -c 300 "$case_dir/err")"
}

case_regular() {  # an old file is replaced by a whole new one
  new_case "$1" regular
  local why=""
  echo old >"$t"
  run_writer "$1" "$t" || why="exit status $?: $(tail -c 300 "$case_dir/err")"
  [[ -n $why ]] || "complete_$1" "$t" || why="the new file is not complete"
  finish "$1" regular "$why"
}

case_symlink() {  # the link stays, the file it points to is replaced
  new_case "$1" symlink
  local why=""
  echo old >"$case_dir/real/file"
  ln -s "$case_dir/real/file" "$t"
  run_writer "$1" "$t" || why="exit status $?: $(tail -c 300 "$case_dir/err")"
  [[ -n $why || $(readlink "$t") == "$case_dir/real/file" ]] || why="the link was replaced"
  [[ -n $why ]] || "complete_$1" "$case_dir/real/file" || why="the file the link names is not complete"
  finish "$1" symlink "$why"
}

case_dangling() {  # the link stays, the file it names is created
  new_case "$1" dangling-link
  local why=""
  ln -s "$case_dir/real/new" "$t"
  run_writer "$1" "$t" || why="exit status $?: $(tail -c 300 "$case_dir/err")"
  [[ -n $why || $(readlink "$t") == "$case_dir/real/new" ]] || why="the link was replaced"
  [[ -n $why ]] || "complete_$1" "$case_dir/real/new" || why="the file the link names is not complete"
  finish "$1" dangling-link "$why"
}

case_fifo() {  # refused at once: no reader ever comes
  new_case "$1" fifo
  local why=""
  mkfifo "$t"
  run_writer "$1" "$t"
  why=$(refused $? "$t")
  [[ -n $why || -p $t ]] || why="the FIFO is gone"
  finish "$1" fifo "$why"
}

case_device() {  # a copy of /dev/null, else a link to it: refused, the node kept
  new_case "$1" device
  local why="" kind=device
  if ! mknod "$t" c 1 3 2>/dev/null; then
    ln -s /dev/null "$t"
    kind=device-link
  fi
  run_writer "$1" "$t"
  why=$(refused $? "$t")
  [[ -n $why || $(stat -L -c %F:%t:%T "$t") == "character special file:1:3" ]] || why="the device node changed"
  finish "$1" "$kind" "$why"
}

case_directory() {  # refused, the directory and its files kept
  new_case "$1" directory
  local why=""
  mkdir "$t"
  echo kept >"$t/file"
  run_writer "$1" "$t"
  why=$(refused $? "$t")
  [[ -n $why || $(cat "$t/file") == kept ]] || why="the directory's file changed"
  finish "$1" directory "$why"
}

case_own_input() {  # each input by its name and through a link: refused
  new_case "$1" own-input
  local input why="" rc
  for input in $("inputs_$1"); do
    ln -sf "$input" "$case_dir/link"
    for t in "$input" "$case_dir/link"; do
      run_writer "$1" "$t"
      rc=$?
      why=$(refused $rc "$t" "$input")
      [[ -z $why ]] || break 2
    done
  done
  finish "$1" own-input "$why"
}

# A tmpfs with no space left: the write fails, the old file stays whole. Run
# in a mount namespace of its own (this script again, with --full-tmpfs), so
# that no mount outlives the test.
case_full_tmpfs() {
  new_case "$1" full-tmpfs
  local t=$case_dir/real/target why=""
  if ! mount -t tmpfs -o size=256k tmpfs "$case_dir/real" 2>"$case_dir/err"; then
    record "$1" full-tmpfs SKIP "cannot mount a tmpfs: $(head -c 200 "$case_dir/err")"
    return
  fi
  echo old >"$t"
  cp "$t" "$case_dir/old"
  head -c 1M /dev/zero >"$case_dir/real/filler" 2>/dev/null  # up to ENOSPC
  run_writer "$1" "$t"
  why=$(refused $? "$t")
  cmp -s "$t" "$case_dir/old" || why+="${why:+; }the old file changed"
  finish "$1" full-tmpfs "$why"
  umount "$case_dir/real"
}

if [[ -n ${full_tmpfs_only:-} ]]; then
  for w in "${writers[@]}"; do [[ $w == history ]] || case_full_tmpfs "$w"; done
  exit 0
fi

# A signal mid-write: the writer dies of it, the old file is byte-identical and
# the temporary file is gone. Only the writers that take long enough to be
# caught writing: a model of SmolLM2-135M's size for quantize and lora merge,
# a long generation after the logits for run, a long text for perplexity, a
# long benchmark for bench (whose CSV is opened at the start and written at
# the end). peak chat's /save and peak lora synth write the tiny model's few
# KiB in about a millisecond, too fast to aim a signal at; they use the same
# writer as quantize and lora merge (the library's peak_file_writer).
signal_input() {
  local big=$work/big
  mkdir -p "$big"
  "$peak" synth --preset smollm2-135m --type F16 -o "$big/f16.gguf" >/dev/null 2>&1 &&
    "$peak" lora synth "$big/f16.gguf" "$big/adapter.gguf" --rank 8 >/dev/null 2>&1 &&
    head -c 40000 < <(yes "$(cat "$in/text.txt")") >"$big/text.txt"
}
signal_write_quantize() { exec "$peak" quantize "$work/big/f16.gguf" "$1" Q8_0 -t 1; }
signal_write_lora_merge() { exec "$peak" lora merge "$work/big/f16.gguf" "$work/big/adapter.gguf" "$1" -t 1; }
signal_write_synth() { exec "$peak" synth --preset smollm2-135m --type Q4_0 -o "$1"; }
# The larger model: stories260K may end its answer within milliseconds.
signal_write_run_logits() {
  exec "$peak" run -m "$work/big/f16.gguf" -f "$in/prompt.txt" -n 2000 -c 2048 --temp 0 -t 1 --logits-out "$1"
}
signal_write_perplexity_kl() {
  exec "$peak" perplexity -m "$in/m.gguf" -f "$work/big/text.txt" -c 64 -t 1 --kl-divergence-base "$1"
}
signal_write_bench_csv() {
  exec "$peak" bench --chat -m "$in/m.gguf" --turns 2000 --user-tokens 4 --answer-tokens 2 --modes none -t 1 --think-time 0 \
    --csv "$1"
}

# The writer runs as the job itself (exec), so that the signal reaches it.
case_signal() {  # case_signal WRITER INT|TERM|HUP|QUIT
  new_case "$1" "sig$2"
  local t=$case_dir/target why="" pid rc i f caught="" attempt=0
  echo old >"$t"
  # A writer that ends before it is seen writing (this shell kept off the CPU
  # meanwhile) is run again, at most three times.
  while [[ -z $caught ]] && ((attempt++ < 3)); do
    # A job of its own: a script's background commands otherwise start with
    # SIGINT and SIGQUIT ignored, which peak keeps ignored.
    set -m
    "signal_write_$1" "$t" >"$case_dir/out" 2>"$case_dir/err" </dev/null &
    pid=$!
    set +m
    # The temporary file exists (and, for the model writers, holds some bytes).
    for ((i = 0; i < 3000; ++i)); do
      for f in "$case_dir"/target.partial*; do
        [[ -e $f && ($1 == bench_csv || $1 == run_logits || -s $f) ]] && caught=1
      done
      [[ -z $caught ]] || break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.01
    done
    if [[ -z $caught ]]; then
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      why="never caught writing (exit status $?)"
      echo old >"$t"
    fi
  done
  if [[ -n $caught ]]; then
    kill "-$2" "$pid"
    { wait "$pid"; } 2>/dev/null  # without the shell's note of how the job ended
    rc=$?
    why=""
    [[ $(kill -l "$rc" 2>/dev/null) == "$2" ]] || why="exit status $rc, not death by SIG$2"
    cmp -s "$t" <(echo old) || why+="${why:+; }the old file changed"
  fi
  finish "$1" "SIG$2" "$why"
}

for w in "${writers[@]}"; do
  case_regular "$w"
  case_symlink "$w"
  case_dangling "$w"
  case_fifo "$w"
  case_device "$w"
  case_directory "$w"
  if [[ $w == history ]]; then
    record history own-input SKIP "peak chat reads no file the history could be aimed at"
  elif [[ $w == synth ]]; then
    # A model of SmolLM2's vocabulary size, read by --vocab-from and written over.
    cp "$case_dir/../synth-regular/target" "$in/vocab.gguf" && cp "$in/vocab.gguf" "$in/vocab.gguf.orig"
    inputs_synth() { echo "$in/vocab.gguf"; }
    synth_vocab=$in/vocab.gguf
    case_own_input synth
    synth_vocab=""
    rm -f "$in/vocab.gguf" "$in/vocab.gguf.orig"
  else
    case_own_input "$w"
  fi
done

# The full tmpfs: in a mount namespace (user namespace too when not root).
if unshare -m true 2>/dev/null; then
  unshare -m -- bash "$0" --full-tmpfs "$@"
elif unshare -rm true 2>/dev/null; then
  unshare -rm -- bash "$0" --full-tmpfs "$@"
else
  for w in "${writers[@]}"; do
    [[ $w == history ]] || record "$w" full-tmpfs SKIP "no mount namespace (unshare -m, unshare -rm)"
  done
fi

if signal_input; then
  for w in quantize lora_merge synth run_logits perplexity_kl bench_csv; do
    for s in INT TERM HUP QUIT; do case_signal "$w" "$s"; done
  done
else
  record all signals FAIL "cannot make the model to interrupt"
fi
for w in chat_save lora_synth; do record "$w" signals SKIP "written in a millisecond: no time to aim a signal"; done
record history full-tmpfs SKIP "an append of a few bytes: a full disk fails it whole, as a directory does above"
record history signals SKIP "one write() per message: nothing for a signal to interrupt"

printf '%-14s %-14s %s\n' writer case result
fails=0
while IFS='|' read -r w c r why; do
  printf '%-14s %-14s %s%s\n' "$w" "$c" "$r" "${why:+ ($why)}"
  [[ $r != FAIL ]] || ((++fails))
done <"$results"
rm -rf "$work/big"
if ((fails)); then
  echo "$fails case(s) failed"
  exit 1
fi
echo "no data lost"
