#!/usr/bin/env bash
# `peak serve` over real sockets, driven with curl: the error cases of the
# OpenAI API (bad JSON, wrong types, missing messages, a huge body, a wrong
# key, an unknown route), a client leaving mid-stream, --seed, the loopback
# rule and a graceful SIGTERM; with an embedding model, /v1/embeddings and its
# errors, with a reranker /v1/rerank and its errors, and each model's 400 for
# the others' routes. Usage: serve_http.sh PEAK MODEL WORKDIR
# [EMBEDDING_MODEL RERANKER]. Exit 77 (skipped) without curl, but in CI (CI=true).
set -uo pipefail
peak=$1 model=$2 work=$3 embedding_model=${4:-} reranker=${5:-}
if ! command -v curl >/dev/null; then
  [[ ${CI:-} == true ]] && { echo "curl is missing (CI installs it)"; exit 1; }
  echo "curl is missing: skipped"
  exit 77
fi
mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

source "$(dirname "$0")/serve_start.sh"

stop_server() {
  kill -TERM "$pid"
  wait "$pid"
  local status=$?
  [[ $status == 0 ]] || fail "exit status $status after SIGTERM (want 0)"
}

# expect STATUS BODY_REGEX CURL_ARGS...
expect() {
  local want=$1 pattern=$2
  shift 2
  local out status
  out=$(curl -s -w '\n%{http_code}' "$@")
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  [[ $status == "$want" ]] || fail "$* -> $status (want $want): $out"
  [[ $out =~ $pattern ]] || fail "$* -> body '$out' does not match '$pattern'"
}

chat=(-H 'Content-Type: application/json')
start_server errors --parallel 1 --headroom 2048 --recent-max 512
expect 200 '"status":"ok"' "$base/health"
expect 200 '"object":"list".*"id":"stories260K.gguf"' "$base/v1/models"
expect 200 '<html' "$base/"
expect 400 '"error":\{"message":"the body is not valid JSON: at byte [0-9]+' "${chat[@]}" -d '{"messages": [' "$base/v1/chat/completions"
expect 400 '"param":"temperature"' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}], "temperature": "hot"}' "$base/v1/chat/completions"
expect 400 '"param":"max_tokens"' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": "many"}' "$base/v1/chat/completions"
expect 400 "'messages' is required" "${chat[@]}" -d '{"model": "x"}' "$base/v1/chat/completions"
expect 400 'the last message must be a user message' "${chat[@]}" -d '{"messages": [{"role": "assistant", "content": "Hi"}]}' "$base/v1/chat/completions"
head -c 9000000 /dev/zero | tr '\0' ' ' >"$work/huge.json"
expect 413 '"error"' "${chat[@]}" --data-binary "@$work/huge.json" "$base/v1/chat/completions"
expect 404 '"error":\{"message":"no route' "$base/v1/nothing"
expect 405 '"error"' "$base/v1/chat/completions"
expect 200 '"content":"' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 8, "temperature": 0}' "$base/v1/chat/completions"
expect 200 '"tokens":\[1,' "${chat[@]}" -d '{"content": "Once upon a time", "add_special": true}' "$base/tokenize"
ids=$(curl -s "${chat[@]}" -d '{"content": "Once upon a time"}' "$base/tokenize" | grep -o '\[[0-9,]*\]')
expect 200 '^\{"content":"Once upon a time"\}$' "${chat[@]}" -d "{\"tokens\": $ids}" "$base/detokenize"
# A stream ends with [DONE].
stream=$(curl -sN "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": true}' "$base/v1/chat/completions")
[[ $stream == *'"object":"chat.completion.chunk"'* && $stream == *'data: [DONE]' ]] || fail "stream: $stream"

# A client leaving mid-stream frees its slot: the next request is served and
# no slot stays busy.
curl -sN --max-time 0.3 "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 2000, "stream": true}' \
  "$base/v1/chat/completions" >/dev/null
