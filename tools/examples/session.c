/* session: a chat session kept across runs of an app, over peak's C API.
   usage: session_c MODEL.gguf [SESSION_FILE] [N_TOKENS]

   Two turns are streamed, the session is saved to SESSION_FILE (default
   "session.pkss") and restored into a new session, as an app restarted would,
   and the restored conversation is listed: every message with its role and
   whether the model still reads it, or only a summary of it. */
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

static const char* role_name(peak_role role) {
  return role == PEAK_ROLE_SYSTEM ? "system" : role == PEAK_ROLE_USER ? "user" : "assistant";
}

static const char* state_name(peak_message_state state) {
  switch (state) {
    case PEAK_MESSAGE_IN_CONTEXT: return "in context";
    case PEAK_MESSAGE_SUMMARIZED: return "summarized";
    case PEAK_MESSAGE_DROPPED: return "dropped";
  }
  return "?";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.gguf [SESSION_FILE] [N_TOKENS]\n", argv[0]);
    return 2;
  }
  const char* path = argc > 2 ? argv[2] : "session.pkss";
  const size_t n_tokens = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
  const char* turns[2] = {"Tell me a story about a dog.", "What did the dog find?"};

  peak_model* model = NULL;
  peak_session* session = NULL;
  peak_session* restored = NULL;
  int status = 1;
  if (peak_model_load(argv[1], NULL, &model) != PEAK_OK) goto fail;
  peak_session_params sp = peak_session_default_params();
  sp.system_prompt = "You are a friendly storyteller.";
  sp.sampler.seed = 42;
  if (peak_session_create(model, &sp, &session) != PEAK_OK) goto fail;

  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = n_tokens;
  gp.on_text = print_text;
  for (int i = 0; i < 2; ++i) {
    printf("> %s\n", turns[i]);
    if (peak_session_chat(session, turns[i], strlen(turns[i]), &gp, NULL) != PEAK_OK) goto fail;
    printf("\n");
  }

  /* The file holds the messages, the summary and (include_kv 1) the KV cache,
     so the restored session goes on without evaluating the conversation again. */
  if (peak_session_save(session, path, 1) != PEAK_OK) goto fail;
  if (peak_session_create(model, &sp, &restored) != PEAK_OK) goto fail;
  if (peak_session_restore(restored, path) != PEAK_OK) goto fail;

  printf("--- %s restored: %zu messages\n", path, peak_session_n_messages(restored));
  for (size_t i = 0; i < peak_session_n_messages(restored); ++i) {
    peak_session_message m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    if (peak_session_get_message(restored, i, &m) != PEAK_OK) goto fail;
    /* m.text belongs to the session until its next change: print it now. */
    printf("[%s, %s] ", role_name(m.role), state_name(m.state));
    fwrite(m.text, 1, m.length, stdout);
    printf("\n");
  }
  status = 0;
  goto done;
fail:
  fprintf(stderr, "error: %s\n", peak_last_error());
done:
  peak_session_free(restored);
  peak_session_free(session);
  peak_model_free(model);
  return status;
}
