// chat: a minimal chat loop in C++ over peak's C API, with RAII handles.
// usage: chat_cpp MODEL.gguf   (one user message per line on stdin)
#include <peak/peak.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct ModelDeleter { void operator()(peak_model* m) const { peak_model_free(m); } };
struct ContextDeleter { void operator()(peak_context* c) const { peak_context_free(c); } };
struct SamplerDeleter { void operator()(peak_sampler* s) const { peak_sampler_free(s); } };

void check(peak_status status) {
  if (status != PEAK_OK) throw std::runtime_error(peak_last_error());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.gguf\n";
    return 2;
  }
  try {
    peak_model* raw_model = nullptr;
    check(peak_model_load(argv[1], nullptr, &raw_model));
    std::unique_ptr<peak_model, ModelDeleter> model(raw_model);
    peak_context* raw_ctx = nullptr;
    check(peak_context_create(model.get(), nullptr, &raw_ctx));
    std::unique_ptr<peak_context, ContextDeleter> ctx(raw_ctx);
    peak_sampler* raw_sampler = nullptr;
    check(peak_sampler_create(model.get(), nullptr, &raw_sampler));
    std::unique_ptr<peak_sampler, SamplerDeleter> sampler(raw_sampler);

    std::string line;
    bool first_turn = true;
    while (std::cout << "> " << std::flush && std::getline(std::cin, line)) {
      // Each turn formats only the new user message; earlier turns stay in the KV cache.
      const peak_chat_message message{"user", line.c_str()};
      size_t length = 0;
      peak_status s = peak_chat_apply_template(model.get(), nullptr, &message, 1, 1, nullptr, 0, &length);
      if (s != PEAK_ERR_BUFFER_TOO_SMALL) check(s);
      std::vector<char> prompt(length + 1);  // the text and its NUL
      check(peak_chat_apply_template(model.get(), nullptr, &message, 1, 1, prompt.data(), prompt.size(), &length));

      peak_generate_params gp = peak_generate_default_params();
      gp.add_special = first_turn ? 1 : 0;
      gp.on_text = [](const char* text, size_t n, void*) {
        std::cout.write(text, static_cast<std::streamsize>(n)).flush();
        return 1;
      };
      check(peak_generate(ctx.get(), sampler.get(), prompt.data(), length, &gp, nullptr));
      std::cout << "\n";
      first_turn = false;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
