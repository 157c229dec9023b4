/* Uses two 0.1 spellings. Compiling it must warn, naming the replacement, and
   fail when PEAK_NO_DEPRECATED hides them (see CMakeLists.txt). */
#include "peak/peak.h"

peak_status use_old_spellings(peak_context* ctx);

peak_status use_old_spellings(peak_context* ctx) {
  const peak_gguf_open_params params = peak_gguf_default_params();
  (void)params;
  return peak_eval(ctx, NULL, 0);
}
