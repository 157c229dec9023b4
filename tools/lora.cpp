// peak lora merge BASE ADAPTER OUT: one plain model of base + adapter.
// peak lora synth BASE OUT: a random adapter for a model (tests, measurements).
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "output_file.h"
#include "progress_bar.h"

namespace {

void print_help() {
  std::printf(
      "usage: peak lora merge BASE.gguf ADAPTER.gguf OUTPUT.gguf [--type T] [--scale S] [-t N]\n"
      "       peak lora synth BASE.gguf OUTPUT.gguf [--rank R] [--alpha A] [--type T] [--targets LIST] [--seed N]\n"
      "  merge: writes BASE with every matrix the LoRA adapter adapts replaced by\n"
      "         W + S*alpha/rank*B*A (S when the adapter has no alpha), the rest copied.\n"
      "    --type T     type of the merged matrices (F32, F16, Q8_0, Q4_0 ...; default: each keeps\n"
      "                 its own); for another type throughout, run peak quantize on the output\n"
      "    --scale S    the adapter's scale (default 1)\n"
      "    -t N         threads (default: all hardware threads)\n"
      "  synth: writes a random adapter for BASE's projections (A ~ N(0, 1/n_in), B ~ N(0, 0.02^2)),\n"
      "         to try adapters and measure their cost without a training run.\n"
      "    --rank R     (default 16)\n"
      "    --alpha A    adapter.lora.alpha (default 0: scales apply as given)\n"
      "    --type T     F16 (default), F32 or Q8_0 (rank a multiple of 32)\n"
      "    --targets L  comma-separated projections: attn_q, attn_k, attn_v, attn_qkv, attn_output,\n"
      "                 ffn_gate, ffn_up, ffn_down (default: all the model has)\n"
      "    --seed N     random seed (default 1)\n");
}

int run_merge(ArgCursor& args) {
  std::string positional[3];
  int n_positional = 0;
  std::string type;
  peak_lora_merge_params p = peak_lora_merge_default_params();
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "--type")) {
      type = args.value(a);
    } else if (!std::strcmp(a, "--scale")) {
      p.scale = static_cast<float>(args.real(a, -1e6, 1e6));
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      p.n_threads = static_cast<size_t>(args.integer(a, 1, 256));
    } else if (a[0] == '-' && a[1] != '\0') {
      throw UsageError(std::string("unknown option '") + a + "' (see peak lora --help)");
    } else if (n_positional < 3) {
      positional[n_positional++] = a;
    } else {
      throw UsageError(std::string("unexpected argument '") + a + "'");
    }
  }
  if (n_positional != 3) throw UsageError("merge needs BASE.gguf ADAPTER.gguf OUTPUT.gguf (see peak lora --help)");
  ProgressBar bar{"merging"};
  p.type = type.empty() ? nullptr : type.c_str();
  p.progress = draw_progress;
  p.progress_user_data = &bar;
  check_status(peak_lora_merge(positional[0].c_str(), positional[1].c_str(), positional[2].c_str(), &p));
  std::fprintf(stderr, "wrote %s\n", positional[2].c_str());
  return 0;
}

int run_synth_adapter(ArgCursor& args) {
  std::string positional[2];
  int n_positional = 0;
  std::string targets;
  peak_lora_synth_params p = peak_lora_synth_default_params();
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "--rank")) {
      p.rank = static_cast<size_t>(args.integer(a, 1, 4096));
    } else if (!std::strcmp(a, "--alpha")) {
      p.alpha = static_cast<float>(args.real(a, -1e6, 1e6));
    } else if (!std::strcmp(a, "--type")) {
      const std::string t = args.value(a);
      if (t == "F32" || t == "f32") {
        p.type = PEAK_TYPE_F32;
      } else if (t == "F16" || t == "f16") {
        p.type = PEAK_TYPE_F16;
      } else if (t == "Q8_0" || t == "q8_0") {
        p.type = PEAK_TYPE_Q8_0;
      } else {
        throw UsageError("option --type: adapter matrices are F32, F16 or Q8_0, not '" + t + "'");
      }
    } else if (!std::strcmp(a, "--targets")) {
      targets = args.value(a);
    } else if (!std::strcmp(a, "--seed")) {
      p.seed = static_cast<uint64_t>(args.integer(a, 0, std::numeric_limits<long long>::max()));
    } else if (a[0] == '-' && a[1] != '\0') {
      throw UsageError(std::string("unknown option '") + a + "' (see peak lora --help)");
    } else if (n_positional < 2) {
      positional[n_positional++] = a;
    } else {
      throw UsageError(std::string("unexpected argument '") + a + "'");
    }
  }
  if (n_positional != 2) throw UsageError("synth needs BASE.gguf OUTPUT.gguf (see peak lora --help)");
  refuse_inputs(positional[1], {{positional[0], "the base model"}});
  p.targets = targets.empty() ? nullptr : targets.c_str();
  check_status(peak_lora_synth(positional[0].c_str(), positional[1].c_str(), &p));
  std::fprintf(stderr, "wrote %s (rank %zu)\n", positional[1].c_str(), p.rank);
  return 0;
}

}  // namespace

int run_lora(int argc, char** argv) {
  ArgCursor args(argc, argv);
  if (args.done()) throw UsageError("needs merge or synth (see peak lora --help)");
  const std::string action = args.next();
  if (action == "-h" || action == "--help") {
    print_help();
    return 0;
  }
  if (action == "merge") return run_merge(args);
  if (action == "synth") return run_synth_adapter(args);
  throw UsageError("unknown action '" + action + "': merge or synth (see peak lora --help)");
}
