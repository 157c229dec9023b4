// The 0.1 spellings of renamed C API functions, kept for one release as thin
// wrappers so that code written against 0.1 builds and behaves as before.
// Remove this file in 0.3.
#include <cstdint>
#include <optional>

#include "capi/capi_handles.h"

extern "C" {

peak_gguf_params peak_gguf_default_open_params(void) { return peak_gguf_default_params(); }

// Unlike peak_gguf_lookup_key, these two never fail: an absent name (or a NULL
// argument) gives -1 and leaves peak_last_error() as it was.
int64_t peak_gguf_find_key(const peak_gguf* gguf, const char* key) {
  if (!gguf || !key) return -1;
  const std::optional<size_t> index = gguf->file->find_index(key);
  return index ? static_cast<int64_t>(*index) : -1;
}

int64_t peak_gguf_find_tensor(const peak_gguf* gguf, const char* name) {
  if (!gguf || !name) return -1;
  const peak::gguf::TensorInfo* t = gguf->file->find_tensor(name);
  return t ? static_cast<int64_t>(t - &gguf->file->tensor(0)) : -1;
}

peak_status peak_eval(peak_context* ctx, const int32_t* tokens, size_t n_tokens) {
  return peak_context_eval(ctx, tokens, n_tokens);
}

peak_status peak_eval_all_logits(peak_context* ctx, const int32_t* tokens, size_t n_tokens, float* logits) {
  return peak_context_eval_all_logits(ctx, tokens, n_tokens, logits);
}

const float* peak_get_logits(const peak_context* ctx) { return peak_context_get_logits(ctx); }

peak_status peak_kv_clear(peak_context* ctx) { return peak_context_kv_clear(ctx); }

peak_status peak_kv_remove(peak_context* ctx, uint32_t first, uint32_t n) {
  return peak_context_kv_remove(ctx, first, n);
}

peak_status peak_kv_shift(peak_context* ctx, uint32_t first, uint32_t n, int32_t delta) {
  return peak_context_kv_shift(ctx, first, n, delta);
}

}  // extern "C"
