#include "progress_bar.h"

#include <cstdio>

#include <unistd.h>

int draw_progress(float fraction, void* user_data) {
  auto* bar = static_cast<ProgressBar*>(user_data);
  const int percent = static_cast<int>(fraction * 100.0f + 0.5f);
  if (percent == bar->last_percent || !::isatty(STDERR_FILENO)) return 1;
  bar->last_percent = percent;
  constexpr int kWidth = 40;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [", bar->label);
  for (int i = 0; i < kWidth; ++i) std::fputc(i < filled ? '#' : '.', stderr);
  std::fprintf(stderr, "] %3d%%%s", percent, percent == 100 ? "\n" : "");
  std::fflush(stderr);
  return 1;
}
