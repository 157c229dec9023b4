// peak_model_* and the token functions of the C API.
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "chat/model_chat_template.h"
#include "runtime/memory_estimate.h"
#include "tokenizer/tokenizer.h"

namespace {

using peak::capi::fail;
using peak::capi::fd_source;
using peak::capi::guarded;
using peak::capi::load_options;

peak_status load_model(const peak::io::FileSource& source, const peak_model_params* params, const char* function,
                       peak_model** out) {
  peak::model::LoadOptions options;
  if (const peak_status st = load_options(params, function, &options); st != PEAK_OK) return st;
  return guarded([&] {
    auto m = std::make_unique<peak_model>();
    m->model = peak::model::Model::load(source, options);
    m->architecture = peak::model::arch_name(m->model->hparams().arch);
    m->name = m->model->name();
    const peak::chat::DetectedChatTemplate chat = peak::chat::chat_template_for(*m->model, "");
    m->chat_template = std::string(chat.chat_template.name());
    m->chat_template_source = peak::chat::template_source_name(chat.source);
    m->chat_template_warning = chat.warning;
    *out = m.release();
    return PEAK_OK;
  });
}

peak_status load_vocab(const peak::io::FileSource& source, peak_model** out) {
  return guarded([&] {
    // The mapping is read where the metadata lies; tensor pages are never
    // touched, and the file is closed once the tokenizer holds its own copy.
    const std::unique_ptr<peak::gguf::GgufFile> file = peak::gguf::GgufFile::open(source);
    const auto text = [&file](const char* key) {
      const auto v = file->find(key);
      return v && v->type() == peak::gguf::ValueType::String ? std::string(v->str()) : std::string();
    };
    auto m = std::make_unique<peak_model>();
    m->vocab_only = peak::tokenizer::Tokenizer::from_gguf(*file);
    m->architecture = text("general.architecture");
    m->name = text("general.name");
    *out = m.release();
    return PEAK_OK;
  });
}

// Fills a C estimate from the engine's, checking its struct_size first.
peak_status estimate(const peak::io::FileSource& source, const peak_model_params* model_params,
                     const peak_context_params* context_params, const char* function, peak_memory_estimate* out) {
  peak::model::LoadOptions options;
  if (const peak_status st = load_options(model_params, function, &options); st != PEAK_OK) return st;
  peak::runtime::ContextParams cp;
  if (const peak_status st = peak::capi::context_params_from_c(context_params, nullptr, &cp); st != PEAK_OK) return st;
  return guarded([&] {
    const peak::runtime::MemoryEstimate e = peak::runtime::estimate_memory(source, options, cp);
    out->weight_bytes = e.weight_bytes;
    out->repacked_bytes = e.repacked_bytes;
    out->kv_bytes = e.context.kv_bytes;
    out->compute_bytes = e.context.compute_bytes;
    out->total_bytes = e.total();
    return PEAK_OK;
  });
}

}  // namespace

// The first version of peak_model_info ended at decode_bytes_per_token.
constexpr size_t kModelInfoFirstSize = offsetof(peak_model_info, name_length);
// The second ended at name_length.
constexpr size_t kModelInfoSecondSize = offsetof(peak_model_info, is_encoder);

namespace peak::capi {

peak_status load_options(const peak_model_params* params, const char* function, peak::model::LoadOptions* options) {
  const peak_model_params p = params ? *params : peak_model_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_model_params), "peak_model_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (p.repack_weights < PEAK_REPACK_NONE || p.repack_weights > PEAK_REPACK_AT_LOAD) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                std::string(function) + ": repack_weights must be a peak_repack value (0, 1 or 2)");
  }
  options->use_mmap = p.use_mmap != 0;
  options->use_mlock = p.use_mlock != 0;
  options->repack_weights = p.repack_weights != PEAK_REPACK_NONE;
  options->repack_in_background = p.repack_weights == PEAK_REPACK_BACKGROUND;
  options->check_tensors = p.check_tensors != 0;
  if (p.progress) {
    const peak_progress_fn progress = p.progress;
    void* const user_data = p.progress_user_data;
    options->progress = [progress, user_data](float fraction) { return progress(fraction, user_data) != 0; };
  }
  return PEAK_OK;
}

peak_status fd_source(int fd, uint64_t offset, uint64_t length, const char* function, peak::io::FileSource* source) {
  if (fd < 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                std::string(function) + ": fd is " + std::to_string(fd) + ", not an open file descriptor");
  }
  *source = peak::io::FileSource::region(fd, offset, length);
  return PEAK_OK;
}

