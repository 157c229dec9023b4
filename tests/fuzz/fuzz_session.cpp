// libFuzzer target for session files. A custom mutator applies libFuzzer's own
// mutations to the payload of a file and then writes a new payload size and
// checksum, so inputs get past the checksum to the checks of what the file says.
// One mutation in four instead edits the file's fields so that the tokens of a
// Recent message disagree with its text (a token changed or moved, tokens
// swapped between messages, a text changed in the log and in Recent alike).
// Every input must be refused with std::runtime_error, leaving the session as it
// was, or accepted, after which the cells match the segments, positions run 0,
// 1, ..., the messages read back and a turn runs; and the same file with a
// token the conversation cannot spell put into a Recent message, or with such
// a character added to the last user message's text, is refused. Anything
// else (a crash, a sanitizer report, another exception) is a bug. At exit it
// prints how many files were tried, refused and accepted.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../chat/stories_session.h"
#include "../chat/session_file_edit.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using peak::chat::ChatSession;
using peak::chat::testing::EditableSessionFile;

struct Counts {
  long tried = 0, refused = 0, accepted = 0;
  long disagreeing = 0;  // accepted files made to disagree, all refused
  ~Counts() {
    std::fprintf(stderr,
                 "fuzz_session: %ld session files tried, %ld refused, %ld accepted (all checked valid); %ld accepted "
                 "files made to disagree, all refused\n",
                 tried, refused, accepted, disagreeing);
  }
};
Counts g_counts;

const peak::model::Model& stories() {
  static const auto model = peak::model::Model::load(peak::chat::testing::kStoriesPath);
  return *model;
}

// Takes pictures, so files that hold some are read through: Gemma 3's, or
// SmolVLM's, whose pictures are cut into tiles, or Qwen2.5-VL's, whose
// pictures have a grid of tokens of their own.
peak::chat::SessionSettings fuzz_settings(peak::model::Arch projector = peak::chat::testing::kStoriesImageProjector) {
  peak::chat::SessionSettings s = peak::chat::testing::small_stories_settings();
  s.images = projector;
  return s;
}

// Files of format 5 (pictures of tiles) go to a session on SmolVLM's
// projector, of format 6 (pictures of their own grid) on Qwen2.5-VL's.
ChatSession& session(uint32_t version = 0) {
  static ChatSession gemma(stories(), fuzz_settings());
  static ChatSession smolvlm(stories(), fuzz_settings(peak::model::Arch::Idefics3Vision));
  static ChatSession qwen(stories(), fuzz_settings(peak::model::Arch::Qwen25Vision));
  return version == 5 ? smolvlm : version == 6 ? qwen : gemma;
}

// The session's Prefix: its cells before any conversation.
const std::vector<int32_t>& session_prefix() {
  static const std::vector<int32_t> prefix = [] {
    ChatSession fresh(stories(), fuzz_settings());
    return fresh.cached_tokens();
  }();
  return prefix;
}

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_session: %s\n", what.c_str());
  std::abort();
}

// Tokens and text of Recent made to disagree; false when the file has no
// Recent message to change.
bool edit_recent(EditableSessionFile& f, std::mt19937& rng) {
  if (f.recent.empty()) return false;
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  EditableSessionFile::Message& m = f.recent[pick(f.recent.size())];
  switch (pick(4)) {
    case 0:  // a token replaced
      if (m.tokens.empty()) return false;
      m.tokens[pick(m.tokens.size())] = static_cast<int32_t>(pick(static_cast<size_t>(stories().hparams().n_vocab)));
      return true;
    case 1: {  // a token moved to the next message
      const size_t i = static_cast<size_t>(&m - f.recent.data());
      if (m.tokens.empty() || i + 1 == f.recent.size()) return false;
      f.recent[i + 1].tokens.insert(f.recent[i + 1].tokens.begin(), m.tokens.back());
      m.tokens.pop_back();
      return true;
    }
    case 2:  // tokens of another message
      std::swap(m.tokens, f.recent[pick(f.recent.size())].tokens);
      return true;
    default: {  // the text, where the log and Recent say the same
      const size_t at = f.log.size() - f.recent.size() + static_cast<size_t>(&m - f.recent.data());
      if (at >= f.log.size() || f.log[at].content != m.text) return false;
      m.text = f.log[at].content = m.text.substr(0, pick(m.text.size() + 1)) + " and a cat";
      return true;
    }
  }
}

// A byte no text of the file holds, and its token: a token in no render of
// the conversation, so Recent holding it, or a user message gaining the byte,
// makes tokens and text disagree. Token -1 when there is none.
struct Unspelled {
  char byte = 0;
  int32_t token = -1;
};

Unspelled unspelled_byte(const EditableSessionFile& f) {
  for (char byte = 1; byte < 9; ++byte) {
    bool used = f.system_prompt.find(byte) != std::string::npos || f.summary_text.find(byte) != std::string::npos;
    for (const auto& m : f.log) used = used || m.content.find(byte) != std::string::npos;
    if (used) continue;
    const peak::tokenizer::Tokenizer& tok = stories().tokenizer();
    const std::vector<int32_t> ids = tok.encode(std::string(1, byte), false, false);
    if (!ids.empty() && tok.token_to_piece(ids.back(), false) == std::string(1, byte)) return {byte, ids.back()};
  }
  return {};
}

