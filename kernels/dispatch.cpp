// Builds one kernel table per path on first use and hands out the active one.
#include "kernels/dispatch.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cpu_features.h"
#include "kernels/kernel_table.h"
#include "kernels/scalar/scalar_install.h"
#include "log/log.h"

namespace peak::kernels {
namespace {

constexpr const char* kIsaNames[kIsaCount] = {"scalar", "avx2", "avxvnni", "avx512", "avx512bf16",
                                                    "neon",   "dotprod", "i8mm"};

bool is_x86_path(Isa isa) {
  return isa == Isa::Avx2 || isa == Isa::AvxVnni || isa == Isa::Avx512 || isa == Isa::Avx512Bf16;
}
bool is_arm_path(Isa isa) { return isa == Isa::Neon || isa == Isa::Dotprod || isa == Isa::I8mm; }

// Same family and not above `target`: the paths whose kernels a table for
// `target` is built from.
bool path_included(Isa path, Isa target) {
  if (path == Isa::Scalar) return true;
  const bool same_family = (is_x86_path(path) && is_x86_path(target)) || (is_arm_path(path) && is_arm_path(target));
  return same_family && path <= target;
}

void install_path(Isa isa, KernelTable& table) {
  switch (isa) {
    case Isa::Scalar:
      install_scalar_kernels(table);
      break;
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::Avx2:
      install_avx2_kernels(table);
      install_avx2_attention_kernels(table);
      install_avx2_conversions(table);
      break;
    case Isa::AvxVnni:
      install_avxvnni_kernels(table);
      break;
    case Isa::Avx512:
      install_avx512_kernels(table);
      install_avx512_attention_kernels(table);
      break;
    case Isa::Avx512Bf16:
      install_avx512bf16_attention_kernels(table);
      break;
#endif
#if defined(__aarch64__)
    case Isa::Neon:
      install_neon_kernels(table);
      install_neon_attention_kernels(table);
      install_neon_conversions(table);
      break;
    case Isa::Dotprod:
      install_dotprod_kernels(table);
      break;
    case Isa::I8mm:
      install_i8mm_kernels(table);
      break;
#endif
    default:
      break;
  }
}

KernelTable build_table(Isa target) {
  KernelTable table;
  for (int i = 0; i < kIsaCount; ++i) {
    const Isa path = static_cast<Isa>(i);
    // A lower path the CPU lacks is skipped (AVX-512 VNNI without AVX-VNNI, say).
    if (path_included(path, target) && cpu_has_isa(path)) install_path(path, table);
  }
  return table;
}

// The tuning of path `isa` on this CPU (KernelTuning says why AMD cores
// differ); the same on every x86 path.
KernelTuning tuning_for(Isa isa) {
  KernelTuning tuning;
  if (is_x86_path(isa) && cpu_features().amd) {
    tuning.prefetch_decode_rows = false;
    tuning.prefetch_into_l2 = true;
  }
  return tuning;
}

// Tables and tunings of every path the CPU supports, built once on first use
// (thread-safe static initialisation); a path the CPU lacks maps to the
// scalar ones.
struct Paths {
  KernelTable tables[kIsaCount];
  KernelTuning tunings[kIsaCount];
  bool built[kIsaCount] = {};