std::vector<int32_t> encode_user_text(const peak_model& model, std::string_view text, bool add_special,
                                      bool parse_special, const std::string& what) {
  peak::tokenizer::Unspelled unspelled;
  std::vector<int32_t> ids = model.tokenizer().encode(text, add_special, parse_special, &unspelled);
  if (unspelled.nothing_left) {
    throw std::invalid_argument(what + ": the model's vocabulary can spell none of its characters (" +
                                peak::tokenizer::quote_characters(unspelled.characters) + ")");
  }
  return ids;
}

}  // namespace peak::capi

extern "C" {

peak_model_params peak_model_default_params(void) {
  peak_model_params p{};
  p.struct_size = sizeof(peak_model_params);
  p.use_mmap = 1;
  p.repack_weights = PEAK_REPACK_BACKGROUND;
  return p;
}

peak_status peak_model_load(const char* path, const peak_model_params* params, peak_model** out) {
  PEAK_CHECK_ARG(out, "peak_model_load: out");
  *out = nullptr;
  PEAK_CHECK_ARG(path, "peak_model_load: path");
  return load_model(peak::io::FileSource::path(path), params, "peak_model_load", out);
}

peak_status peak_model_load_fd(int fd, uint64_t offset, uint64_t length, const peak_model_params* params,
                               peak_model** out) {
  PEAK_CHECK_ARG(out, "peak_model_load_fd: out");
  *out = nullptr;
  peak::io::FileSource source;
  if (const peak_status st = fd_source(fd, offset, length, "peak_model_load_fd", &source); st != PEAK_OK) return st;
  return load_model(source, params, "peak_model_load_fd", out);
}

peak_status peak_model_load_vocab(const char* path, peak_model** out) {
  PEAK_CHECK_ARG(out, "peak_model_load_vocab: out");
  *out = nullptr;
  PEAK_CHECK_ARG(path, "peak_model_load_vocab: path");
  return load_vocab(peak::io::FileSource::path(path), out);
}

peak_status peak_model_load_vocab_fd(int fd, uint64_t offset, uint64_t length, peak_model** out) {
  PEAK_CHECK_ARG(out, "peak_model_load_vocab_fd: out");
  *out = nullptr;
  peak::io::FileSource source;
  if (const peak_status st = fd_source(fd, offset, length, "peak_model_load_vocab_fd", &source); st != PEAK_OK) {
    return st;
  }
  return load_vocab(source, out);
}

peak_status peak_model_estimate_memory(const char* path, const peak_model_params* model_params,
                                       const peak_context_params* context_params, peak_memory_estimate* estimate) {
  PEAK_CHECK_ARG(estimate, "peak_model_estimate_memory: estimate");
  if (!peak::capi::struct_size_ok(estimate->struct_size, sizeof(peak_memory_estimate), "peak_memory_estimate")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  PEAK_CHECK_ARG(path, "peak_model_estimate_memory: path");
  return ::estimate(peak::io::FileSource::path(path), model_params, context_params, "peak_model_estimate_memory",
                    estimate);
}

peak_status peak_model_estimate_memory_fd(int fd, uint64_t offset, uint64_t length,
                                          const peak_model_params* model_params,
                                          const peak_context_params* context_params, peak_memory_estimate* estimate) {
  PEAK_CHECK_ARG(estimate, "peak_model_estimate_memory_fd: estimate");
  if (!peak::capi::struct_size_ok(estimate->struct_size, sizeof(peak_memory_estimate), "peak_memory_estimate")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  peak::io::FileSource source;
  if (const peak_status st = fd_source(fd, offset, length, "peak_model_estimate_memory_fd", &source); st != PEAK_OK) {
    return st;
  }
  return ::estimate(source, model_params, context_params, "peak_model_estimate_memory_fd", estimate);
}

void peak_model_free(peak_model* model) { delete model; }

peak_status peak_model_get_info(const peak_model* model, peak_model_info* out) {
  PEAK_CHECK_ARG(model, "peak_model_get_info: model");
  PEAK_CHECK_ARG(out, "peak_model_get_info: info");
  const size_t struct_size = out->struct_size;
  if (struct_size != kModelInfoFirstSize && struct_size != kModelInfoSecondSize &&
      !peak::capi::struct_size_ok(struct_size, sizeof(peak_model_info), "peak_model_info")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  // Filled whole here, then copied out as far as the caller's version goes.
  peak_model_info filled{};
  peak_model_info* info = &filled;
  info->struct_size = struct_size;
  info->name_length = model->name.size();
  const peak::tokenizer::Tokenizer& tok = model->tokenizer();
  if (!model->model) {  // a tokenizer alone (peak_model_load_vocab)
    info->architecture = model->architecture.c_str();
    info->name = model->name.c_str();
    info->chat_template = info->chat_template_source = info->chat_template_warning = "";
    info->n_vocab = static_cast<size_t>(tok.n_vocab());
    info->bos_token = tok.bos();
    info->eos_token = tok.eos();
    std::memcpy(static_cast<void*>(out), info, struct_size);
    return PEAK_OK;
  }
  const peak::model::HParams& hp = model->model->hparams();
  info->architecture = model->architecture.c_str();
  info->name = model->name.c_str();
  info->chat_template = model->chat_template.c_str();
  info->chat_template_source = model->chat_template_source.c_str();
  info->chat_template_warning = model->chat_template_warning.c_str();
  info->n_params = model->model->n_params();
  info->weight_bytes = model->model->weight_bytes();
  info->n_vocab = static_cast<size_t>(hp.n_vocab);
  info->n_ctx_train = static_cast<size_t>(hp.n_ctx_train);
  info->n_embd = static_cast<size_t>(hp.n_embd);
  info->n_layer = static_cast<size_t>(hp.n_layer);
  info->n_head = static_cast<size_t>(hp.n_head);
  info->n_head_kv = static_cast<size_t>(hp.n_head_kv);
  info->head_dim = static_cast<size_t>(hp.head_dim);
  info->n_ff = static_cast<size_t>(hp.n_ff);
  info->bos_token = tok.bos();
  info->eos_token = tok.eos();
  const peak::model::ModelWeights& w = model->model->weights();
  info->is_encoder = hp.embeds ? 1 : 0;
  info->pooling = static_cast<int>(info->is_encoder ? hp.pooling : peak::model::Pooling::None);
  info->decode_bytes_per_token = model->model->weight_bytes();
  if (!w.tied_output) {
    info->decode_bytes_per_token -= static_cast<uint64_t>(w.token_embd->row_count()) * w.token_embd->nb[1];
  }
  std::memcpy(static_cast<void*>(out), info, struct_size);
  return PEAK_OK;
}

peak_status peak_tokenize(const peak_model* model, const char* text, size_t length, int add_special,
                          int parse_special, int32_t* tokens, size_t capacity, size_t* n_tokens) {
  PEAK_CHECK_ARG(model, "peak_tokenize: model");
  PEAK_CHECK_ARG(n_tokens, "peak_tokenize: n_tokens");
  *n_tokens = 0;
  if (!text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_tokenize: text is NULL");
  if (!tokens && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_tokenize: tokens is NULL");
  return guarded([&] {
    const std::vector<int32_t> ids =
        peak::capi::encode_user_text(*model, std::string_view(text ? text : "", length), add_special != 0,
                                     parse_special != 0, "peak_tokenize: the text");
    *n_tokens = ids.size();
    if (ids.size() > capacity) {
      return fail(PEAK_ERR_BUFFER_TOO_SMALL, "the text has " + std::to_string(ids.size()) +
                                                 " tokens, the buffer holds " + std::to_string(capacity));
    }
    if (!ids.empty()) std::memcpy(tokens, ids.data(), ids.size() * sizeof(int32_t));
    return PEAK_OK;
  });
}

peak_status peak_text_unspelled(const peak_model* model, const char* text, size_t length, int parse_special, char* buf,
                                size_t capacity, size_t* characters_length) {
  PEAK_CHECK_ARG(model, "peak_text_unspelled: model");
  PEAK_CHECK_ARG(characters_length, "peak_text_unspelled: characters_length");
  *characters_length = 0;
  if (!text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_text_unspelled: text is NULL");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_text_unspelled: buf is NULL");
  return guarded([&] {
    peak::tokenizer::Unspelled unspelled;
    model->tokenizer().encode(std::string_view(text ? text : "", length), false, parse_special != 0, &unspelled);
    return peak::capi::copy_out(unspelled.characters, "characters", buf, capacity, characters_length);
  });
}

peak_status peak_token_to_piece(const peak_model* model, int32_t token, int render_special, char* buf,
                                size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(model, "peak_token_to_piece: model");
  PEAK_CHECK_ARG(length, "peak_token_to_piece: length");
  *length = 0;
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_token_to_piece: buf is NULL");
  return guarded([&] {
    return peak::capi::copy_out(model->tokenizer().token_to_piece(token, render_special != 0), "piece", buf,
                                capacity, length);
  });
}

peak_status peak_detokenize(const peak_model* model, const int32_t* tokens, size_t n_tokens, int remove_special,
                            int render_special, char* buf, size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(model, "peak_detokenize: model");
  PEAK_CHECK_ARG(length, "peak_detokenize: length");
  *length = 0;
  if (!tokens && n_tokens > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_detokenize: tokens is NULL");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_detokenize: buf is NULL");
  return guarded([&] {
    const std::vector<int32_t> ids(tokens, tokens + n_tokens);
    return peak::capi::copy_out(model->tokenizer().detokenize(ids, remove_special != 0, render_special != 0),
                                "text", buf, capacity, length);
  });
}

int peak_token_is_eog(const peak_model* model, int32_t token) {
  return model && model->tokenizer().is_eog(token) ? 1 : 0;
}

}  // extern "C"
