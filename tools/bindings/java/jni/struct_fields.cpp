#include "struct_fields.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "jni_support.h"

namespace peak_jni {

namespace {

// kInt fields hold C enums of int's size (peak_type, peak_repack's int, ...).
static_assert(sizeof(peak_type) == sizeof(int) && sizeof(peak_memory_mode) == sizeof(int) &&
                  sizeof(peak_rebuild_strategy) == sizeof(int) && sizeof(peak_stop_reason) == sizeof(int) &&
                  sizeof(peak_adapter_kind) == sizeof(int) && sizeof(peak_tool_choice) == sizeof(int) &&
                  sizeof(peak_pooling) == sizeof(int) && sizeof(int32_t) == sizeof(int),
              "kInt fields are int-sized");

const char* signature(const Field& f) {
  switch (f.kind) {
    case FieldKind::kSize:
    case FieldKind::kU64:
    case FieldKind::kU32: return "J";
    case FieldKind::kInt: return "I";
    case FieldKind::kBool: return "Z";
    case FieldKind::kFloat: return "F";
    case FieldKind::kDouble: return "D";
    case FieldKind::kString: return "Ljava/lang/String;";
    case FieldKind::kStruct: return nullptr;  // the nested class's, see bind()
  }
  return nullptr;
}

template <class T>
T load(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

template <class T>
void store(void* base, size_t offset, T value) {
  std::memcpy(static_cast<char*>(base) + offset, &value, sizeof value);
}

}  // namespace

StructFields::StructFields(const char* class_name, std::vector<Field> fields)
    : class_name_(class_name), fields_(std::move(fields)) {}

bool StructFields::bind(JNIEnv* env) {
  jclass local = env->FindClass(class_name_);
  if (!local) return false;
  class_ = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  if (!class_ || !(init_ = env->GetMethodID(class_, "<init>", "()V"))) return false;
  ids_.clear();
  for (const Field& f : fields_) {
    std::string nested_signature;
    const char* sig = signature(f);
    if (f.kind == FieldKind::kStruct) {
      nested_signature = std::string("L") + f.nested->class_name_ + ";";
      sig = nested_signature.c_str();
    }
    jfieldID id = env->GetFieldID(class_, f.java_name, sig);
    if (!id) return false;
    ids_.push_back(id);
  }
  return true;
}

bool StructFields::is_instance(JNIEnv* env, jobject object) const {
  return env->IsInstanceOf(object, class_) == JNI_TRUE;
}

bool StructFields::read(JNIEnv* env, jobject object, const char* what, void* out,
                        std::deque<std::string>* strings) const {
  if (!object) {
    throw_null(env, what);
    return false;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    const jfieldID id = ids_[i];
    switch (f.kind) {
      case FieldKind::kSize: {
        size_t value = 0;
        if (!size_from_java(env, env->GetLongField(object, id), f.c_name, &value)) return false;
        store(out, f.offset, value);
        break;
      }
      case FieldKind::kU64: store(out, f.offset, static_cast<uint64_t>(env->GetLongField(object, id))); break;
      case FieldKind::kU32: {
        const jlong value = env->GetLongField(object, id);
        if (value < 0 || value > jlong{UINT32_MAX}) {
          throw_peak(env, PEAK_ERR_INVALID_ARGUMENT,
                     std::string(f.c_name) + " is " + std::to_string(value) + "; it must be 0 to " +
                         std::to_string(UINT32_MAX));
          return false;
        }
        store(out, f.offset, static_cast<uint32_t>(value));
        break;
      }
      case FieldKind::kInt: store(out, f.offset, static_cast<int>(env->GetIntField(object, id))); break;
      case FieldKind::kBool: store(out, f.offset, env->GetBooleanField(object, id) ? 1 : 0); break;
      case FieldKind::kFloat: store(out, f.offset, static_cast<float>(env->GetFloatField(object, id))); break;
      case FieldKind::kDouble: store(out, f.offset, static_cast<double>(env->GetDoubleField(object, id))); break;
      case FieldKind::kString: {
        auto text = static_cast<jstring>(env->GetObjectField(object, id));
        const char* value = nullptr;
        if (text) {
          strings->emplace_back();
          const bool ok = c_string_from_java(env, text, f.c_name, &strings->back());
          env->DeleteLocalRef(text);
          if (!ok) return false;
          value = strings->back().c_str();
        }
        store(out, f.offset, value);
        break;
      }
      case FieldKind::kStruct: {
        jobject nested = env->GetObjectField(object, id);
        const bool ok = f.nested->read(env, nested, f.c_name, static_cast<char*>(out) + f.offset, strings);
        env->DeleteLocalRef(nested);
        if (!ok) return false;
        break;
      }
    }
  }
  return true;
}

bool StructFields::write(JNIEnv* env, const void* in, jobject object) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    const jfieldID id = ids_[i];
    switch (f.kind) {
      case FieldKind::kSize: env->SetLongField(object, id, java_size(load<size_t>(in, f.offset))); break;
      case FieldKind::kU64: env->SetLongField(object, id, static_cast<jlong>(load<uint64_t>(in, f.offset))); break;
      case FieldKind::kU32: env->SetLongField(object, id, static_cast<jlong>(load<uint32_t>(in, f.offset))); break;
      case FieldKind::kInt: env->SetIntField(object, id, load<int>(in, f.offset)); break;
      case FieldKind::kBool: env->SetBooleanField(object, id, load<int>(in, f.offset) != 0 ? JNI_TRUE : JNI_FALSE); break;
      case FieldKind::kFloat: env->SetFloatField(object, id, load<float>(in, f.offset)); break;
      case FieldKind::kDouble: env->SetDoubleField(object, id, load<double>(in, f.offset)); break;
      case FieldKind::kString: {
        const auto value = load<const char*>(in, f.offset);
        jstring text = nullptr;
        if (value && !(text = java_string(env, value))) return false;
        env->SetObjectField(object, id, text);
        if (text) env->DeleteLocalRef(text);
        break;
      }
      case FieldKind::kStruct: {
        jobject nested = env->GetObjectField(object, id);
        if (!nested) {
          throw_null(env, f.java_name);
          return false;
        }
        const bool ok = f.nested->write(env, static_cast<const char*>(in) + f.offset, nested);
        env->DeleteLocalRef(nested);
        if (!ok) return false;
        break;
      }
    }
  }
  return true;
}

