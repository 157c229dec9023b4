// A progress bar on stderr for long writes (quantize, synth): redrawn in place
// on a terminal, silent otherwise. Usable as a peak_progress_fn.
#pragma once

struct ProgressBar {
  const char* label;
  int last_percent = -1;
};

// peak_progress_fn: `user_data` is a ProgressBar*. Never cancels.
int draw_progress(float fraction, void* user_data);
