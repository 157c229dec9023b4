// Writes the seed corpus of fuzz_session: real sessions on stories260K saved
// after a few turns and after enough turns for a summary, with and without the
// KV cache; a window session; a conversation ending with a user message
// appended without an answer; and the format 1 file of tests/data.
#include <cstdio>
#include <exception>
#include <string>

#include "../chat/session_file_edit.h"
#include "../chat/stories_session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_session_seeds OUT_DIR\n");
    return 2;
  }
  using namespace peak::chat;
  const std::string dir = argv[1];
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
          session.save(dir + "/turn" + std::to_string(turn + 1) + (kv ? "_kv" : "") + ".pkss", kv);
        }
      }
    }
    session.append("user", "And then the rain came.");
    session.save(dir + "/unanswered_kv.pkss", true);

    ChatSession window(*model, testing::small_stories_settings(MemoryMode::Window));
    testing::chat_story_turns(window, 10, 10);
    window.save(dir + "/window_kv.pkss", true);

    // Format 4: a conversation with a picture still in Recent.
    SessionSettings with_pictures = testing::small_stories_settings();
    with_pictures.images = testing::kStoriesImageProjector;
    ChatSession pictures(*model, with_pictures);
    const std::vector<float> rows = testing::picture_rows(6, model->hparams().n_embd, 0.5f);
    pictures.attach_image(rows.data(), 6);
    pictures.chat(lines[0], o);
    for (const bool kv : {true, false}) pictures.save(dir + "/picture" + (kv ? "_kv" : "") + ".pkss", kv);

    // Format 5: a picture SmolVLM's projector cut into 1 x 2 tiles and the overview.
    with_pictures.images = peak::model::Arch::Idefics3Vision;
    ChatSession tiles(*model, with_pictures);
    tiles.attach_image(rows.data(), 6, 1, 2);
    tiles.chat(lines[0], o);
    for (const bool kv : {true, false}) tiles.save(dir + "/tiles" + (kv ? "_kv" : "") + ".pkss", kv);

    // Format 6: a picture of Qwen2.5-VL's projector, its tokens 2 rows of 3.
    with_pictures.images = peak::model::Arch::Qwen25Vision;
    ChatSession placed(*model, with_pictures);
    placed.attach_image(rows.data(), 6, 0, 0, 3);
    placed.chat(lines[0], o);
    for (const bool kv : {true, false}) placed.save(dir + "/placed" + (kv ? "_kv" : "") + ".pkss", kv);

    testing::write_bytes(dir + "/format1_kv.pkss", testing::read_bytes(PEAK_SESSION_FORMAT1));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_session_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
