// Saving and restoring a ChatSession. Layout (little-endian):
//   "PKSS" | u32 format version | u64 payload bytes | payload | u64 FNV-1a of payload
// The payload holds a model fingerprint, the settings that shape the cache, the
// segments (Prefix tokens, Summary text and tokens, Recent messages with their
// tokens), the pending dropped text, the whole message log, the statistics and,
// optionally, the main KV cache's used cells. Everything is read and checked
// before the live session changes, so a truncated or corrupted file leaves it as
// it was.
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "chat/chat_session.h"

namespace peak::chat {
namespace {

constexpr uint32_t kFormatVersion = 1;
constexpr char kMagic[4] = {'P', 'K', 'S', 'S'};

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

class Writer {
 public:
  template <typename T>
  void put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof v);
    bytes.insert(bytes.end(), b, b + sizeof v);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void tokens(const std::vector<int32_t>& t) {
    put<uint64_t>(t.size());
    for (int32_t x : t) put(x);
  }
  void blob(const std::vector<uint8_t>& b) {
    put<uint64_t>(b.size());
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  std::vector<uint8_t> bytes;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint64_t len = get<uint64_t>();
    need(len);
    std::string s(reinterpret_cast<const char*>(p_ + at_), static_cast<size_t>(len));
    at_ += len;
    return s;
  }
  std::vector<int32_t> tokens() {
    const uint64_t n = get<uint64_t>();
    if (n > (n_ - at_) / 4) fail();
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t& x : t) x = get<int32_t>();
    return t;
  }
  std::vector<uint8_t> blob() {
    const uint64_t len = get<uint64_t>();
    need(len);
    std::vector<uint8_t> b(p_ + at_, p_ + at_ + len);
    at_ += len;
    return b;
  }
  bool done() const { return at_ == n_; }

 private:
  void need(uint64_t k) {
    if (k > n_ - at_) fail();
  }
  [[noreturn]] static void fail() { throw std::runtime_error("session file: payload ends early"); }
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
};

// What identifies the model a session was made with.
std::string fingerprint(const model::Model& m) {
  const model::HParams& hp = m.hparams();
  return std::string(model::arch_name(hp.arch)) + "/" + std::to_string(m.n_params()) + "/" +
         std::to_string(hp.n_vocab) + "/" + std::to_string(hp.n_layer) + "/" + std::to_string(m.weight_bytes());
}

}  // namespace

// Friend of ChatSession: reads and writes its private state.
struct SessionFile {
  static std::vector<uint8_t> payload(const ChatSession& s, bool include_kv) {
    Writer w;
    w.str(fingerprint(s.model_));
    w.put<uint32_t>(static_cast<uint32_t>(s.settings_.mode));
    w.put<int64_t>(s.settings_.recent_max);
    w.put<int64_t>(s.settings_.summary_max);
    w.put<int64_t>(s.settings_.headroom);
    w.str(s.settings_.system_prompt);
    w.str(s.settings_.template_name);
    w.tokens(s.prefix_);
    w.str(s.summary_text_);
    w.tokens(s.summary_tokens_);
    w.put<uint64_t>(s.recent_.size());
    for (const ChatSession::Message& m : s.recent_) {
      w.str(m.role);
      w.str(m.text);
      w.tokens(m.tokens);
    }
    w.str(s.dropped_text_);
    w.put<uint64_t>(s.log_.size());
    for (const auto& m : s.log_) {
      w.str(m.role);
      w.str(m.content);
    }
    const SessionStats& st = s.stats_;
    w.put(st.dropped_since_summary);
    w.put(st.dropped_total);
    w.put(st.summaries);
    w.put(st.turns);
    w.put(st.summary_seconds);
    w.put(st.rebuild_seconds);
    w.put(st.window_shift_seconds);
    w.put<uint8_t>(include_kv ? 1 : 0);
    if (include_kv) {
      const runtime::KvCache& kv = s.ctx_->kv();
      w.put<uint32_t>(static_cast<uint32_t>(kv.type_k()));
      w.put<uint32_t>(static_cast<uint32_t>(kv.type_v()));
      w.tokens(kv.positions());
      w.blob(kv.snapshot());
    }
    return w.bytes;
  }
};

void ChatSession::save(const std::string& path, bool include_kv) {
  // A running summary belongs to the state: let it finish, then put it in place.
  apply_pending_summary(/*wait=*/true);
  const std::vector<uint8_t> payload = SessionFile::payload(*this, include_kv);
  Writer header;
  header.bytes.insert(header.bytes.end(), kMagic, kMagic + 4);
  header.put<uint32_t>(kFormatVersion);
  header.put<uint64_t>(payload.size());
  Writer trailer;
  trailer.put<uint64_t>(fnv1a(payload.data(), payload.size()));

  io::AtomicFile file(path);  // removes its temporary file if a write throws
  file.write(header.bytes.data(), header.bytes.size());
  file.write(payload.data(), payload.size());
  file.write(trailer.bytes.data(), trailer.bytes.size());
  file.commit();
}

