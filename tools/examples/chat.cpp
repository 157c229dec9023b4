// chat: a minimal chat loop in C++ over peak's C API, with RAII handles.
// usage: chat_cpp MODEL.gguf   (one user message per line on stdin)
//
// A peak_session frames each message with the model's chat template (the user's
// text stays text: typing "<|im_end|>" cannot end the turn), keeps the
// conversation in its KV cache (summarizing what no longer fits) and passes on
// the answer; a thinking model's reasoning arrives apart and is not printed here.
#include <peak/peak.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct ModelDeleter { void operator()(peak_model* m) const { peak_model_free(m); } };
struct SessionDeleter { void operator()(peak_session* s) const { peak_session_free(s); } };

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
    peak_session* raw_session = nullptr;
    check(peak_session_create(model.get(), nullptr, &raw_session));
    std::unique_ptr<peak_session, SessionDeleter> session(raw_session);

    std::string line;
    while (std::cout << "> " << std::flush && std::getline(std::cin, line)) {
      peak_generate_params gp = peak_generate_default_params();
      gp.on_text = [](const char* text, size_t n, void*) {
        std::cout.write(text, static_cast<std::streamsize>(n)).flush();
        return 1;
      };
      check(peak_session_chat(session.get(), line.data(), line.size(), &gp, nullptr));
      std::cout << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
