/* Drives the adapter functions from C on stories260K (n_embd 64, 5 layers):
   a LoRA adapter made by peak_lora_synth and a control vector written here,
   on a context and a session, misuse included. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

#define N_EMBD 64

static const int32_t kTokens[] = {1, 403, 407, 261, 378, 292, 263, 447};
#define N_TOKENS (sizeof kTokens / sizeof kTokens[0])

static void put_u32(FILE* f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void put_u64(FILE* f, uint64_t v) { fwrite(&v, 8, 1, f); }
static void put_str(FILE* f, const char* s) {
  put_u64(f, strlen(s));
  fwrite(s, 1, strlen(s), f);
}

/* A control vector of one direction (`name`, F32 [N_EMBD], value i * 0.01 at
   i) in a GGUF v3 file. */
static void write_control_vector(const char* path, const char* name) {
  FILE* f = fopen(path, "wb");
  long at;
  int i;
  CHECK(f != NULL);
  if (!f) return;
  fwrite("GGUF", 1, 4, f);
  put_u32(f, 3);
  put_u64(f, 1); /* tensors */
  put_u64(f, 1); /* keys */
  put_str(f, "general.architecture");
  put_u32(f, 8); /* string */
  put_str(f, "controlvector");
  put_str(f, name);
  put_u32(f, 1);
  put_u64(f, N_EMBD);
  put_u32(f, 0); /* F32 */
  put_u64(f, 0);
  for (at = ftell(f); at % 32 != 0; ++at) fputc(0, f);
  for (i = 0; i < N_EMBD; ++i) {
    const float v = (float)i * 0.01f;
    fwrite(&v, 4, 1, f);
  }
  fclose(f);
}

static float max_distance(const float* a, const float* b, size_t n) {
  float d = 0.0f;
  size_t i;
  for (i = 0; i < n; ++i) d = fabsf(a[i] - b[i]) > d ? fabsf(a[i] - b[i]) : d;
  return d;
}

static peak_context* context_after_tokens(peak_model* m, const peak_adapter_set_params* set) {
  peak_context_params cp = peak_context_default_params();
  peak_context* ctx = NULL;
  cp.n_ctx = 64;
  cp.n_threads = 1;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  if (set) CHECK(peak_context_set_adapters(ctx, set) == PEAK_OK);
  CHECK(peak_context_eval(ctx, kTokens, N_TOKENS) == PEAK_OK);
  return ctx;
}