  int index(Isa isa) const { return built[static_cast<int>(isa)] ? static_cast<int>(isa) : 0; }
};

const Paths& paths() {
  static const Paths paths = [] {
    Paths p;
    for (int i = 0; i < kIsaCount; ++i) {
      if (cpu_has_isa(static_cast<Isa>(i))) {
        p.tables[i] = build_table(static_cast<Isa>(i));
        p.tunings[i] = tuning_for(static_cast<Isa>(i));
        p.built[i] = true;
      }
    }
    return p;
  }();
  return paths;
}

const KernelTable& table_for(Isa isa) {
  const Paths& p = paths();
  return p.tables[p.index(isa)];
}

}  // namespace

TypeKernels& KernelTable::operator[](GgmlType t) { return types[static_cast<uint32_t>(t)]; }

void KernelTable::set_dot(GgmlType t, Isa isa, VecDotFn vec_dot, GemmFn gemm) {
  types[static_cast<uint32_t>(t)].vec_dot = vec_dot;
  types[static_cast<uint32_t>(t)].gemm = gemm;
  dot_path[static_cast<uint32_t>(t)] = isa;
}

void KernelTable::set_from_float(GgmlType t, RowFromFloatFn from_float) {
  types[static_cast<uint32_t>(t)].from_float = from_float;
}

void install_scalar_kernels(KernelTable& table) {
  scalar::install_float_types(table);
  scalar::install_legacy_quants(table);
  scalar::install_k_quants(table);
  scalar::install_iq4_quants(table);
  table.floats.exp_sum = scalar::exp_sum;
  table.floats.scale_max = scalar::scale_max;
  table.floats.swiglu = scalar::swiglu;
  table.floats.geglu = scalar::geglu;
  table.floats.softcap = scalar::softcap;
}

const char* isa_name(Isa isa) {
  const int i = static_cast<int>(isa);
  return i >= 0 && i < kIsaCount ? kIsaNames[i] : "unknown";
}

bool isa_from_name(const char* name, Isa* out) {
  if (name == nullptr) return false;
  for (int i = 0; i < kIsaCount; ++i) {
    if (std::strcmp(name, kIsaNames[i]) == 0) {
      *out = static_cast<Isa>(i);
      return true;
    }
  }
  return false;
}

bool cpu_has_isa(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::Scalar: return true;
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::Avx2: return f.avx2;
    case Isa::AvxVnni: return f.avx_vnni;
    case Isa::Avx512: return f.avx512;
    case Isa::Avx512Bf16: return f.avx512_bf16;
#endif
#if defined(__aarch64__)
    case Isa::Neon: return f.neon;
    case Isa::Dotprod: return f.dotprod;
    case Isa::I8mm: return f.i8mm;
#endif
    default: return false;
  }
}

Isa best_cpu_isa() {
  for (int i = kIsaCount - 1; i > 0; --i) {
    if (cpu_has_isa(static_cast<Isa>(i))) return static_cast<Isa>(i);
  }
  return Isa::Scalar;
}

Isa resolve_isa_request(const char* request) {
  const Isa best = best_cpu_isa();
  if (request == nullptr || *request == '\0') return best;
  Isa wanted;
  if (!isa_from_name(request, &wanted)) {
    log::warn(std::string("PEAK_ISA=") + request + " is not a known path; using " + isa_name(best));
    return best;
  }
  if (!cpu_has_isa(wanted)) {
    log::warn(std::string("PEAK_ISA=") + request + " is not supported by this CPU; using " + isa_name(best));
    return best;
  }
  return wanted;
}

Isa active_isa() {
  static const Isa active = resolve_isa_request(std::getenv("PEAK_ISA"));
  return active;
}

const TypeKernels& kernels_for_isa(GgmlType type, Isa isa) {
  static const TypeKernels kNone;
  const uint32_t id = static_cast<uint32_t>(type);
  if (id >= kGgmlTypeIdCount) return kNone;
  return table_for(isa).types[id];
}

const TypeKernels& kernels_for(GgmlType type) { return kernels_for_isa(type, active_isa()); }

const FloatKernels& float_kernels_for_isa(Isa isa) { return table_for(isa).floats; }

const FloatKernels& float_kernels() { return float_kernels_for_isa(active_isa()); }

const KernelTuning& kernel_tuning_for_isa(Isa isa) {
  const Paths& p = paths();
  return p.tunings[p.index(isa)];
}

const KernelTuning& kernel_tuning() { return kernel_tuning_for_isa(active_isa()); }

Isa kernel_path_for(GgmlType type, Isa isa) {
  const uint32_t id = static_cast<uint32_t>(type);
  return id < kGgmlTypeIdCount ? table_for(isa).dot_path[id] : Isa::Scalar;
}

Isa kernel_path_for(GgmlType type) { return kernel_path_for(type, active_isa()); }

}  // namespace peak::kernels