void ChatSession::restore(const std::string& path) {
  io::MapOptions read_all;
  read_all.use_mmap = false;
  const auto file = io::MappedFile::open(path, read_all);
  const uint8_t* p = file->data();
  const size_t n = file->size();
  auto bad = [&](const std::string& why) { return std::runtime_error("session file '" + path + "': " + why); };
  if (n < 24 || std::memcmp(p, kMagic, 4) != 0) throw bad("not a peak session file");
  uint32_t version;
  uint64_t payload_size;
  std::memcpy(&version, p + 4, 4);
  std::memcpy(&payload_size, p + 8, 8);
  if (version != kFormatVersion) throw bad("format version " + std::to_string(version) + " is not supported");
  if (payload_size != n - 24) throw bad("truncated or padded (" + std::to_string(n) + " bytes)");
  uint64_t checksum;
  std::memcpy(&checksum, p + 16 + payload_size, 8);
  if (checksum != fnv1a(p + 16, static_cast<size_t>(payload_size))) throw bad("checksum mismatch (corrupted)");

  // Parse everything into locals first.
  Reader r(p + 16, static_cast<size_t>(payload_size));
  if (r.str() != fingerprint(model_)) throw bad("it was saved with another model");
  const auto mode = static_cast<MemoryMode>(r.get<uint32_t>());
  const auto recent_max = r.get<int64_t>();
  const auto summary_max = r.get<int64_t>();
  const auto headroom = r.get<int64_t>();
  const std::string system_prompt = r.str();
  const std::string template_name = r.str();
  if (mode != settings_.mode || recent_max != settings_.recent_max || summary_max != settings_.summary_max ||
      headroom != settings_.headroom || system_prompt != settings_.system_prompt ||
      template_name != settings_.template_name) {
    throw bad("it was saved with other session settings (mode, sizes, system prompt or template)");
  }
  std::vector<int32_t> prefix = r.tokens();
  std::string summary_text = r.str();
  std::vector<int32_t> summary_tokens = r.tokens();
  std::deque<Message> recent;
  for (uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    Message m;
    m.role = r.str();
    m.text = r.str();
    m.tokens = r.tokens();
    recent.push_back(std::move(m));
  }
  std::string dropped = r.str();
  std::vector<LoggedMessage> log;
  for (uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    LoggedMessage m;
    m.role = r.str();
    m.content = r.str();
    log.push_back(std::move(m));
  }
  SessionStats stats = stats_;
  stats.dropped_since_summary = r.get<int64_t>();
  stats.dropped_total = r.get<int64_t>();
  stats.summaries = r.get<int64_t>();
  stats.turns = r.get<int64_t>();
  stats.summary_seconds = r.get<double>();
  stats.rebuild_seconds = r.get<double>();
  stats.window_shift_seconds = r.get<double>();
  const bool has_kv = r.get<uint8_t>() != 0;
  std::vector<int32_t> positions;
  std::vector<uint8_t> kv_bytes;
  if (has_kv) {
    const auto type_k = static_cast<GgmlType>(r.get<uint32_t>());
    const auto type_v = static_cast<GgmlType>(r.get<uint32_t>());
    if (type_k != ctx_->kv().type_k() || type_v != ctx_->kv().type_v()) throw bad("its KV cache types differ");
    positions = r.tokens();
    kv_bytes = r.blob();
  }
  if (!r.done()) throw bad("unexpected bytes after the payload");
  if (prefix != prefix_) throw bad("its prefix differs from this session's");
  int64_t cells = static_cast<int64_t>(prefix.size() + summary_tokens.size());
  for (const Message& m : recent) cells += static_cast<int64_t>(m.tokens.size());
  const int32_t n_vocab = static_cast<int32_t>(model_.hparams().n_vocab);
  auto valid_ids = [n_vocab](const std::vector<int32_t>& t) {
    for (int32_t x : t) {
      if (x < 0 || x >= n_vocab) return false;
    }
    return true;
  };
  bool ids_ok = valid_ids(summary_tokens);
  for (const Message& m : recent) ids_ok = ids_ok && valid_ids(m.tokens);
  if (!ids_ok) throw bad("it holds token ids outside the vocabulary");
  if (cells > ctx_->n_ctx()) throw bad("its segments do not fit this session's context");
  if (has_kv && static_cast<int64_t>(positions.size()) != cells) throw bad("its KV cache does not match its segments");

  // Apply: the KV first (its restore checks sizes and throws before changing anything).
  if (summarizer_) summarizer_->cancel();
  if (has_kv) {
    ctx_->kv().restore(kv_bytes, positions);
  }
  summary_text_ = std::move(summary_text);
  summary_tokens_ = std::move(summary_tokens);
  recent_ = std::move(recent);
  dropped_text_ = std::move(dropped);
  log_ = std::move(log);
  stats_ = stats;
  if (!has_kv) prefill_all();
  // The penalty window sees the recent conversation again.
  sampler_.reset();
  for (const Message& m : recent_) {
    for (int32_t t : m.tokens) sampler_.accept(t);
  }
}

}  // namespace peak::chat
