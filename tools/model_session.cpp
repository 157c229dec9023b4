#include "model_session.h"

void check_status(peak_status status) {
  if (status != PEAK_OK) throw CommandError(peak_last_error());
}

LoadedModel load_model(const std::string& path, const GenerationOptions& options, bool with_context) {
  LoadedModel m;
  peak_model* model = nullptr;
  check_status(peak_model_load(path.c_str(), &options.model, &model));
  m.model.reset(model);
  m.info.struct_size = sizeof m.info;
  check_status(peak_model_get_info(model, &m.info));
  if (!with_context) return m;
  peak_context* context = nullptr;
  check_status(peak_context_create(model, &options.context, &context));
  m.context.reset(context);
  peak_sampler* sampler = nullptr;
  check_status(peak_sampler_create(model, &options.sampler, &sampler));
  m.sampler.reset(sampler);
  return m;
}
