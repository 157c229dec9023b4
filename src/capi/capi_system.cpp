// peak_system_info: the CPU paths peak found and the one each type uses;
// peak_default_threads: the fast cores a context uses by default.
#include <string>

#include "capi/capi_guard.h"
#include "core/cpu_topology.h"
#include "kernels/dispatch.h"

namespace {

std::string describe_system() {
  using peak::kernels::active_isa;
  using peak::kernels::best_cpu_isa;
  using peak::kernels::cpu_has_isa;
  using peak::kernels::ggml_type_name;
  using peak::kernels::Isa;
  using peak::kernels::isa_name;
  std::string s = "cpu paths:";
  for (int i = 0; i < peak::kernels::kIsaCount; ++i) {
    const auto isa = static_cast<Isa>(i);
    if (cpu_has_isa(isa)) s += std::string(" ") + isa_name(isa);
  }
  s += "\nbest path: ";
  s += isa_name(best_cpu_isa());
  s += "\nactive path: ";
  s += isa_name(active_isa());
  s += " (PEAK_ISA lowers it)\n";
  for (uint32_t id = 0; id < peak::kernels::kGgmlTypeIdCount; ++id) {
    if (!peak::kernels::ggml_type_is_storable(id)) continue;
    const auto type = static_cast<peak::kernels::GgmlType>(id);
    if (!peak::kernels::kernels_for(type).vec_dot) continue;
    s += std::string(ggml_type_name(id)) + ": " + isa_name(peak::kernels::kernel_path_for(type)) + "\n";
  }
  return s;
}

}  // namespace

extern "C" const char* peak_system_info(void) {
  // Computed once; the function-local static makes that thread-safe.
  static const std::string info = describe_system();
  return info.c_str();
}

extern "C" size_t peak_default_threads(void) { return static_cast<size_t>(peak::core::default_threads()); }