jobject StructFields::make(JNIEnv* env, const void* in) const {
  jobject object = env->NewObject(class_, init_);
  if (!object) return nullptr;
  if (!write(env, in, object)) {
    env->DeleteLocalRef(object);
    return nullptr;
  }
  return object;
}

// ---- the tables: Java field, C field, kind

#define PEAK_FIELD(Struct, java, c, kind) Field{java, #c, FieldKind::kind, offsetof(Struct, c), nullptr}

StructFields model_params_fields("peak/ModelParams", {
    PEAK_FIELD(peak_model_params, "useMmap", use_mmap, kBool),
    PEAK_FIELD(peak_model_params, "useMlock", use_mlock, kBool),
    PEAK_FIELD(peak_model_params, "repackWeights", repack_weights, kInt),
    PEAK_FIELD(peak_model_params, "checkTensors", check_tensors, kBool),
});

StructFields context_params_fields("peak/ContextParams",
                                   {
                                       PEAK_FIELD(peak_context_params, "nCtx", n_ctx, kSize),
                                       PEAK_FIELD(peak_context_params, "nBatch", n_batch, kSize),
                                       PEAK_FIELD(peak_context_params, "nThreads", n_threads, kSize),
                                       PEAK_FIELD(peak_context_params, "typeK", type_k, kInt),
                                       PEAK_FIELD(peak_context_params, "typeV", type_v, kInt),
                                       PEAK_FIELD(peak_context_params, "logitsAll", logits_all, kBool),
                                       PEAK_FIELD(peak_context_params, "maxLogitRows", max_logit_rows, kSize),
                                   });

StructFields pass_group_params_fields("peak/PassGroupParams",
                                      {
                                          PEAK_FIELD(peak_pass_group_params, "nCtx", n_ctx, kSize),
                                          PEAK_FIELD(peak_pass_group_params, "maxSequences", max_sequences, kSize),
                                          PEAK_FIELD(peak_pass_group_params, "prefillChunk", prefill_chunk, kSize),
                                          PEAK_FIELD(peak_pass_group_params, "maxLogitRows", max_logit_rows, kSize),
                                          PEAK_FIELD(peak_pass_group_params, "nThreads", n_threads, kSize),
                                          PEAK_FIELD(peak_pass_group_params, "typeK", type_k, kInt),
                                          PEAK_FIELD(peak_pass_group_params, "typeV", type_v, kInt),
                                          PEAK_FIELD(peak_pass_group_params, "gatherWaitUs", gather_wait_us, kSize),
                                      });

