// The adapter handle of the C API and the conversion of a C adapter set into
// the runtime's, shared by contexts and sessions.
#pragma once

#include <memory>

#include "model/control_vector.h"
#include "model/lora_adapter.h"
#include "peak/peak.h"
#include "runtime/adapters.h"

struct peak_adapter {
  const peak_model* model;
  std::shared_ptr<const peak::model::LoraAdapter> lora;              // one of the two
  std::shared_ptr<const peak::model::ControlVector> control_vector;
};

namespace peak::capi {

// Checks `params` (NULL: none) for use on `model` and converts them; a refusal
// sets the last error and returns its status.
peak_status adapters_from_c(const peak_model* model, const peak_adapter_set_params* params,
                            runtime::Adapters* adapters);

}  // namespace peak::capi
