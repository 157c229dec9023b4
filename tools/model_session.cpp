#include "model_session.h"

#include <unistd.h>

#include <cstdio>

#include "text_format.h"

void check_status(peak_status status) {
  if (status != PEAK_OK) throw CommandError(peak_last_error());
}

std::vector<int32_t> tokenize(const peak_model* model, const std::string& text, bool add_special, bool parse_special) {
  size_t n = 0;
  peak_tokenize(model, text.data(), text.size(), add_special, parse_special, nullptr, 0, &n);
  std::vector<int32_t> tokens(n);
  check_status(peak_tokenize(model, text.data(), text.size(), add_special, parse_special, tokens.data(), n, &n));
  return tokens;
}

void check_spelled(const peak_model* model, const std::string& text, bool parse_special, const char* command,
                   const char* what) {
  size_t length = 0;
  peak_text_unspelled(model, text.data(), text.size(), parse_special, nullptr, 0, &length);
  if (length == 0) return;
  std::string characters(length + 1, '\0');
  check_status(peak_text_unspelled(model, text.data(), text.size(), parse_special, characters.data(), characters.size(),
                                   &length));
  characters.resize(length);
  // peak_tokenize refuses text of which nothing is left (asking for the count
  // is enough to know).
  size_t n = 0;
  if (peak_tokenize(model, text.data(), text.size(), 0, parse_special, nullptr, 0, &n) == PEAK_ERR_INVALID_ARGUMENT) {
    throw CommandError(std::string(what) + ": the model's vocabulary can spell none of its characters (" +
                       quoted_characters(characters) + ")");
  }
  std::fprintf(stderr,
               "peak %s: warning: the model's vocabulary has no tokens for %s in %s: the model does not see them\n",
               command, quoted_characters(characters).c_str(), what);
}

std::string token_piece(const peak_model* model, int32_t token, bool render_special) {
  size_t length = 0;
  peak_token_to_piece(model, token, render_special, nullptr, 0, &length);
  std::string piece(length + 1, '\0');
  check_status(peak_token_to_piece(model, token, render_special, piece.data(), piece.size(), &length));
  piece.resize(length);
  return piece;
}

void check_context_fits(const peak_model* model, const peak_context_params& params, const GenerationOptions& options) {
  if (!options.memory_check) return;
  size_t needed = 0;
  check_status(peak_context_memory_needed(model, &params, &needed));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return;  // unknown: nothing to compare with
  const uint64_t physical = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  if (needed <= physical) return;
  throw CommandError("a context of " + std::to_string(params.n_ctx) + " tokens needs " + human_bytes(needed) +
                     " (KV cache and compute buffers), more than the " + human_bytes(physical) +
                     " of physical memory: use a smaller -c (or a quantized -ctk/-ctv), or --no-memory-check to try anyway");
}

LoadedModel load_model(const std::string& path, const GenerationOptions& options, bool with_context) {
  LoadedModel m;
  peak_model* model = nullptr;
  check_status(peak_model_load(path.c_str(), &options.model, &model));
  m.model.reset(model);
  m.info.struct_size = sizeof m.info;
  check_status(peak_model_get_info(model, &m.info));
  for (const AdapterOption& a : options.adapters) {
    peak_adapter* adapter = nullptr;
    check_status(peak_adapter_load(model, a.path.c_str(), nullptr, &adapter));
    m.adapters.emplace_back(adapter);
    m.adapter_uses.push_back({adapter, a.scale});
    peak_adapter_info info{};
    info.struct_size = sizeof info;
    check_status(peak_adapter_get_info(adapter, &info));
    m.adapter_bytes += info.tensor_bytes;
  }
  m.adapter_set.adapters = m.adapter_uses.data();
  m.adapter_set.n_adapters = m.adapter_uses.size();
  m.adapter_set.control_first_layer = options.control_first_layer;
  m.adapter_set.control_last_layer = options.control_last_layer;
  load_draft_model(m, options);
  if (!with_context) return m;
  check_context_fits(model, options.context, options);
  peak_context* context = nullptr;
  check_status(peak_context_create(model, &options.context, &context));
  m.context.reset(context);
  if (!m.adapter_uses.empty()) check_status(peak_context_set_adapters(context, &m.adapter_set));
  peak_sampler* sampler = nullptr;
  const peak_sampler_params sampler_params = ::sampler_params(options);
  check_status(peak_sampler_create(model, &sampler_params, &sampler));
  m.sampler.reset(sampler);
  return m;
}

void load_draft_model(LoadedModel& m, const GenerationOptions& options) {
  if (options.draft_model_path.empty()) return;
  peak_model* model = nullptr;
  check_status(peak_model_load(options.draft_model_path.c_str(), &options.model, &model));
  m.draft_file.reset(model);
  peak_context_params cp = options.context;
  cp.max_logit_rows = 1;
  cp.pass_group = nullptr;
  check_context_fits(model, cp, options);
  peak_draft_model* draft = nullptr;
  check_status(peak_draft_model_create(model, &cp, &draft));
  m.draft.reset(draft);
  // Its vocabulary is checked by the first generation; say so before a prompt is typed.
  peak_model_info info{};
  info.struct_size = sizeof info;
  check_status(peak_model_get_info(model, &info));
  if (info.n_vocab != m.info.n_vocab) {
    throw CommandError("the draft model " + options.draft_model_path + " has a vocabulary of " +
                       std::to_string(info.n_vocab) + " tokens, the model's has " + std::to_string(m.info.n_vocab) +
                       ": a draft model must read the model's vocabulary");
  }
}

void set_speculative(const GenerationOptions& options, const LoadedModel& m, peak_generate_params& params) {
  params.lookup_ngram = options.lookup_ngram;
  params.draft_max = options.draft_max;
  params.draft_model = m.draft.get();
  params.draft_p_min = options.draft_p_min;
}

std::string acceptance_summary(const GenerationOptions& options, size_t drafted, size_t accepted) {
  if (options.lookup_ngram <= 0 && options.draft_model_path.empty()) return {};
  char line[128];
  std::snprintf(line, sizeof line, " | %s: %zu drafted, %zu accepted (%.0f%%)",
                options.lookup_ngram > 0 ? "lookup" : "draft", drafted, accepted,
                drafted > 0 ? 100.0 * static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0);
  return line;
}

LoadedEmbedder load_embedder(const std::string& path, const peak_embedder_params& params) {
  LoadedEmbedder e;
  peak_model* model = nullptr;
  check_status(peak_model_load(path.c_str(), nullptr, &model));
  e.model.reset(model);
  peak_embedder* embedder = nullptr;
  check_status(peak_embedder_create(e.model.get(), &params, &embedder));
  e.embedder.reset(embedder);
  return e;
}

TextViews text_views(const std::vector<std::string>& texts) {
  TextViews v;
  for (const std::string& t : texts) {
    v.texts.push_back(t.c_str());
    v.lengths.push_back(t.size());
  }
  return v;
}