StructFields sampler_params_fields("peak/SamplerParams",
                                   {
                                       PEAK_FIELD(peak_sampler_params, "temperature", temperature, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "topK", top_k, kSize),
                                       PEAK_FIELD(peak_sampler_params, "topP", top_p, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "minP", min_p, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "penaltyLastN", penalty_last_n, kSize),
                                       PEAK_FIELD(peak_sampler_params, "repeatPenalty", repeat_penalty, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "frequencyPenalty", frequency_penalty, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "presencePenalty", presence_penalty, kFloat),
                                       PEAK_FIELD(peak_sampler_params, "seed", seed, kU64),
                                       PEAK_FIELD(peak_sampler_params, "grammar", grammar, kString),
                                       PEAK_FIELD(peak_sampler_params, "grammarRoot", grammar_root, kString),
                                       PEAK_FIELD(peak_sampler_params, "jsonSchema", json_schema, kString),
                                   });

// The callbacks and the abort flag are the glue's own (generation.cpp).
StructFields generate_options_fields("peak/GenerateOptions",
                                     {
                                         PEAK_FIELD(peak_generate_params, "maxTokens", max_tokens, kSize),
                                         PEAK_FIELD(peak_generate_params, "addSpecial", add_special, kBool),
                                         PEAK_FIELD(peak_generate_params, "parseSpecial", parse_special, kBool),
                                         PEAK_FIELD(peak_generate_params, "lookupNgram", lookup_ngram, kInt),
                                         PEAK_FIELD(peak_generate_params, "draftMax", draft_max, kInt),
                                         PEAK_FIELD(peak_generate_params, "draftPMin", draft_p_min, kFloat),
                                     });

StructFields session_params_fields(
    "peak/SessionParams",
    {
        PEAK_FIELD(peak_session_params, "mode", mode, kInt),
        PEAK_FIELD(peak_session_params, "systemPrompt", system_prompt, kString),
        PEAK_FIELD(peak_session_params, "chatTemplate", chat_template, kString),
        PEAK_FIELD(peak_session_params, "enableThinking", enable_thinking, kBool),
        PEAK_FIELD(peak_session_params, "recentMax", recent_max, kSize),
        PEAK_FIELD(peak_session_params, "summaryMax", summary_max, kSize),
        PEAK_FIELD(peak_session_params, "triggerDiscard", trigger_discard, kSize),
        PEAK_FIELD(peak_session_params, "headroom", headroom, kSize),
        PEAK_FIELD(peak_session_params, "typeK", type_k, kInt),
        PEAK_FIELD(peak_session_params, "typeV", type_v, kInt),
        PEAK_FIELD(peak_session_params, "summaryTypeKv", summary_type_kv, kInt),
        PEAK_FIELD(peak_session_params, "summaryNCtx", summary_n_ctx, kSize),
        PEAK_FIELD(peak_session_params, "summaryMaxNewTokens", summary_max_new_tokens, kSize),
        PEAK_FIELD(peak_session_params, "rebuild", rebuild, kInt),
        PEAK_FIELD(peak_session_params, "waitForSummary", wait_for_summary, kBool),
        PEAK_FIELD(peak_session_params, "backgroundSummary", background_summary, kBool),
        PEAK_FIELD(peak_session_params, "nThreads", n_threads, kSize),
        PEAK_FIELD(peak_session_params, "nBatch", n_batch, kSize),
        Field{"sampler", "sampler", FieldKind::kStruct, offsetof(peak_session_params, sampler), &sampler_params_fields},
        PEAK_FIELD(peak_session_params, "tools", tools_json, kString),
        PEAK_FIELD(peak_session_params, "toolChoice", tool_choice, kInt),
        PEAK_FIELD(peak_session_params, "toolFunction", tool_function, kString),
        PEAK_FIELD(peak_session_params, "parallelToolCalls", parallel_tool_calls, kBool),
        PEAK_FIELD(peak_session_params, "toolCallFormat", tool_call_format, kString),
        PEAK_FIELD(peak_session_params, "verifyKvCells", verify_kv_cells, kSize),
        PEAK_FIELD(peak_session_params, "maxLogitRows", max_logit_rows, kSize),
    });

StructFields generate_result_fields("peak/GenerateResult",
                                    {
                                        PEAK_FIELD(peak_generate_result, "nPromptTokens", n_prompt_tokens, kSize),
                                        PEAK_FIELD(peak_generate_result, "nGeneratedTokens", n_generated_tokens, kSize),
                                        PEAK_FIELD(peak_generate_result, "stopReason", stop_reason, kInt),
                                        PEAK_FIELD(peak_generate_result, "promptSeconds", prompt_seconds, kDouble),
                                        PEAK_FIELD(peak_generate_result, "generateSeconds", generate_seconds, kDouble),
                                        PEAK_FIELD(peak_generate_result, "nDraftedTokens", n_drafted_tokens, kSize),
                                        PEAK_FIELD(peak_generate_result, "nAcceptedTokens", n_accepted_tokens, kSize),
                                    });

