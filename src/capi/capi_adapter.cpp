// peak_adapter_*, peak_context_set_adapters, peak_lora_merge and peak_lora_synth.
#include "capi/capi_adapter.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "model/lora_merge.h"
#include "model/synth_lora.h"

namespace {

using peak::capi::fail;
using peak::capi::guarded;

bool is_control_vector(const std::string& path) {
  const auto file = peak::gguf::GgufFile::open(path);
  const auto arch = file->find("general.architecture");
  return arch && arch->type() == peak::gguf::ValueType::String && arch->str() == "controlvector";
}

}  // namespace

namespace peak::capi {

peak_status adapters_from_c(const peak_model* model, const peak_adapter_set_params* params,
                            runtime::Adapters* adapters) {
  const peak_adapter_set_params p = params ? *params : peak_adapter_set_default_params();
  if (!struct_size_ok(p.struct_size, sizeof(peak_adapter_set_params), "peak_adapter_set_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (!p.adapters && p.n_adapters > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_adapter_set_params.adapters is NULL");
  *adapters = runtime::Adapters{};
  for (size_t i = 0; i < p.n_adapters; ++i) {
    const peak_adapter* a = p.adapters[i].adapter;
    if (!a) return fail(PEAK_ERR_INVALID_ARGUMENT, "adapter " + std::to_string(i) + " is NULL");
    if (a->model != model) {
      return fail(PEAK_ERR_INVALID_ARGUMENT, "adapter " + std::to_string(i) + " was loaded for another model");
    }
    if (a->lora) {
      adapters->loras.push_back({a->lora, p.adapters[i].scale});
    } else {
      adapters->control_vectors.push_back({a->control_vector, p.adapters[i].scale});
    }
  }
  constexpr auto kMaxLayer = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  adapters->control_first = static_cast<int64_t>(std::min(p.control_first_layer, kMaxLayer));
  adapters->control_last = static_cast<int64_t>(std::min(p.control_last_layer, kMaxLayer));
  return PEAK_OK;
}

}  // namespace peak::capi

extern "C" {

peak_adapter_params peak_adapter_default_params(void) {
  peak_adapter_params p{};
  p.struct_size = sizeof(peak_adapter_params);
  p.use_mmap = 1;
  return p;
}

peak_status peak_adapter_load(const peak_model* model, const char* path, const peak_adapter_params* params,
                              peak_adapter** out) {
  PEAK_CHECK_ARG(out, "peak_adapter_load: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_adapter_load: model");
  PEAK_CHECK_ARG(path, "peak_adapter_load: path");
  if (!has_weights(model, "peak_adapter_load")) return PEAK_ERR_INVALID_ARGUMENT;
  const peak_adapter_params p = params ? *params : peak_adapter_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_adapter_params), "peak_adapter_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    auto a = std::make_unique<peak_adapter>();
    a->model = model;
    if (is_control_vector(path)) {
      a->control_vector = peak::model::ControlVector::load(*model->model, path);
    } else {
      peak::io::MapOptions map;
      map.use_mmap = p.use_mmap != 0;
      a->lora = peak::model::LoraAdapter::load(*model->model, path, map);
    }
    *out = a.release();
    return PEAK_OK;
  });
}

void peak_adapter_free(peak_adapter* adapter) { delete adapter; }

