// The structs behind the C API's opaque handles.
#pragma once

#include <memory>
#include <string>

#include "model/model.h"
#include "sampling/sampler_chain.h"
#include "session/context.h"

struct peak_model {
  std::unique_ptr<peak::model::Model> model;
  std::string architecture;   // NUL-terminated copies for peak_model_info
  std::string name;
  std::string chat_template;  // recognised family name
  std::string chat_template_warning;
};

struct peak_context {
  const peak_model* model;
  std::unique_ptr<peak::session::Context> context;
};

struct peak_sampler {
  const peak_model* model;
  std::unique_ptr<peak::sampling::SamplerChain> chain;
};
