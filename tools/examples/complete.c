/* complete: continues a prompt with a GGUF model, streaming the text.
   usage: complete_c MODEL.gguf [PROMPT] [N_TOKENS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <peak/peak.h>

static int print_text(const char* text, size_t length, void* user_data) {
  (void)user_data;
  fwrite(text, 1, length, stdout);
  fflush(stdout);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.gguf [PROMPT] [N_TOKENS]\n", argv[0]);
    return 2;
  }
  const char* prompt = argc > 2 ? argv[2] : "Once upon a time";
  const size_t n_tokens = argc > 3 ? strtoul(argv[3], NULL, 10) : 64;

  peak_model* model = NULL;
  peak_context* ctx = NULL;
  peak_sampler* sampler = NULL;
  int status = 1;
  if (peak_model_load(argv[1], NULL, &model) != PEAK_OK) goto fail;
  if (peak_context_create(model, NULL, &ctx) != PEAK_OK) goto fail;
  peak_sampler_params sp = peak_sampler_default_params();
  sp.seed = 42;
  if (peak_sampler_create(model, &sp, &sampler) != PEAK_OK) goto fail;

  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = n_tokens;
  gp.on_text = print_text;
  gp.parse_special = 0; /* the prompt is the user's text: "<|im_end|>" in it stays text */
  peak_generate_result result;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  fputs(prompt, stdout);
  if (peak_generate(ctx, sampler, prompt, strlen(prompt), &gp, &result) != PEAK_OK) goto fail;
  printf("\n[%zu prompt tokens, %zu generated, %.1f tokens/s]\n", result.n_prompt_tokens, result.n_generated_tokens,
         result.generate_seconds > 0 ? (double)result.n_generated_tokens / result.generate_seconds : 0.0);
  status = 0;
  goto done;
fail:
  fprintf(stderr, "error: %s\n", peak_last_error());
done:
  peak_sampler_free(sampler);
  peak_context_free(ctx);
  peak_model_free(model);
  return status;
}