StructFields model_info_fields("peak/ModelInfo",
                               {
                                   PEAK_FIELD(peak_model_info, "architecture", architecture, kString),
                                   PEAK_FIELD(peak_model_info, "name", name, kString),
                                   PEAK_FIELD(peak_model_info, "chatTemplate", chat_template, kString),
                                   PEAK_FIELD(peak_model_info, "chatTemplateSource", chat_template_source, kString),
                                   PEAK_FIELD(peak_model_info, "chatTemplateWarning", chat_template_warning, kString),
                                   PEAK_FIELD(peak_model_info, "nParams", n_params, kU64),
                                   PEAK_FIELD(peak_model_info, "weightBytes", weight_bytes, kU64),
                                   PEAK_FIELD(peak_model_info, "nVocab", n_vocab, kSize),
                                   PEAK_FIELD(peak_model_info, "nCtxTrain", n_ctx_train, kSize),
                                   PEAK_FIELD(peak_model_info, "nEmbd", n_embd, kSize),
                                   PEAK_FIELD(peak_model_info, "nLayer", n_layer, kSize),
                                   PEAK_FIELD(peak_model_info, "nHead", n_head, kSize),
                                   PEAK_FIELD(peak_model_info, "nHeadKv", n_head_kv, kSize),
                                   PEAK_FIELD(peak_model_info, "headDim", head_dim, kSize),
                                   PEAK_FIELD(peak_model_info, "nFf", n_ff, kSize),
                                   PEAK_FIELD(peak_model_info, "bosToken", bos_token, kInt),
                                   PEAK_FIELD(peak_model_info, "eosToken", eos_token, kInt),
                                   PEAK_FIELD(peak_model_info, "decodeBytesPerToken", decode_bytes_per_token, kU64),
                                   PEAK_FIELD(peak_model_info, "isEncoder", is_encoder, kBool),
                                   PEAK_FIELD(peak_model_info, "pooling", pooling, kInt),
                               });

StructFields memory_estimate_fields("peak/MemoryEstimate", {
    PEAK_FIELD(peak_memory_estimate, "weightBytes", weight_bytes, kU64),
    PEAK_FIELD(peak_memory_estimate, "repackedBytes", repacked_bytes, kU64),
    PEAK_FIELD(peak_memory_estimate, "kvBytes", kv_bytes, kSize),
    PEAK_FIELD(peak_memory_estimate, "computeBytes", compute_bytes, kSize),
    PEAK_FIELD(peak_memory_estimate, "totalBytes", total_bytes, kU64),
});

StructFields session_stats_fields("peak/SessionStats", {
    PEAK_FIELD(peak_session_stats, "nCtx", n_ctx, kSize),
    PEAK_FIELD(peak_session_stats, "prefixTokens", prefix_tokens, kSize),
    PEAK_FIELD(peak_session_stats, "summaryTokens", summary_tokens, kSize),
    PEAK_FIELD(peak_session_stats, "recentTokens", recent_tokens, kSize),
    PEAK_FIELD(peak_session_stats, "recentMessages", recent_messages, kSize),
    PEAK_FIELD(peak_session_stats, "droppedSinceSummary", dropped_since_summary, kSize),
    PEAK_FIELD(peak_session_stats, "droppedTotal", dropped_total, kSize),
    PEAK_FIELD(peak_session_stats, "summaries", summaries, kSize),
    PEAK_FIELD(peak_session_stats, "summaryRunning", summary_running, kBool),
    PEAK_FIELD(peak_session_stats, "summarySeconds", summary_seconds, kDouble),
    PEAK_FIELD(peak_session_stats, "rebuildSeconds", rebuild_seconds, kDouble),
    PEAK_FIELD(peak_session_stats, "lastRebuildSeconds", last_rebuild_seconds, kDouble),
    PEAK_FIELD(peak_session_stats, "windowShiftSeconds", window_shift_seconds, kDouble),
    PEAK_FIELD(peak_session_stats, "workerRebuildSeconds", worker_rebuild_seconds, kDouble),
    PEAK_FIELD(peak_session_stats, "turns", turns, kSize),
    PEAK_FIELD(peak_session_stats, "kvBytes", kv_bytes, kSize),
    PEAK_FIELD(peak_session_stats, "stagingKvBytes", staging_kv_bytes, kSize),
    PEAK_FIELD(peak_session_stats, "summaryFailures", summary_failures, kSize),
});