peak_status peak_adapter_get_info(const peak_adapter* adapter, peak_adapter_info* info) {
  PEAK_CHECK_ARG(adapter, "peak_adapter_get_info: adapter");
  PEAK_CHECK_ARG(info, "peak_adapter_get_info: info");
  if (!peak::capi::struct_size_ok(info->struct_size, sizeof(peak_adapter_info), "peak_adapter_info")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const size_t struct_size = info->struct_size;
  *info = peak_adapter_info{};
  info->struct_size = struct_size;
  if (const auto& l = adapter->lora) {
    info->kind = PEAK_ADAPTER_LORA;
    info->n_targets = l->n_pairs();
    info->min_rank = static_cast<size_t>(l->min_rank());
    info->max_rank = static_cast<size_t>(l->max_rank());
    info->alpha = l->alpha();
    info->tensor_bytes = l->tensor_bytes();
  } else {
    const auto& c = adapter->control_vector;
    info->kind = PEAK_ADAPTER_CONTROL_VECTOR;
    info->n_targets = static_cast<size_t>(c->n_directions());
    info->first_layer = static_cast<size_t>(c->first_layer());
    info->last_layer = static_cast<size_t>(c->last_layer());
  }
  return PEAK_OK;
}

peak_adapter_set_params peak_adapter_set_default_params(void) {
  peak_adapter_set_params p{};
  p.struct_size = sizeof(peak_adapter_set_params);
  p.control_first_layer = 0;
  p.control_last_layer = SIZE_MAX;
  return p;
}

peak_status peak_context_set_adapters(peak_context* ctx, const peak_adapter_set_params* params) {
  PEAK_CHECK_ARG(ctx, "peak_context_set_adapters: ctx");
  peak::runtime::Adapters adapters;
  if (const peak_status st = peak::capi::adapters_from_c(ctx->model, params, &adapters); st != PEAK_OK) return st;
  return guarded([&] {
    ctx->context->set_adapters(adapters);
    return PEAK_OK;
  });
}

peak_lora_merge_params peak_lora_merge_default_params(void) {
  peak_lora_merge_params p{};
  p.struct_size = sizeof(peak_lora_merge_params);
  p.scale = 1.0f;
  return p;
}

peak_status peak_lora_merge(const char* base_path, const char* adapter_path, const char* output_path,
                            const peak_lora_merge_params* params) {
  PEAK_CHECK_ARG(base_path, "peak_lora_merge: base_path");
  PEAK_CHECK_ARG(adapter_path, "peak_lora_merge: adapter_path");
  PEAK_CHECK_ARG(output_path, "peak_lora_merge: output_path");
  const peak_lora_merge_params p = params ? *params : peak_lora_merge_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_lora_merge_params), "peak_lora_merge_params") ||
      !peak::capi::at_most(p.n_threads, 256, "peak_lora_merge_params.n_threads")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    peak::model::LoraMergeOptions o;
    o.scale = p.scale;
    o.type = p.type ? p.type : "";
    o.n_threads = static_cast<int>(p.n_threads);
    if (p.progress) o.progress = [&p](float f) { return p.progress(f, p.progress_user_data) != 0; };
    peak::model::merge_lora(base_path, adapter_path, output_path, o);
    return PEAK_OK;
  });
}

peak_lora_synth_params peak_lora_synth_default_params(void) {
  peak_lora_synth_params p{};
  p.struct_size = sizeof(peak_lora_synth_params);
  p.rank = 16;
  p.type = PEAK_TYPE_F16;
  p.seed = 1;
  return p;
}

peak_status peak_lora_synth(const char* base_path, const char* output_path, const peak_lora_synth_params* params) {
  PEAK_CHECK_ARG(base_path, "peak_lora_synth: base_path");
  PEAK_CHECK_ARG(output_path, "peak_lora_synth: output_path");
  const peak_lora_synth_params p = params ? *params : peak_lora_synth_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_lora_synth_params), "peak_lora_synth_params") ||
      !peak::capi::at_most(p.rank, 65536, "peak_lora_synth_params.rank")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    peak::model::SynthLoraSpec spec;
    spec.rank = static_cast<int64_t>(p.rank);
    spec.alpha = p.alpha;
    spec.type = static_cast<peak::kernels::GgmlType>(peak::capi::raw_enum(p.type));
    spec.seed = p.seed;
    if (p.targets) {
      std::stringstream list(p.targets);
      for (std::string t; std::getline(list, t, ',');) spec.targets.push_back(t);
    }
    const auto base = peak::gguf::GgufFile::open(base_path);
    peak::model::write_synth_lora(*base, spec, output_path);
    return PEAK_OK;
  });
}

}  // extern "C"
