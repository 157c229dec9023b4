// peak inspect FILE: header, metadata (long arrays abbreviated), tensors and totals
// of a GGUF file, as text or JSON. A bad file gives exit status 1 and one line on
// stderr naming the problem.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "peak/peak.h"
#include "text_format.h"

namespace {

struct InspectOptions {
  const char* path = nullptr;
  bool json = false;
  bool full = false;     // print whole arrays and strings
  bool use_mmap = true;
};

constexpr size_t kShownArrayItems = 8;
constexpr size_t kShownStringBytes = 72;

void print_help() {
  std::printf(
      "usage: peak inspect FILE [--json] [--full] [--no-mmap]\n"
      "       peak inspect --cpu\n"
      "  Shows a GGUF file's header, metadata, tensors and totals, or with --cpu the\n"
      "  CPU paths peak found and the kernel path each tensor type uses. For a LoRA\n"
      "  adapter also the matrices it adapts and their ranks; for a control vector its layers.\n"
      "  --json      machine-readable output\n"
      "  --full      do not abbreviate long arrays and strings\n"
      "  --no-mmap   read the file instead of mapping it\n");
}

// Fails loudly if a C API call on a validated file fails (it should not).
void check(peak_status s) {
  if (s != PEAK_OK) throw std::runtime_error(peak_last_error());
}

// The shortest decimal that reads back as the same float32 (or float64) value.
std::string shortest_float(double d, bool is_f32) {
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    const double back = std::strtod(buf, nullptr);
    if (is_f32 ? static_cast<float>(back) == static_cast<float>(d) : back == d) break;
  }
  return buf;
}

// One element of an array (or the whole value when `element` is empty) as text or JSON.
std::string format_scalar(const peak_gguf* g, size_t kv, peak_gguf_type type, std::optional<size_t> element,
                          bool json, size_t max_string) {
  const bool in_array = element.has_value();
  const size_t i = element.value_or(0);
  switch (type) {
    case PEAK_GGUF_STRING: {
      const char* data = nullptr;
      size_t len = 0;
      check(in_array ? peak_gguf_get_array_string(g, kv, i, &data, &len) : peak_gguf_get_string(g, kv, &data, &len));
      const std::string_view s(data, len);
      return json ? json_string(s) : "\"" + escape_for_terminal(s, max_string) + "\"";
    }
    case PEAK_GGUF_BOOL: {
      int b = 0;
      check(in_array ? peak_gguf_get_array_bool(g, kv, i, &b) : peak_gguf_get_bool(g, kv, &b));
      return b ? "true" : "false";
    }
    case PEAK_GGUF_FLOAT32:
    case PEAK_GGUF_FLOAT64: {
      double d = 0;
      check(in_array ? peak_gguf_get_array_float(g, kv, i, &d) : peak_gguf_get_float(g, kv, &d));
      // JSON has no NaN or infinities.
      if (json && (d != d || d > 1.7976931348623157e308 || d < -1.7976931348623157e308)) return "null";
      return shortest_float(d, type == PEAK_GGUF_FLOAT32);
    }
    case PEAK_GGUF_UINT8: case PEAK_GGUF_UINT16: case PEAK_GGUF_UINT32: case PEAK_GGUF_UINT64: {
      uint64_t u = 0;
      check(in_array ? peak_gguf_get_array_uint(g, kv, i, &u) : peak_gguf_get_uint(g, kv, &u));
      return std::to_string(u);
    }
    case PEAK_GGUF_INT8: case PEAK_GGUF_INT16: case PEAK_GGUF_INT32: case PEAK_GGUF_INT64: {
      int64_t v = 0;
      check(in_array ? peak_gguf_get_array_int(g, kv, i, &v) : peak_gguf_get_int(g, kv, &v));
      return std::to_string(v);
    }
    case PEAK_GGUF_ARRAY:
      return json ? "null" : "[...]";
    case PEAK_GGUF_TYPE_INVALID: break;  // peak_gguf_kv_type of a valid index never gives it
  }
  return "?";
}