StructFields adapter_info_fields("peak/AdapterInfo", {
    PEAK_FIELD(peak_adapter_info, "kind", kind, kInt),
    PEAK_FIELD(peak_adapter_info, "nTargets", n_targets, kSize),
    PEAK_FIELD(peak_adapter_info, "minRank", min_rank, kSize),
    PEAK_FIELD(peak_adapter_info, "maxRank", max_rank, kSize),
    PEAK_FIELD(peak_adapter_info, "alpha", alpha, kFloat),
    PEAK_FIELD(peak_adapter_info, "firstLayer", first_layer, kSize),
    PEAK_FIELD(peak_adapter_info, "lastLayer", last_layer, kSize),
    PEAK_FIELD(peak_adapter_info, "tensorBytes", tensor_bytes, kU64),
});

StructFields tool_parse_params_fields(
    "peak/ToolParseParams", {
                                PEAK_FIELD(peak_tool_parse_params, "formatName", format_name, kString),
                                PEAK_FIELD(peak_tool_parse_params, "templateSource", template_source, kString),
                                PEAK_FIELD(peak_tool_parse_params, "tools", tools_json, kString),
                                PEAK_FIELD(peak_tool_parse_params, "idPrefix", id_prefix, kString),
                                PEAK_FIELD(peak_tool_parse_params, "parseReasoning", parse_reasoning, kBool),
                                PEAK_FIELD(peak_tool_parse_params, "reasoningOpened", reasoning_opened, kBool),
                                PEAK_FIELD(peak_tool_parse_params, "reasoningOpen", reasoning_open, kString),
                                PEAK_FIELD(peak_tool_parse_params, "reasoningClose", reasoning_close, kString),
                            });

StructFields embedder_params_fields("peak/EmbedderParams",
                                    {
                                        PEAK_FIELD(peak_embedder_params, "nBatch", n_batch, kSize),
                                        PEAK_FIELD(peak_embedder_params, "nThreads", n_threads, kSize),
                                    });

StructFields embed_options_fields("peak/EmbedOptions",
                                  {
                                      PEAK_FIELD(peak_embed_params, "pooling", pooling, kInt),
                                      PEAK_FIELD(peak_embed_params, "normalize", normalize, kBool),
                                      PEAK_FIELD(peak_embed_params, "dimensions", dimensions, kSize),
                                      PEAK_FIELD(peak_embed_params, "truncate", truncate, kBool),
                                  });

StructFields rerank_options_fields("peak/RerankOptions", {
                                                             PEAK_FIELD(peak_rerank_params, "sigmoid", sigmoid, kBool),
                                                         });

StructFields projector_info_fields("peak/ProjectorInfo",
                                   {
                                       PEAK_FIELD(peak_projector_info, "projectorType", projector_type, kString),
                                       PEAK_FIELD(peak_projector_info, "imageSize", image_size, kU32),
                                       PEAK_FIELD(peak_projector_info, "patchSize", patch_size, kU32),
                                       PEAK_FIELD(peak_projector_info, "nImageTokens", n_image_tokens, kU32),
                                       PEAK_FIELD(peak_projector_info, "nEmbd", n_embd, kU32),
                                       PEAK_FIELD(peak_projector_info, "nParams", n_params, kU64),
                                       PEAK_FIELD(peak_projector_info, "sizeBytes", size_bytes, kU64),
                                       PEAK_FIELD(peak_projector_info, "imagePrefix", image_prefix, kString),
                                       PEAK_FIELD(peak_projector_info, "imageSuffix", image_suffix, kString),
                                       PEAK_FIELD(peak_projector_info, "bidirectional", bidirectional, kBool),
                                   });

StructFields image_encoder_params_fields("peak/ImageEncoderParams",
                                         {
                                             PEAK_FIELD(peak_image_encoder_params, "nThreads", n_threads, kSize),
                                         });

#undef PEAK_FIELD

bool bind_struct_fields(JNIEnv* env) {
  for (StructFields* table :
       {&model_params_fields, &context_params_fields, &pass_group_params_fields, &sampler_params_fields,
        &generate_options_fields, &session_params_fields, &generate_result_fields, &model_info_fields,
        &memory_estimate_fields, &session_stats_fields, &adapter_info_fields, &tool_parse_params_fields,
        &embedder_params_fields, &embed_options_fields, &rerank_options_fields, &projector_info_fields,
        &image_encoder_params_fields}) {
    if (!table->bind(env)) return false;
  }
  return true;
}

}  // namespace peak_jni
