// libFuzzer target for session files. A custom mutator applies libFuzzer's own
// mutations to the payload of a file and then writes a new payload size and
// checksum, so inputs get past the checksum to the checks of what the file says.
// Every input must be refused with std::runtime_error, leaving the session as it
// was, or accepted, after which the cells match the segments, positions run 0,
// 1, ..., the messages read back and a turn runs. Anything else (a crash, a sanitizer report, another
// exception) is a bug. At exit it prints how many files were tried, refused and
// accepted.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../chat/stories_session.h"
#include "../chat/session_file_edit.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using peak::chat::ChatSession;

struct Counts {
  long tried = 0, refused = 0, accepted = 0;
  ~Counts() {
    std::fprintf(stderr, "fuzz_session: %ld session files tried, %ld refused, %ld accepted (all checked valid)\n",
                 tried, refused, accepted);
  }
};
Counts g_counts;

ChatSession& session() {
  static const auto model = peak::model::Model::load(peak::chat::testing::kStoriesPath);
  static ChatSession s(*model, peak::chat::testing::small_stories_settings());
  return s;
}

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_session: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int) {
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
  ChatSession& s = session();
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