std::string format_array(const peak_gguf* g, size_t kv, const InspectOptions& opt, std::string* type_out) {
  peak_gguf_type elem = PEAK_GGUF_UINT8;
  size_t count = 0;
  check(peak_gguf_get_array_info(g, kv, &elem, &count));
  *type_out = std::string("array[") + peak_gguf_type_name(elem) + "]";
  const size_t shown = opt.full ? count : (count < kShownArrayItems ? count : kShownArrayItems);
  const size_t max_string = opt.full ? SIZE_MAX : 24;
  std::string out = "[";
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += format_scalar(g, kv, elem, i, opt.json, max_string);
  }
  if (shown < count && !opt.json) out += ", ...";
  out += "]";
  if (!opt.json) out += " (" + std::to_string(count) + " items)";
  return out;
}

struct TypeTotals {
  uint64_t tensors = 0, params = 0, bytes = 0;
};

// The string value of `key`, or "" when absent or not a string.
std::string string_value(const peak_gguf* g, const char* key) {
  size_t index = 0;
  const char* data = nullptr;
  size_t length = 0;
  if (peak_gguf_lookup_key(g, key, &index) != PEAK_OK || peak_gguf_get_string(g, index, &data, &length) != PEAK_OK) {
    return "";
  }
  return std::string(data, length);
}

// A LoRA adapter: what it adapts, at which rank, with which alpha; a control
// vector: its layers. As the file says (peak_adapter_load checks it against a model).
void print_adapter_summary(const peak_gguf* g) {
  const size_t n_tensors = peak_gguf_n_tensors(g);
  if (string_value(g, "general.type") == "adapter" && string_value(g, "adapter.type") == "lora") {
    size_t index = 0;
    double alpha = 0;
    const bool has_alpha = peak_gguf_lookup_key(g, "adapter.lora.alpha", &index) == PEAK_OK &&
                           peak_gguf_get_float(g, index, &alpha) == PEAK_OK;
    std::map<std::string, std::string> targets;  // adapted matrix -> "rank R, A/B types"
    int64_t min_rank = 0, max_rank = 0;
    for (size_t i = 0; i < n_tensors; ++i) {
      peak_gguf_tensor_info t;
      check(peak_gguf_get_tensor(g, i, &t));
      const std::string name = t.name;
      if (name.size() <= 7 || name.compare(name.size() - 7, 7, ".lora_a") != 0) continue;
      const int64_t rank = t.ne[1];
      min_rank = targets.empty() ? rank : std::min(min_rank, rank);
      max_rank = std::max(max_rank, rank);
      targets[name.substr(0, name.size() - 7)] = "rank " + std::to_string(rank) + ", A " + peak_type_name(t.type);
    }
    std::printf("\nLoRA adapter for %s: %zu matrices, rank %s, alpha %s\n",
                escape_for_terminal(string_value(g, "general.architecture").c_str(), 64).c_str(), targets.size(),
                min_rank == max_rank ? std::to_string(max_rank).c_str()
                                     : (std::to_string(min_rank) + "-" + std::to_string(max_rank)).c_str(),
                has_alpha ? shortest_float(alpha, true).c_str() : "none (scales apply as given)");
    for (const auto& [target, what] : targets) {
      std::printf("  %-40s %s\n", escape_for_terminal(target.c_str(), 64).c_str(), what.c_str());
    }
  } else if (string_value(g, "general.architecture") == "controlvector") {
    std::string layers;
    for (size_t i = 0; i < n_tensors; ++i) {
      peak_gguf_tensor_info t;
      check(peak_gguf_get_tensor(g, i, &t));
      if (std::strncmp(t.name, "direction.", 10) == 0) layers += (layers.empty() ? "" : " ") + std::string(t.name + 10);
    }
    const std::string hint = string_value(g, "controlvector.model_hint");
    std::printf("\ncontrol vector%s%s: directions after layers %s\n", hint.empty() ? "" : " for ",
                escape_for_terminal(hint.c_str(), 64).c_str(), escape_for_terminal(layers.c_str(), 400).c_str());
  }
}

