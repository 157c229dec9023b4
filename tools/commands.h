// Sub-commands of the `peak` tool. Each returns the process exit status (0
// success, 1 a runtime failure such as a bad file, 2 a usage error) or throws:
// the dispatcher in main.cpp turns a UsageError into status 2 and any other
// exception into status 1, each with one line on stderr.
#pragma once

int run_inspect(int argc, char** argv);
int run_run(int argc, char** argv);
int run_chat(int argc, char** argv);
int run_quantize(int argc, char** argv);
int run_synth(int argc, char** argv);
int run_lora(int argc, char** argv);
int run_perplexity(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_embed(int argc, char** argv);
int run_rerank(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_chat_bench(int argc, char** argv);  // peak bench --chat (argv[0] is "bench")
int run_embed_bench(int argc, char** argv);  // peak bench --embed (argv[0] is "bench")
int run_image_bench(int argc, char** argv);  // peak bench --mmproj (argv[0] is "bench")
int run_serve(int argc, char** argv);
int run_grammar(int argc, char** argv);  // peak grammar check
