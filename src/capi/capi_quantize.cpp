// peak_quantize and peak_synth: writing models through the C API; removing the
// temporary files of writes a signal interrupts.
#include <climits>
#include <memory>
#include <string>

#include "capi/capi_guard.h"
#include "io/atomic_file.h"
#include "model/quant_policy.h"
#include "model/quantize.h"
#include "model/synth.h"

namespace {

using peak::capi::fail;
using peak::capi::guarded;

std::function<bool(float)> progress_of(peak_progress_fn fn, void* user) {
  if (!fn) return {};
  return [fn, user](float f) { return fn(f, user) != 0; };
}

}  // namespace

extern "C" {

peak_quantize_params peak_quantize_default_params(void) {
  peak_quantize_params p{};
  p.struct_size = sizeof(peak_quantize_params);
  p.type = "Q4_K_M";
  return p;
}

peak_status peak_quantize(const char* input_path, const char* output_path, const peak_quantize_params* params) {
  PEAK_CHECK_ARG(input_path, "peak_quantize: input_path");
  PEAK_CHECK_ARG(output_path, "peak_quantize: output_path");
  const peak_quantize_params p = params ? *params : peak_quantize_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_quantize_params), "peak_quantize_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  PEAK_CHECK_ARG(p.type, "peak_quantize: type");
  // The quantizer has no thread limit of its own (it starts up to one thread per
  // row), so a count beyond int, such as a negative number converted to size_t,
  // is refused rather than clamped.
  if (!peak::capi::at_most(p.n_threads, INT_MAX, "peak_quantize_params.n_threads")) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    peak::model::QuantizeOptions o;
    o.type = p.type;
    o.pure = p.pure != 0;
    o.n_threads = static_cast<int>(p.n_threads);
    o.progress = progress_of(p.progress, p.progress_user_data);
    peak::model::quantize_model(input_path, output_path, o);
    return PEAK_OK;
  });
}

peak_synth_params peak_synth_default_params(void) {
  peak_synth_params p{};
  p.struct_size = sizeof(peak_synth_params);
  p.preset = "qwen3-0.6b";
  p.type = "Q4_0";
  p.seed = 1;
  return p;
}

peak_status peak_synth(const char* output_path, const peak_synth_params* params) {
  PEAK_CHECK_ARG(output_path, "peak_synth: output_path");
  const peak_synth_params p = params ? *params : peak_synth_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_synth_params), "peak_synth_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  PEAK_CHECK_ARG(p.preset, "peak_synth: preset");
  PEAK_CHECK_ARG(p.type, "peak_synth: type");
  return guarded([&] {
    const peak::model::SynthSpec spec = peak::model::synth_preset(p.preset);
    const peak::model::FileType file_type = peak::model::parse_file_type(p.type);
    peak::model::ModelLayout layout;
    layout.n_layer = spec.n_layer;
    layout.n_head = spec.n_head;
    layout.n_head_kv = spec.n_head_kv;
    layout.has_output = !spec.tied_output;
    const peak::model::QuantPolicy policy(file_type, layout, /*pure=*/file_type.llama_ftype == 0);

    std::unique_ptr<peak::gguf::GgufFile> vocab;
    if (p.vocab_from) vocab = peak::gguf::GgufFile::open(p.vocab_from);
    peak::model::SynthOptions o;
    o.seed = p.seed;
    o.vocab_from = vocab.get();
    o.tensor_type = [&policy](const std::string& name, int64_t row) { return policy.type_for(name, 2, row); };
    o.file_type = file_type.llama_ftype;
    if (p.progress) {
      o.progress = [&p](size_t done, size_t total) {
        if (!p.progress(static_cast<float>(done) / static_cast<float>(total), p.progress_user_data)) {
          throw peak::model::LoadCancelled();
        }
      };
    }
    peak::model::write_synth_model(spec, o, output_path);
    return PEAK_OK;
  });
}

const char* peak_synth_presets(void) {
  static const std::string names = [] {
    std::string s;
    for (const std::string& n : peak::model::synth_preset_names()) s += (s.empty() ? "" : ",") + n;
    return s;
  }();
  return names.c_str();
}

void peak_remove_temporary_files(void) { peak::io::remove_temporary_files_from_signal_handler(); }

}  // extern "C"