for _ in $(seq 50); do
  health=$(curl -s "$base/health")
  [[ $health == *'"slots_processing":0'* ]] && break
  sleep 0.1
done
[[ $health == *'"slots_processing":0'* ]] || fail "a slot stays busy after the client left: $health"
expect 200 '"content":"' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}' "$base/v1/chat/completions"
expect 400 '"message":"this server runs a chat model \(llama\), which makes no embeddings.*"param":"model"' "${chat[@]}" -d '{"input": "x"}' "$base/v1/embeddings"
expect 400 '"message":"this server runs a chat model \(llama\), which ranks no documents.*"param":"model"' "${chat[@]}" -d '{"query": "q", "documents": ["a"]}' "$base/v1/rerank"
echo "metrics: $(curl -s "$base/metrics")"
stop_server
grep -q 'POST /v1/chat/completions 400 ' "$work/errors.log" || fail "no request log line on stderr"

# An API key: needed everywhere but / and /health.
start_server key --api-key s3cret
expect 401 '"error":\{"message":"an API key is needed' "$base/v1/models"
expect 401 '"error":\{"message":"invalid API key"' -H 'Authorization: Bearer wrong' "$base/v1/models"
expect 200 '"object":"list"' -H 'Authorization: Bearer s3cret' "$base/v1/models"
expect 200 '"status":"ok"' "$base/health"
stop_server

# --seed N: a request without "seed" samples with N, so the same request gets
# the same answer, each under an id of its own.
start_server seeded --seed 42
sampled='{"messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 24, "temperature": 1}'
first=$(curl -s "${chat[@]}" -d "$sampled" "$base/v1/chat/completions")
second=$(curl -s "${chat[@]}" -d "$sampled" "$base/v1/chat/completions")
content() { grep -o '"content":"[^"]*"' <<<"$1"; }
response_id() { grep -o '"id":"chatcmpl-[^"]*"' <<<"$1"; }
[[ -n $(content "$first") && $(content "$first") == "$(content "$second")" ]] ||
  fail "--seed 42: two answers to one sampled request differ: $first / $second"
[[ -n $(response_id "$first") && $(response_id "$first") != "$(response_id "$second")" ]] ||
  fail "--seed 42: two answers share an id: $first / $second"
stop_server
"$peak" serve --help | grep -q -- '-s, --seed N .*the seed of a request without "seed"' || fail "--help does not tell --seed"

# An embedding model: OpenAI's embeddings shape as floats and as base64, a
# 400 naming the field and index, and the chat routes refused.
if [[ -n $embedding_model ]]; then
  chat_model=$model model=$embedding_model
  start_server embeddings --parallel 2
  name=$(basename "$embedding_model")
  expect 200 '^\{"object":"list","data":\[\{"object":"embedding","index":0,"embedding":\[-?[0-9]' "${chat[@]}" -d '{"input": "hello", "model": "m"}' "$base/v1/embeddings"
  expect 200 '"index":1,"embedding":"[A-Za-z0-9+/]+=*"\}\],"model":"'"$name"'","usage":\{"prompt_tokens":[0-9]+,"total_tokens":[0-9]+\}\}$' "${chat[@]}" -d '{"input": ["a", "b"], "encoding_format": "base64"}' "$base/v1/embeddings"
  expect 400 '"message":"'"'"'input\[1\]'"'"' is an empty string".*"param":"input\[1\]"' "${chat[@]}" -d '{"input": ["a", ""]}' "$base/v1/embeddings"
  expect 400 '"param":"dimensions"' "${chat[@]}" -d '{"input": "a", "dimensions": 100000}' "$base/v1/embeddings"
  expect 400 '"message":"this server runs an embedding model \(bert\)' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}]}' "$base/v1/chat/completions"
  expect 200 '"id":"'"$name"'"' "$base/v1/models"
  expect 400 '"message":"this server runs an embedding model \(bert\), which ranks no documents.*"param":"model"' "${chat[@]}" -d '{"query": "q", "documents": ["a"]}' "$base/v1/rerank"
  expect 200 '"slots_idle":2' "$base/health"
  stop_server
  model=$chat_model
