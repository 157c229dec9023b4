// Saving and restoring a ChatSession. Layout (little-endian):
//   "PKSS" | u32 format version | u64 payload bytes | payload | u64 FNV-1a of payload
// The payload holds a model fingerprint, the settings that shape the cache, the
// segments (Prefix tokens, Summary text and tokens, Recent messages with their
// tokens), the pending dropped text, the whole message log, the statistics and,
// optionally, the main KV cache's used cells. Everything is read and checked
// before the live session changes (bytes against the checksum, then what the
// bytes say: sizes, ids, roles, positions, finite values), so a bad file leaves
// it as it was.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"
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

// Whether every value in `n` bytes of KV rows of `type` is finite: the floats of
// F32 and F16 rows, the F16 scale at the start of each Q8_0 / Q4_0 block (their
// quants are integers).
bool kv_values_finite(GgmlType type, const uint8_t* p, size_t n) {
  if (type == GgmlType::F32) {
    for (size_t at = 0; at + 4 <= n; at += 4) {
      float x;
      std::memcpy(&x, p + at, 4);
      if (!std::isfinite(x)) return false;
    }
    return true;
  }
  const size_t step = core::type_block_bytes(type);
  for (size_t at = 0; at + 2 <= n; at += step) {
    uint16_t h;
    std::memcpy(&h, p + at, 2);
    if ((h & 0x7c00) == 0x7c00) return false;  // all exponent bits set: inf or NaN
  }
  return true;
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

  struct Staged;
  // Reads and checks a file; throws std::runtime_error naming what is wrong.
  static Staged read(const ChatSession& s, const std::string& path);
};

