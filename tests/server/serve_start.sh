# Sourced by the curl tests of `peak serve` (serve_http.sh, serve_load.sh), which
# set peak, model and work first.
# start_server NAME ARGS...: starts peak serve with ARGS on a free port, its
# stderr in $work/NAME.log, and waits until it listens; sets pid, port and base.
start_server() {
  local name=$1
  shift
  # Emptied here, not by the redirection below: that runs in the child, which
  # may start after the first look at the log, and a log left by an earlier
  # run would then give its port.
  : >"$work/$name.log"
  port=
  "$peak" serve -m "$model" --port 0 -t 1 "$@" 2>"$work/$name.log" &
  pid=$!
  for _ in $(seq 100); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$work/$name.log" | grep -o '[0-9]*$')
    [[ -n $port ]] && break
    sleep 0.1
  done
  if [[ -z ${port:-} ]]; then
    kill -TERM "$pid" 2>/dev/null
    cat "$work/$name.log"
    echo "FAIL: the server did not start"
    exit 1
  fi
  base=http://127.0.0.1:$port
}
