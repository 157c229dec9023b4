// peak quantize IN OUT TYPE: writes a quantized copy of an F32/F16/BF16 model.
#include <cstdio>
#include <cstring>
#include <string>

#include <sys/stat.h>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "progress_bar.h"

namespace {

void print_help() {
  std::printf(
      "usage: peak quantize INPUT.gguf OUTPUT.gguf TYPE [--pure] [-t N]\n"
      "  TYPE: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K_S, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K,\n"
      "        IQ4_NL, IQ4_XS, F16, BF16, F32. Norms and other 1-D tensors stay F32; the mixed\n"
      "        presets give some tensors more bits, as llama-quantize does (the output matrix\n"
      "        Q6_K; attn_v and ffn_down of some layers Q6_K for _M).\n"
      "  --pure       every matrix in TYPE (any ggml type name, e.g. Q4_K)\n"
      "  -t N         threads (default: all hardware threads)\n");
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

int run_quantize(int argc, char** argv) {
  std::string positional[3];
  int n_positional = 0;
  peak_quantize_params qp = peak_quantize_default_params();
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      print_help();
      return 0;
    } else if (!std::strcmp(a, "--pure")) {
      qp.pure = 1;
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      qp.n_threads = static_cast<size_t>(args.integer(a, 1, 256));
    } else if (a[0] == '-' && a[1] != '\0') {
      throw UsageError(std::string("unknown option '") + a + "' (see peak quantize --help)");
    } else if (n_positional < 3) {
      positional[n_positional++] = a;
    } else {
      throw UsageError(std::string("unexpected argument '") + a + "'");
    }
  }
  if (n_positional != 3) throw UsageError("needs INPUT.gguf OUTPUT.gguf TYPE (see peak quantize --help)");
  ProgressBar bar{"quantizing"};
  qp.type = positional[2].c_str();
  qp.progress = draw_progress;
  qp.progress_user_data = &bar;
  check_status(peak_quantize(positional[0].c_str(), positional[1].c_str(), &qp));
  std::fprintf(stderr, "wrote %s: %.1f MiB (input %.1f MiB)\n", positional[1].c_str(),
               static_cast<double>(file_size(positional[1])) / 1048576.0,
               static_cast<double>(file_size(positional[0])) / 1048576.0);
  return 0;
}