// An accepted file made to disagree in a way no cut explains is refused, and
// leaves the session as it was.
void check_disagreement_refused(const std::string& path, const std::vector<uint8_t>& file, std::mt19937& rng) {
  EditableSessionFile f;
  try {
    f = EditableSessionFile::parse(file);
  } catch (const std::runtime_error&) {
    return;  // formats 3 and 4 (tool calls, pictures): the editor reads formats 1 and 2
  }
  // A file saved with another template or Prefix has its messages rendered
  // again from their text: its tokens are not read.
  if (f.template_name != session().settings().template_name || f.prefix != session_prefix()) return;
  const Unspelled alien = unspelled_byte(f);
  if (alien.token < 0 || f.recent.empty()) return;
  ChatSession& s = session();
  const std::vector<int32_t> before = s.cached_tokens();
  auto refused = [&](const EditableSessionFile& edited, const char* what) {
    peak::chat::testing::write_bytes(path, edited.bytes());
    try {
      s.restore(path);
    } catch (const std::runtime_error&) {
      if (s.cached_tokens() != before) bug(std::string("a refused file changed the session: ") + what);
      ++g_counts.disagreeing;
      return;
    }
    bug(std::string("accepted: ") + what);
  };
  EditableSessionFile token = f;
  EditableSessionFile::Message& m = token.recent[std::uniform_int_distribution<size_t>(0, f.recent.size() - 1)(rng)];
  if (!m.tokens.empty()) {
    m.tokens[m.tokens.size() / 2] = alien.token;  // as many cells: the KV cache still fits
    refused(token, "a token no text spells in a recent message");
  }
  // The last user message after Recent's first: its text's end is in its cells.
  for (size_t i = f.recent.size(); i-- > 1;) {
    const size_t at = f.log.size() - f.recent.size() + i;
    if (f.recent[i].role != "user" || at >= f.log.size()) continue;
    EditableSessionFile text = f;
    text.recent[i].text = text.log[at].content = f.log[at].content + alien.byte;
    refused(text, "a character added to a user message's text");
    break;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 4 == 0) {
    std::mt19937 rng(seed);
    try {
      EditableSessionFile f = EditableSessionFile::parse(std::vector<uint8_t>(data, data + size));
      if (edit_recent(f, rng)) {
        const std::vector<uint8_t> edited = f.bytes();
        if (edited.size() <= max_size) {
          std::memcpy(data, edited.data(), edited.size());
          return edited.size();
        }
      }
    } catch (const std::runtime_error&) {
      // not a file the editor reads: mutate its bytes
    }
  }
  // Mutate the payload (what lies between the 16-byte header and the 8-byte
  // checksum), then frame it again in the same format version.
  if (size < 24 || max_size < 24) return LLVMFuzzerMutate(data, size, max_size);
  uint32_t version;
  std::memcpy(&version, data + 4, 4);
  std::vector<uint8_t> payload(data + 16, data + size - 8);
  payload.resize(max_size - 24);
  const size_t n = LLVMFuzzerMutate(payload.data(), size - 24, max_size - 24);
  payload.resize(n);
  const std::vector<uint8_t> file = peak::chat::testing::frame_session_payload(payload, version);
  std::memcpy(data, file.data(), file.size());
  return file.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fuzz_session_" + std::to_string(::getpid()) + ".pkss";
  peak::chat::testing::write_bytes(path, std::vector<uint8_t>(data, data + size));
  uint32_t version = 0;
  if (size >= 8) std::memcpy(&version, data + 4, 4);
  ChatSession& s = session(version);
  const std::vector<int32_t> before = s.cached_tokens();
  ++g_counts.tried;
  try {
    s.restore(path);
  } catch (const std::runtime_error&) {
    ++g_counts.refused;
    if (s.cached_tokens() != before) bug("a refused file changed the session");
    return 0;
  }
  ++g_counts.accepted;
  std::mt19937 rng(static_cast<unsigned>(size));
  check_disagreement_refused(path + ".edited", std::vector<uint8_t>(data, data + size), rng);
  const peak::runtime::KvCache& kv = s.context().kv();
  if (kv.used() != static_cast<int64_t>(s.cached_tokens().size())) bug("accepted: the cells do not match the segments");
  for (size_t i = 0; i < kv.positions().size(); ++i) {
    if (kv.positions()[i] != static_cast<int32_t>(i)) bug("accepted: positions are not 0, 1, ...");
  }
  // Every message reads back, the system prompt and then the log, those in
  // Recent in context.
  if (s.n_messages() != s.log().size() + 1) bug("accepted: the messages are not the system prompt and the log");
  for (size_t i = 0; i < s.n_messages(); ++i) {
    const peak::chat::MessageView m = s.message(i);
    const bool in_context = i == 0 || i > s.log().size() - static_cast<size_t>(s.stats().recent_messages);
    if (in_context != (m.state == peak::chat::MessageState::InContext)) bug("accepted: a message's state is wrong");
  }
  peak::runtime::GenerateOptions o;
  o.max_tokens = 2;
  if (s.awaiting_answer()) {
    s.regenerate(o);
  } else {
    s.chat("And then?", o);
  }
  s.reset();
  return 0;
}
