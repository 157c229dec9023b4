#include "model/synth_lora.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "gguf/gguf_writer.h"
#include "io/mapped_file.h"
#include "kernels/kernels.h"
#include "model/lora_adapter.h"
#include "model/synth_random.h"

namespace peak::model {

using kernels::ggml_row_bytes;
using kernels::GgmlType;
using kernels::kernels_for;

namespace {

struct PlannedMatrix {
  std::string name;
  int64_t ne[2];
  float stddev;
};

bool adapts(const SynthLoraSpec& spec, const std::string& projection) {
  return spec.targets.empty() ||
         std::find(spec.targets.begin(), spec.targets.end(), projection) != spec.targets.end();
}

}  // namespace

void write_synth_lora(const gguf::GgufFile& base, const SynthLoraSpec& spec, const std::string& path) {
  if (base.mapping() && base.mapping()->is_file(path)) {
    throw std::invalid_argument("refusing to overwrite the base model '" + path + "' with an adapter");
  }
  if (spec.rank < 1) throw std::invalid_argument("the rank must be at least 1");
  if (spec.type != GgmlType::F32 && spec.type != GgmlType::F16 && spec.type != GgmlType::Q8_0) {
    throw std::invalid_argument("adapter matrices are F32, F16 or Q8_0");
  }
  if (spec.type == GgmlType::Q8_0 && spec.rank % 32 != 0) {
    throw std::invalid_argument("Q8_0 rows hold blocks of 32: the rank must be a multiple of 32");
  }
  for (const std::string& t : spec.targets) {
    bool known = false;
    for (size_t p = 0; p < kProjectionCount; ++p) known |= t == projection_name(static_cast<Projection>(p));
    if (!known) throw std::invalid_argument("'" + t + "' is not a projection (attn_q, attn_k, ..., ffn_down)");
  }
  const auto arch = base.find("general.architecture");
  if (!arch || arch->type() != gguf::ValueType::String) throw std::invalid_argument("the base has no architecture");

  std::vector<PlannedMatrix> planned;
  for (size_t i = 0; i < base.n_tensors(); ++i) {
    const gguf::TensorInfo& t = base.tensor(i);
    const std::optional<LoraTarget> target = parse_lora_target(t.name);
    if (!target || t.n_dims != 2 || !adapts(spec, projection_name(target->projection))) continue;
    const std::string name(t.name);
    planned.push_back({name + ".lora_a", {t.ne[0], spec.rank}, 1.0f / std::sqrt(static_cast<float>(t.ne[0]))});
    planned.push_back({name + ".lora_b", {spec.rank, t.ne[1]}, 0.02f});
  }
  if (planned.empty()) throw std::invalid_argument("the base has none of the projections to adapt");

  gguf::GgufWriter w;
  w.set_string("general.architecture", arch->str());
  w.set_string("general.type", "adapter");
  w.set_string("general.name", "synthetic LoRA");
  w.set_string("adapter.type", "lora");
  w.set_f32("adapter.lora.alpha", spec.alpha);
  for (const PlannedMatrix& m : planned) w.add_tensor(m.name, spec.type, 2, m.ne);
  w.write_file(path, [&](size_t index, uint8_t* dst, uint64_t) {
    const PlannedMatrix& m = planned[index];
    SplitMix64 rng{spec.seed * 0x100000001b3ull + index};
    std::vector<float> row(static_cast<size_t>(m.ne[0]));
    const size_t row_bytes =
        static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(spec.type), static_cast<uint64_t>(m.ne[0])));
    for (int64_t r = 0; r < m.ne[1]; ++r) {
      for (float& v : row) v = rng.normal() * m.stddev;
      uint8_t* out = dst + static_cast<size_t>(r) * row_bytes;
      if (spec.type == GgmlType::F32) {
        std::memcpy(out, row.data(), row_bytes);
      } else {
        kernels_for(spec.type).from_float(row.data(), out, m.ne[0]);
      }
    }
  });
}

}  // namespace peak::model
