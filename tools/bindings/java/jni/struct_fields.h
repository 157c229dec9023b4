// The parameter and result classes of the Java API mirror C API structs field
// by field: ModelParams is peak_model_params, SessionStats peak_session_stats
// and so on. A table per class names each Java field, the C field (as peak.h
// spells it, for messages) and where it lies in the struct, so one piece of code
// copies every class both ways: Java -> C for parameters (over the C defaults,
// struct_size included), C -> Java for the defaults a parameter object starts
// from and for results.
#ifndef PEAK_JNI_STRUCT_FIELDS_H
#define PEAK_JNI_STRUCT_FIELDS_H

#include <jni.h>

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace peak_jni {

// Java type <-> C type.
enum class FieldKind {
  kSize,    // long <-> size_t (negative refused)
  kU64,     // long <-> uint64_t, the same 64 bits (a seed; a byte count)
  kU32,     // long <-> uint32_t (negative or past 2^32 - 1 refused)
  kInt,     // int <-> int, int32_t or a C enum
  kBool,    // boolean <-> int 0/1
  kFloat,   // float <-> float
  kDouble,  // double <-> double
  kString,  // String <-> const char* (null <-> NULL; UTF-8; no NUL inside)
  kStruct   // another mirrored class <-> a nested struct
};

class StructFields;

struct Field {
  const char* java_name;
  const char* c_name;
  FieldKind kind;
  size_t offset;
  const StructFields* nested;  // kStruct only
};

class StructFields {
 public:
  StructFields(const char* class_name, std::vector<Field> fields);

  // Finds the class, its fields and no-argument constructor; false with an
  // exception pending when one is missing (the Java class was changed alone).
  bool bind(JNIEnv* env);
  bool is_instance(JNIEnv* env, jobject object) const;
  // Java object -> the struct at `out`, which holds the C defaults already.
  // Strings are kept in `strings` while the struct is used. Null: throws
  // NullPointerException naming `what`; a negative size: PeakException.
  bool read(JNIEnv* env, jobject object, const char* what, void* out, std::deque<std::string>* strings) const;
  // The struct at `in` -> the Java object's fields.
  bool write(JNIEnv* env, const void* in, jobject object) const;
  // A new Java object holding the struct at `in`; null with an exception pending.
  jobject make(JNIEnv* env, const void* in) const;

 private:
  const char* class_name_;
  std::vector<Field> fields_;
  std::vector<jfieldID> ids_;
  jclass class_ = nullptr;
  jmethodID init_ = nullptr;
};

// The tables, bound by bind_struct_fields() from JNI_OnLoad.
extern StructFields model_params_fields;      // peak.ModelParams: peak_model_params
extern StructFields context_params_fields;    // peak.ContextParams: peak_context_params (its pass group apart)
extern StructFields pass_group_params_fields;     // peak.PassGroupParams: peak_pass_group_params (no adapters)
extern StructFields sampler_params_fields;        // peak.SamplerParams: peak_sampler_params
extern StructFields generate_options_fields;      // peak.GenerateOptions: peak_generate_params (its numbers and flags)
extern StructFields session_params_fields;        // peak.SessionParams: peak_session_params
extern StructFields generate_result_fields;       // peak.GenerateResult: peak_generate_result
extern StructFields model_info_fields;            // peak.ModelInfo: peak_model_info
extern StructFields memory_estimate_fields;       // peak.MemoryEstimate: peak_memory_estimate
extern StructFields session_stats_fields;         // peak.SessionStats: peak_session_stats
extern StructFields adapter_info_fields;          // peak.AdapterInfo: peak_adapter_info
extern StructFields tool_parse_params_fields;     // peak.ToolParseParams: peak_tool_parse_params
extern StructFields embedder_params_fields;       // peak.EmbedderParams: peak_embedder_params
extern StructFields embed_options_fields;         // peak.EmbedOptions: peak_embed_params
extern StructFields rerank_options_fields;        // peak.RerankOptions: peak_rerank_params
extern StructFields projector_info_fields;        // peak.ProjectorInfo: peak_projector_info
extern StructFields image_encoder_params_fields;  // peak.ImageEncoderParams: peak_image_encoder_params

bool bind_struct_fields(JNIEnv* env);

}  // namespace peak_jni

#endif  // PEAK_JNI_STRUCT_FIELDS_H
