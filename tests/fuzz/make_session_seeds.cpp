// Writes the seed corpus of fuzz_session: real sessions on stories260K saved
// after a few turns and after enough turns for a summary, with and without the
// KV cache.
#include <cstdio>
#include <exception>
#include <string>

#include "../chat/stories_session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_session_seeds OUT_DIR\n");
    return 2;
  }
  using namespace peak::chat;
  try {
    const auto model = peak::model::Model::load(testing::kStoriesPath);
    ChatSession session(*model, testing::small_stories_settings());
    const char* lines[] = {"Once upon a time there was a dog named Max.", "Max liked to run in the sun.",
                           "One day Max found a big red ball."};
    peak::runtime::GenerateOptions o;
    o.max_tokens = 10;
    for (int turn = 0; turn < 12; ++turn) {
      session.chat(lines[turn % 3], o);
      if (turn == 1 || turn == 11) {
        for (const bool kv : {true, false}) {
          session.save(std::string(argv[1]) + "/turn" + std::to_string(turn + 1) + (kv ? "_kv" : "") + ".pkss", kv);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_session_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
