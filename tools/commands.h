// Sub-commands of the `peak` tool. Each returns the process exit status:
// 0 success, 1 a runtime failure (bad file ...), 2 a usage error.
#pragma once

int run_inspect(int argc, char** argv);
int run_run(int argc, char** argv);
int run_chat(int argc, char** argv);
int run_quantize(int argc, char** argv);
int run_synth(int argc, char** argv);
int run_perplexity(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_chat_bench(int argc, char** argv);  // peak bench --chat