int print_text(const peak_gguf* g, const InspectOptions& opt) {
  std::printf("file:        %s\n", opt.path);
  std::printf("format:      GGUF version %u, alignment %u, %" PRIu64 " bytes (%s)\n", peak_gguf_version(g),
              peak_gguf_alignment(g), peak_gguf_file_size(g), human_bytes(peak_gguf_file_size(g)).c_str());
  std::printf("data offset: %" PRIu64 "\n", peak_gguf_data_offset(g));

  const size_t n_kv = peak_gguf_n_kv(g);
  std::printf("\nmetadata: %zu keys\n", n_kv);
  for (size_t i = 0; i < n_kv; ++i) {
    const peak_gguf_type type = peak_gguf_kv_type(g, i);
    std::string type_name = peak_gguf_type_name(type);
    const std::string value = type == PEAK_GGUF_ARRAY
                                  ? format_array(g, i, opt, &type_name)
                                  : format_scalar(g, i, type, std::nullopt, false, opt.full ? SIZE_MAX : kShownStringBytes);
    std::printf("  %-40s %-15s %s\n", escape_for_terminal(peak_gguf_key(g, i), 200).c_str(), type_name.c_str(),
                value.c_str());
  }

  const size_t n_tensors = peak_gguf_n_tensors(g);
  std::printf("\ntensors: %zu\n", n_tensors);
  if (n_tensors > 0) std::printf("  %5s  %-32s %-7s %-24s %12s %12s\n", "#", "name", "type", "shape", "offset", "bytes");
  std::map<std::string, TypeTotals> per_type;
  TypeTotals all;
  for (size_t i = 0; i < n_tensors; ++i) {
    peak_gguf_tensor_info t;
    check(peak_gguf_get_tensor(g, i, &t));
    std::string shape = "[";
    uint64_t params = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      if (d) shape += ", ";
      shape += std::to_string(t.ne[d]);
      params *= static_cast<uint64_t>(t.ne[d]);
    }
    shape += "]";
    std::printf("  %5zu  %-32s %-7s %-24s %12" PRIu64 " %12" PRIu64 "\n", i,
                escape_for_terminal(t.name, 64).c_str(), peak_type_name(t.type), shape.c_str(), t.offset, t.n_bytes);
    TypeTotals& tt = per_type[peak_type_name(t.type)];
    tt.tensors += 1;
    tt.params += params;
    tt.bytes += t.n_bytes;
    all.params += params;
    all.bytes += t.n_bytes;
  }
  std::printf("\ntotals: %zu tensors, %" PRIu64 " parameters, %" PRIu64 " bytes of tensor data (%s)\n",
              n_tensors, all.params, all.bytes, human_bytes(all.bytes).c_str());
  for (const auto& [name, tt] : per_type) {
    std::printf("  %-7s %5" PRIu64 " tensors %14" PRIu64 " parameters %14" PRIu64 " bytes\n", name.c_str(),
                tt.tensors, tt.params, tt.bytes);
  }
  print_adapter_summary(g);
  return 0;
}