fi

# A reranker: llama.cpp's rerank shape best first, top_n, return_documents,
# documents as {"text"} objects, the aliases, 400s naming the field and index,
# and the other models' routes refused.
if [[ -n $reranker ]]; then
  chat_model=$model model=$reranker
  start_server rerank --parallel 2
  name=$(basename "$reranker")
  score='"relevance_score":-?[0-9][0-9.e+-]*'
  expect 200 '^\{"model":"'"$name"'","object":"list","usage":\{"prompt_tokens":[0-9]+,"total_tokens":[0-9]+\},"results":\[\{"index":[0-2],'"$score"',"document":\{"text":"[a-z ]+"\}\},\{"index":[0-2],'"$score"',"document":\{"text":"[a-z ]+"\}\},\{"index":[0-2],'"$score"',"document":\{"text":"[a-z ]+"\}\}\]\}$' "${chat[@]}" -d '{"model": "m", "query": "cat", "documents": ["a cat", "hello", "the mat"]}' "$base/v1/rerank"
  expect 200 '"results":\[\{"index":[0-2],'"$score"'\}\]\}$' "${chat[@]}" -d '{"query": "cat", "documents": ["a cat", {"text": "hello"}, "the mat"], "top_n": 1, "return_documents": false}' "$base/rerank"
  expect 200 '"results":\[\{"index":0,'"$score"',"document":\{"text":"hello"\}\}\]\}$' "${chat[@]}" -d '{"query": "cat", "documents": [{"text": "hello"}]}' "$base/v1/reranking"
  expect 400 '"message":"'"'"'documents\[3\]'"'"' is an empty string".*"param":"documents\[3\]"' "${chat[@]}" -d '{"query": "cat", "documents": ["a", "b", "c", ""]}' "$base/v1/rerank"
  expect 400 '"message":"'"'"'query'"'"' is required".*"param":"query"' "${chat[@]}" -d '{"documents": ["a"]}' "$base/v1/rerank"
  expect 400 '"param":"top_n"' "${chat[@]}" -d '{"query": "cat", "documents": ["a"], "top_n": 0}' "$base/v1/rerank"
  expect 400 '"message":"'"'"'top_n'"'"' must be an integer, not a string".*"param":"top_n"' "${chat[@]}" -d '{"query": "cat", "documents": ["a"], "top_n": "2"}' "$base/v1/rerank"
  expect 400 '"message":"'"'"'documents\[1\]'"'"' with the query is [0-9]+ tokens.*the reranker takes at most [0-9]+".*"param":"documents\[1\]"' "${chat[@]}" -d '{"query": "cat", "documents": ["a", "'"$(printf 'cat %.0s' $(seq 200))"'"]}' "$base/v1/rerank"
  expect 400 '"message":"this server runs a reranker \(bert\), which makes no embeddings: use POST /v1/rerank' "${chat[@]}" -d '{"input": "x"}' "$base/v1/embeddings"
  expect 400 '"message":"this server runs a reranker \(bert\), which generates no text' "${chat[@]}" -d '{"messages": [{"role": "user", "content": "Hi"}]}' "$base/v1/chat/completions"
  expect 200 '"slots_idle":2' "$base/health"
  stop_server
  model=$chat_model
fi

# Listening beyond loopback needs --allow-remote.
"$peak" serve -m "$model" --host 0.0.0.0 --port 0 >/dev/null 2>"$work/remote.log"
status=$?
[[ $status == 2 ]] && grep -q 'add --allow-remote' "$work/remote.log" || fail "--host 0.0.0.0 without --allow-remote: status $status"

((failures == 0)) || { echo "$failures failures"; exit 1; }
echo "all passed"
