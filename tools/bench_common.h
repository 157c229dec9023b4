// What the benchmarks share: made-up text of a given token count and the
// process's memory as the kernel reports it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "peak/peak.h"

// Text of about `target` tokens: words from a fixed list picked by a seeded
// generator (`state`, advanced), grown until `model`'s tokenizer counts at
// least `target` tokens (with its special tokens when `add_special`), then a
// full stop.
std::string made_up_text(const peak_model* model, int target, bool add_special, uint32_t* state);

// A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:"); 0 when unknown.
long process_status_kib(const char* field);

// The tensor type holding most of the file's bytes ("Q4_0"), read from the
// file itself; "?" when it cannot be read.
std::string dominant_type(const std::string& path);

// The file name of a path, for result tables.
std::string model_label(const std::string& path);

// Mean and sample standard deviation (0 for one value) of `v` (not empty).
void mean_sd(const std::vector<double>& v, double* mean, double* sd);

// A comma-separated list of integers in [min, max] given to `option`
// ("-t 1,2"); throws UsageError naming the option and the bad item.
std::vector<int> parse_list(const char* option, const char* text, int min, int max);