int print_json(const peak_gguf* g, const InspectOptions& opt) {
  std::string out = "{\n";
  out += "  \"file\": " + json_string(opt.path) + ",\n";
  out += "  \"version\": " + std::to_string(peak_gguf_version(g)) + ",\n";
  out += "  \"alignment\": " + std::to_string(peak_gguf_alignment(g)) + ",\n";
  out += "  \"file_size\": " + std::to_string(peak_gguf_file_size(g)) + ",\n";
  out += "  \"data_offset\": " + std::to_string(peak_gguf_data_offset(g)) + ",\n";
  out += "  \"metadata\": [";
  const size_t n_kv = peak_gguf_n_kv(g);
  for (size_t i = 0; i < n_kv; ++i) {
    const peak_gguf_type type = peak_gguf_kv_type(g, i);
    out += i ? ",\n    " : "\n    ";
    out += "{\"key\": " + json_string(peak_gguf_key(g, i)) + ", ";
    if (type == PEAK_GGUF_ARRAY) {
      peak_gguf_type elem = PEAK_GGUF_UINT8;
      size_t count = 0;
      check(peak_gguf_get_array_info(g, i, &elem, &count));
      std::string unused;
      out += "\"type\": \"array\", \"element_type\": \"" + std::string(peak_gguf_type_name(elem)) +
             "\", \"count\": " + std::to_string(count) + ", \"items\": " + format_array(g, i, opt, &unused) +
             ", \"abbreviated\": " + (!opt.full && count > kShownArrayItems ? "true" : "false") + "}";
    } else {
      out += "\"type\": \"" + std::string(peak_gguf_type_name(type)) +
             "\", \"value\": " + format_scalar(g, i, type, std::nullopt, true, SIZE_MAX) + "}";
    }
  }
  out += n_kv ? "\n  ],\n" : "],\n";
  out += "  \"tensors\": [";
  const size_t n_tensors = peak_gguf_n_tensors(g);
  uint64_t total_params = 0, total_bytes = 0;
  for (size_t i = 0; i < n_tensors; ++i) {
    peak_gguf_tensor_info t;
    check(peak_gguf_get_tensor(g, i, &t));
    std::string shape;
    uint64_t params = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      shape += (d ? ", " : "") + std::to_string(t.ne[d]);
      params *= static_cast<uint64_t>(t.ne[d]);
    }
    total_params += params;
    total_bytes += t.n_bytes;
    out += i ? ",\n    " : "\n    ";
    out += "{\"name\": " + json_string(t.name) + ", \"type\": \"" + peak_type_name(t.type) + "\", \"shape\": [" +
           shape + "], \"offset\": " + std::to_string(t.offset) + ", \"bytes\": " + std::to_string(t.n_bytes) + "}";
  }
  out += n_tensors ? "\n  ],\n" : "],\n";
  out += "  \"totals\": {\"tensors\": " + std::to_string(n_tensors) + ", \"parameters\": " +
         std::to_string(total_params) + ", \"bytes\": " + std::to_string(total_bytes) + "}\n}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

int run_inspect(int argc, char** argv) {
  InspectOptions opt;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      print_help();
      return 0;
    } else if (std::strcmp(a, "--json") == 0) {
      opt.json = true;
    } else if (std::strcmp(a, "--full") == 0) {
      opt.full = true;
    } else if (std::strcmp(a, "--cpu") == 0) {
      std::fputs(peak_system_info(), stdout);
      return 0;
    } else if (std::strcmp(a, "--no-mmap") == 0) {
      opt.use_mmap = false;
    } else if (a[0] == '-' && a[1] != '\0') {
      std::fprintf(stderr, "peak inspect: unknown option '%s' (see peak inspect --help)\n", a);
      return 2;
    } else if (opt.path) {
      std::fprintf(stderr, "peak inspect: more than one file given ('%s' and '%s')\n", opt.path, a);
      return 2;
    } else {
      opt.path = a;
    }
  }
  if (!opt.path) {
    std::fprintf(stderr, "peak inspect: no file given (usage: peak inspect FILE [--json] [--full])\n");
    return 2;
  }
  peak_gguf_params params = peak_gguf_default_params();
  params.use_mmap = opt.use_mmap ? 1 : 0;
  peak_gguf* g = nullptr;
  if (peak_gguf_open(opt.path, &params, &g) != PEAK_OK) {
    std::fprintf(stderr, "peak inspect: %s\n", peak_last_error());
    return 1;
  }
  int status = 1;
  try {
    status = opt.json ? print_json(g, opt) : print_text(g, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peak inspect: %s\n", e.what());
  }
  peak_gguf_free(g);
  return status;
}