int main(void) {
  const char* model_path = PEAK_SHARED_DIR "/models/stories260K.gguf";
  const char* lora_path = PEAK_TEST_TMPDIR "/capi_adapter_lora.gguf";
  const char* cv_path = PEAK_TEST_TMPDIR "/capi_adapter_cv.gguf";
  const char* bad_cv_path = PEAK_TEST_TMPDIR "/capi_adapter_cv_layer0.gguf";
  peak_model* m = NULL;
  peak_model* other = NULL;
  peak_adapter* lora = NULL;
  peak_adapter* cv = NULL;
  peak_adapter* none = NULL;
  peak_adapter_info info;
  peak_adapter_use uses[2];
  peak_adapter_set_params set = peak_adapter_set_default_params();
  peak_lora_synth_params sp = peak_lora_synth_default_params();
  peak_context* base;
  peak_context* adapted;
  size_t n_vocab;
  float base_logits[512];

  CHECK(peak_model_load(model_path, NULL, &m) == PEAK_OK);
  CHECK(peak_model_load(model_path, NULL, &other) == PEAK_OK);
  n_vocab = 512;

  sp.rank = 8;
  sp.alpha = 16.0f;
  CHECK(peak_lora_synth(model_path, lora_path, &sp) == PEAK_OK);
  /* Never over its base: the adapter file, a GGUF, stands in for one (the
     refusal comes before the base is read), and still loads below. */
  CHECK_ERROR(peak_lora_synth(lora_path, lora_path, &sp), PEAK_ERR_INVALID_ARGUMENT, "overwrite the base model");
  write_control_vector(cv_path, "direction.2");
  write_control_vector(bad_cv_path, "direction.0");

  CHECK(peak_adapter_load(m, lora_path, NULL, &lora) == PEAK_OK);
  CHECK(peak_adapter_load(m, cv_path, NULL, &cv) == PEAK_OK);
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(peak_adapter_get_info(lora, &info) == PEAK_OK);
  CHECK(info.kind == PEAK_ADAPTER_LORA && info.n_targets == 35 && info.max_rank == 8 && info.alpha == 16.0f);
  CHECK(info.tensor_bytes > 0);
  CHECK(peak_adapter_get_info(cv, &info) == PEAK_OK);
  CHECK(info.kind == PEAK_ADAPTER_CONTROL_VECTOR && info.n_targets == 1 && info.first_layer == 2);

  /* Refusals name what is wrong; *out stays NULL. */
  CHECK_ERROR(peak_adapter_load(m, bad_cv_path, NULL, &none), PEAK_ERR_FORMAT, "direction.0");
  CHECK(none == NULL);
  CHECK_ERROR(peak_adapter_load(m, model_path, NULL, &none), PEAK_ERR_FORMAT, "general.type");
  CHECK_ERROR(peak_adapter_load(m, PEAK_TEST_TMPDIR "/no_such_adapter.gguf", NULL, &none), PEAK_ERR_IO,
              "no_such_adapter");
  CHECK_ERROR(peak_adapter_load(NULL, lora_path, NULL, &none), PEAK_ERR_INVALID_ARGUMENT, "model");

  base = context_after_tokens(m, NULL);
  memcpy(base_logits, peak_context_get_logits(base), n_vocab * sizeof(float));

  /* Scale 0: the base model bit for bit. */
  uses[0].adapter = lora;
  uses[0].scale = 0.0f;
  set.adapters = uses;
  set.n_adapters = 1;
  adapted = context_after_tokens(m, &set);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) == 0.0f);
  peak_context_free(adapted);

  /* The adapter and the control vector each move the logits. */
  uses[0].scale = 1.0f;
  adapted = context_after_tokens(m, &set);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) > 1e-3f);
  peak_context_free(adapted);
  uses[0].adapter = cv;
  uses[0].scale = 4.0f;
  adapted = context_after_tokens(m, &set);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) > 1e-3f);
  /* ... not outside its layer range */
  peak_context_free(adapted);
  set.control_first_layer = 3;
  adapted = context_after_tokens(m, &set);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) == 0.0f);

  /* Misuse of the set leaves the context's adapters as they were. */
  uses[0].adapter = NULL;
  CHECK_ERROR(peak_context_set_adapters(adapted, &set), PEAK_ERR_INVALID_ARGUMENT, "adapter 0 is NULL");
  uses[0].adapter = lora;
  uses[0].scale = NAN;
  CHECK_ERROR(peak_context_set_adapters(adapted, &set), PEAK_ERR_INVALID_ARGUMENT, "finite");
  uses[0].scale = 1.0f;
  set.control_first_layer = 9;
  set.control_last_layer = 9;
  CHECK_ERROR(peak_context_set_adapters(adapted, &set), PEAK_ERR_INVALID_ARGUMENT, "layers");
  set.control_first_layer = 0;
  set.control_last_layer = SIZE_MAX;
  set.struct_size = 3;
  CHECK_ERROR(peak_context_set_adapters(adapted, &set), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  set.struct_size = sizeof set;
  set.adapters = NULL;
  CHECK_ERROR(peak_context_set_adapters(adapted, &set), PEAK_ERR_INVALID_ARGUMENT, "adapters is NULL");
  set.adapters = uses;
  {
    peak_context* foreign = NULL;
    peak_context_params cp = peak_context_default_params();
    cp.n_ctx = 16;
    CHECK(peak_context_create(other, &cp, &foreign) == PEAK_OK);
    CHECK_ERROR(peak_context_set_adapters(foreign, &set), PEAK_ERR_INVALID_ARGUMENT, "another model");
    peak_context_free(foreign);
  }

  /* Both at once; the handles freed while the context still uses them. */
  uses[1].adapter = cv;
  uses[1].scale = 4.0f;
  set.n_adapters = 2;
  CHECK(peak_context_set_adapters(adapted, &set) == PEAK_OK);
  peak_adapter_free(cv);
  CHECK(peak_context_kv_clear(adapted) == PEAK_OK);
  CHECK(peak_context_eval(adapted, kTokens, N_TOKENS) == PEAK_OK);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) > 1e-3f);
  /* No adapters again: the base model bit for bit. */
  CHECK(peak_context_set_adapters(adapted, NULL) == PEAK_OK);
  CHECK(peak_context_kv_clear(adapted) == PEAK_OK);
  CHECK(peak_context_eval(adapted, kTokens, N_TOKENS) == PEAK_OK);
  CHECK(max_distance(base_logits, peak_context_get_logits(adapted), n_vocab) == 0.0f);
  peak_context_free(adapted);
  peak_context_free(base);

  /* A session runs its turns with the adapter; changing it between turns works. */
  {
    peak_session_params p = peak_session_default_params();
    peak_session* s = NULL;
    peak_generate_params gp = peak_generate_default_params();
    peak_generate_result r;
    p.chat_template = "raw";
    p.mode = PEAK_MEMORY_WINDOW;
    p.recent_max = 128;
    p.headroom = 32;
    p.sampler.temperature = 0.0f;
    p.n_threads = 1;
    gp.max_tokens = 8;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    set.n_adapters = 1;
    CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
    CHECK(peak_session_set_adapters(s, &set) == PEAK_OK);
    CHECK(peak_session_chat(s, "Lily went to the park.", 22, &gp, &r) == PEAK_OK);
    uses[0].scale = 0.5f;
    CHECK(peak_session_set_adapters(s, &set) == PEAK_OK);
    CHECK(peak_session_chat(s, "Then Tom came.", 14, &gp, &r) == PEAK_OK);
    CHECK(r.n_generated_tokens > 0);
    CHECK_ERROR(peak_session_set_adapters(NULL, &set), PEAK_ERR_INVALID_ARGUMENT, "session");
    peak_session_free(s);
  }

  /* Merge: arguments checked; an input is never overwritten. */
  {
    peak_lora_merge_params mp = peak_lora_merge_default_params();
    CHECK_ERROR(peak_lora_merge(NULL, lora_path, "x.gguf", &mp), PEAK_ERR_INVALID_ARGUMENT, "base_path");
    CHECK_ERROR(peak_lora_merge(lora_path, lora_path, lora_path, &mp), PEAK_ERR_INVALID_ARGUMENT, "overwrite");
    mp.type = "Q9_9";
    CHECK_ERROR(peak_lora_merge(model_path, lora_path, PEAK_TEST_TMPDIR "/capi_adapter_merged.gguf", &mp),
                PEAK_ERR_INVALID_ARGUMENT, "Q9_9");
  }

  peak_adapter_free(lora);
  peak_adapter_free(NULL);
  peak_model_free(other);
  peak_model_free(m);
  return capi_test_summary("test_capi_adapter");
}
