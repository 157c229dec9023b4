/* The version macros of peak.h against the library: a program built with this
   header must be talking to the library built with it. */
#include <stdio.h>

#include "capi_test.h"
#include "peak/peak.h"

int main(void) {
  char composed[64];
  snprintf(composed, sizeof composed, "%d.%d.%d", PEAK_VERSION_MAJOR, PEAK_VERSION_MINOR, PEAK_VERSION_PATCH);
  CHECK(strcmp(composed, PEAK_VERSION_STRING) == 0);
  CHECK(strcmp(peak_version(), PEAK_VERSION_STRING) == 0);
  /* The numbers are plain integer constants, usable in #if. */
#if PEAK_VERSION_MAJOR < 0 || PEAK_VERSION_MINOR < 0 || PEAK_VERSION_PATCH < 0
  CHECK(!"negative version numbers");
#endif
  return capi_test_summary("capi_version_test");
}