void ChatSession::save(const std::string& path, bool include_kv) {
  // A running summary (and its rebuild) belongs to the state: let it finish,
  // then put it in place (swapping a rebuilt cache in).
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

// Everything a file holds, read and checked before the live session changes.
struct SessionFile::Staged {
  std::string summary_text;
  std::vector<int32_t> summary_tokens;
  std::deque<ChatSession::Message> recent;
  std::string dropped;
  std::vector<ChatSession::LoggedMessage> log;
  SessionStats stats;
  bool has_kv = false;
  std::vector<int32_t> positions;
  std::vector<uint8_t> kv_bytes;
};

SessionFile::Staged SessionFile::read(const ChatSession& s, const std::string& path) {
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

  const SessionSettings& settings = s.settings_;
  Reader r(p + 16, static_cast<size_t>(payload_size));
  if (r.str() != fingerprint(s.model_)) throw bad("it was saved with another model");
  const auto mode = static_cast<MemoryMode>(r.get<uint32_t>());
  const auto recent_max = r.get<int64_t>();
  const auto summary_max = r.get<int64_t>();
  const auto headroom = r.get<int64_t>();
  const std::string system_prompt = r.str();
  const std::string template_name = r.str();
  if (mode != settings.mode || recent_max != settings.recent_max || summary_max != settings.summary_max ||
      headroom != settings.headroom || system_prompt != settings.system_prompt ||
      template_name != settings.template_name) {
    throw bad("it was saved with other session settings (mode, sizes, system prompt or template)");
  }
  Staged f;
  if (r.tokens() != s.prefix_) throw bad("its prefix differs from this session's");
  f.summary_text = r.str();
  f.summary_tokens = r.tokens();
  for (uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    ChatSession::Message m;
    m.role = r.str();
    m.text = r.str();
    m.tokens = r.tokens();
    f.recent.push_back(std::move(m));
  }
  f.dropped = r.str();
  for (uint64_t i = 0, count = r.get<uint64_t>(); i < count; ++i) {
    ChatSession::LoggedMessage m;
    m.role = r.str();
    m.content = r.str();
    f.log.push_back(std::move(m));
  }
  f.stats = s.stats_;
  SessionStats& st = f.stats;
  st.dropped_since_summary = r.get<int64_t>();
  st.dropped_total = r.get<int64_t>();
  st.summaries = r.get<int64_t>();
  st.turns = r.get<int64_t>();
  st.summary_seconds = r.get<double>();
  st.rebuild_seconds = r.get<double>();
  st.window_shift_seconds = r.get<double>();
  const uint8_t has_kv = r.get<uint8_t>();
  if (has_kv > 1) throw bad("its KV flag is " + std::to_string(has_kv) + ", not 0 or 1");
  f.has_kv = has_kv == 1;
  const runtime::KvCache& kv = s.ctx_->kv();
  if (f.has_kv) {
    const auto type_k = static_cast<GgmlType>(r.get<uint32_t>());
    const auto type_v = static_cast<GgmlType>(r.get<uint32_t>());
    if (type_k != kv.type_k() || type_v != kv.type_v()) throw bad("its KV cache types differ");
    f.positions = r.tokens();
    f.kv_bytes = r.blob();
  }
  if (!r.done()) throw bad("unexpected bytes after the payload");

  // What the session itself never writes: a checksum only proves the bytes are
  // the ones written, not that whoever wrote them was this library.
  const int32_t n_vocab = static_cast<int32_t>(s.model_.hparams().n_vocab);
  auto valid_ids = [n_vocab](const std::vector<int32_t>& t) {
    return std::all_of(t.begin(), t.end(), [n_vocab](int32_t x) { return x >= 0 && x < n_vocab; });
  };
  auto known_role = [](const std::string& role) { return role == "user" || role == "assistant"; };
  if (!valid_ids(f.summary_tokens)) throw bad("its summary holds token ids outside the vocabulary");
  if (mode != MemoryMode::Ssskv && (!f.summary_text.empty() || !f.summary_tokens.empty())) {
    throw bad("it holds a summary, which memory mode " + std::string(mode == MemoryMode::Window ? "window" : "none") +
              " never writes");
  }
  if (static_cast<int64_t>(s.model_.tokenizer().encode(f.summary_text, false, false).size()) > summary_max) {
    throw bad("its summary is longer than summary_max (" + std::to_string(summary_max) + " tokens)");
  }
  if ((!f.summary_tokens.empty() || !f.summary_text.empty()) && f.summary_tokens != s.summary_cells(f.summary_text)) {
    throw bad("its summary tokens are not its summary text");
  }
  int64_t recent_cells = 0;
  for (const ChatSession::Message& m : f.recent) {
    if (!known_role(m.role)) throw bad("a recent message has the role '" + m.role + "' (user or assistant)");
    if (!valid_ids(m.tokens)) throw bad("a recent message holds token ids outside the vocabulary");
    recent_cells += static_cast<int64_t>(m.tokens.size());
  }
  if (recent_cells > recent_max + headroom) throw bad("its recent messages exceed recent_max + headroom");
  for (const ChatSession::LoggedMessage& m : f.log) {
    if (!known_role(m.role)) throw bad("a logged message has the role '" + m.role + "' (user or assistant)");
  }
  if (st.dropped_since_summary < 0 || st.dropped_total < st.dropped_since_summary || st.summaries < 0 ||
      st.turns < 0 || static_cast<uint64_t>(st.turns) * 2 != f.log.size()) {
    throw bad("its statistics are negative or disagree with its messages");
  }
  for (const double seconds : {st.summary_seconds, st.rebuild_seconds, st.window_shift_seconds}) {
    if (!(std::isfinite(seconds) && seconds >= 0)) throw bad("its timings are negative or not finite");
  }
  const int64_t cells = static_cast<int64_t>(s.prefix_.size() + f.summary_tokens.size()) + recent_cells;
  if (cells > s.ctx_->n_ctx()) throw bad("its segments do not fit this session's context");
  if (f.has_kv) {
    if (static_cast<int64_t>(f.positions.size()) != cells) throw bad("its KV cache does not match its segments");
    for (size_t i = 0; i < f.positions.size(); ++i) {
      if (f.positions[i] != static_cast<int32_t>(i)) {
        throw bad("KV cell " + std::to_string(i) + " is at position " + std::to_string(f.positions[i]) +
                  " (the cells hold positions 0, 1, ...)");
      }
    }
    const size_t per_layer_k = f.positions.size() * kv.cell_bytes_k();
    const size_t per_layer_v = f.positions.size() * kv.cell_bytes_v();
    const size_t n_layer = kv.layers().size();
    if (f.kv_bytes.size() != (per_layer_k + per_layer_v) * n_layer) {
      throw bad("its KV cache holds " + std::to_string(f.kv_bytes.size()) + " bytes for " +
                std::to_string(f.positions.size()) + " cells, not " +
                std::to_string((per_layer_k + per_layer_v) * n_layer));
    }
    const uint8_t* at = f.kv_bytes.data();
    for (size_t l = 0; l < n_layer; ++l) {
      if (!kv_values_finite(kv.type_k(), at, per_layer_k) ||
          !kv_values_finite(kv.type_v(), at + per_layer_k, per_layer_v)) {
        throw bad("its KV cache holds NaN or infinite values (layer " + std::to_string(l) + ")");
      }
      at += per_layer_k + per_layer_v;
    }
  }
  return f;
}

void ChatSession::restore(const std::string& path) {
  SessionFile::Staged f = SessionFile::read(*this, path);
  // The file has passed every check: from here on nothing refuses it.
  cancel_summary();
  if (f.has_kv) ctx_->kv().restore(f.kv_bytes, f.positions);
  summary_text_ = std::move(f.summary_text);
  summary_tokens_ = std::move(f.summary_tokens);
  recent_ = std::move(f.recent);
  for (Message& m : recent_) m.serial = next_serial_++;
  dropped_text_ = std::move(f.dropped);
  log_ = std::move(f.log);
  stats_ = f.stats;
  if (!f.has_kv) prefill_all();
  // The penalty window sees the recent conversation again.
  sampler_.reset();
  for (const Message& m : recent_) {
    for (int32_t t : m.tokens) sampler_.accept(t);
  }
}

}  // namespace peak::chat
