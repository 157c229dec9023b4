// Saving and restoring a ChatSession. Layout (little-endian):
//   "PKSS" | u32 format version | u64 payload bytes | payload | u64 FNV-1a of payload
// The payload holds a model fingerprint, the settings that shape the cache, the
// segments (Prefix tokens, Summary text and tokens, Recent messages with their
// tokens), the pending dropped text, the whole message log, how many of its
// first messages the summary covers (format 2; format 1 files lack it and it
// is worked out from the dropped text), the statistics and, optionally, the
// main KV cache's used cells. Everything is read and checked before the live
// session changes (bytes against the checksum, then what the bytes say: sizes,
// ids, roles and their order, positions, finite values), so a bad file leaves
// it as it was. Then the saved conversation is fitted to this session's
// settings (see ChatSession::restore).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "gguf/printable.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "chat/chat_session.h"

namespace peak::chat {

using kernels::GgmlType;

namespace {

constexpr uint32_t kFormatVersion = 2;
constexpr uint32_t kOldestFormatVersion = 1;
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

// What identifies the model a session was made with, field by field.
constexpr const char* kFingerprintFields[] = {"architecture", "parameters", "vocabulary size", "layers",
                                              "weight bytes"};

std::string fingerprint(const model::Model& m) {
  const model::HParams& hp = m.hparams();
  return std::string(model::arch_name(hp.arch)) + "/" + std::to_string(m.n_params()) + "/" +
         std::to_string(hp.n_vocab) + "/" + std::to_string(hp.n_layer) + "/" + std::to_string(m.weight_bytes());
}

std::vector<std::string> split_fingerprint(const std::string& f) {
  std::vector<std::string> fields(1);
  for (const char c : f) {
    if (c == '/') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// Names the first field of the model fingerprints that differs, with both values.
std::string model_difference(const std::string& saved, const std::string& mine) {
  const std::vector<std::string> a = split_fingerprint(saved), b = split_fingerprint(mine);
  if (a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) {
        return std::string(kFingerprintFields[i]) + " " + gguf::printable(a[i]) + ", this session's model's " + b[i];
      }
    }
  }
  return "fingerprint '" + gguf::printable(saved) + "', this session's model's '" + mine + "'";
}

const char* mode_name(MemoryMode mode) {
  switch (mode) {
    case MemoryMode::Ssskv: return "ssskv";
    case MemoryMode::Window: return "window";
    case MemoryMode::None: return "none";
  }
  return "?";
}

// Why a session of mode `to` cannot continue one saved in mode `from`, or ""
// when it can: ssskv's Summary has no place in the other modes' caches, and
// mode none promises every message in context, which a window session has not
// kept.
std::string mode_conflict(MemoryMode from, MemoryMode to) {
  if (from == to || to == MemoryMode::Ssskv) return "";
  if (from == MemoryMode::Ssskv) return std::string("a session of mode ") + mode_name(to) + " keeps no summary";
  if (from == MemoryMode::Window && to == MemoryMode::None) {
    return "mode none keeps every message in context, and a window session has dropped some";
  }
  return "";
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

// Cells [first, first + count) of a KV snapshot of `n` cells (layer by layer,
// K then V, each cell-major), as a snapshot of their own.
std::vector<uint8_t> snapshot_slice(const std::vector<uint8_t>& bytes, int64_t n, int64_t first, int64_t count,
                                    const runtime::KvCache& kv) {
  const size_t k = kv.cell_bytes_k(), v = kv.cell_bytes_v();
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(count) * (k + v) * kv.layers().size());
  const uint8_t* layer = bytes.data();
  for (size_t l = 0; l < kv.layers().size(); ++l) {
    for (const size_t row : {k, v}) {
      const uint8_t* from = layer + static_cast<size_t>(first) * row;
      out.insert(out.end(), from, from + static_cast<size_t>(count) * row);
      layer += static_cast<size_t>(n) * row;
    }
  }
  return out;
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
    w.put<uint64_t>(s.summarized_messages_);
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
  // Reads and checks a file; throws SessionMismatch for another model or a
  // mode this session cannot continue, std::runtime_error naming anything else wrong.
  static Staged read(const ChatSession& s, const std::string& path);
  // Fits what a file holds to this session's settings (see ChatSession::restore),
  // still without changing the session.
  static void fit(const ChatSession& s, Staged& f, const std::string& path);
  // Renders Recent's messages again in this session's template.
  static void render_again(const ChatSession& s, Staged& f);
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

// Everything a file holds, read and checked before the live session changes,
// then fitted to it.
struct SessionFile::Staged {
  // The settings it was saved with.
  MemoryMode mode = MemoryMode::Ssskv;
  int64_t recent_max = 0, summary_max = 0, headroom = 0;
  std::string template_name;
  std::vector<int32_t> prefix;

  std::string summary_text;
  std::vector<int32_t> summary_tokens;
  std::deque<ChatSession::Message> recent;
  std::string dropped;
  std::vector<ChatSession::LoggedMessage> log;
  size_t summarized_messages = 0;
  SessionStats stats;
  bool has_kv = false;
  bool kv_types_match = false;
  std::vector<int32_t> positions;
  std::vector<uint8_t> kv_bytes;

  // Set by fit(): whether the saved cells are what the session needs, and how
  // many of Recent's first cells to leave out.
  bool use_kv = false;
  int64_t dropped_cells = 0;
};

SessionFile::Staged SessionFile::read(const ChatSession& s, const std::string& path) {
  io::MapOptions read_all;
  read_all.use_mmap = false;
  const auto file = io::MappedFile::open(path, read_all);
  const uint8_t* p = file->data();
  const size_t n = file->size();
  auto bad = [&](const std::string& why) { return std::runtime_error("session file '" + path + "': " + why); };
  auto mismatch = [&](const std::string& why) { return SessionMismatch("session file '" + path + "': " + why); };
  if (n < 24 || std::memcmp(p, kMagic, 4) != 0) throw bad("not a peak session file");
  uint32_t version;
  uint64_t payload_size;
  std::memcpy(&version, p + 4, 4);
  std::memcpy(&payload_size, p + 8, 8);
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    throw bad("format version " + std::to_string(version) + " is not supported (" +
              std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion) + ")");
  }
  if (payload_size != n - 24) throw bad("truncated or padded (" + std::to_string(n) + " bytes)");
  uint64_t checksum;
  std::memcpy(&checksum, p + 16 + payload_size, 8);
  if (checksum != fnv1a(p + 16, static_cast<size_t>(payload_size))) throw bad("checksum mismatch (corrupted)");

  Reader r(p + 16, static_cast<size_t>(payload_size));
  const std::string saved_model = r.str();
  if (saved_model != fingerprint(s.model_)) {
    throw mismatch("it was saved with another model: " + model_difference(saved_model, fingerprint(s.model_)));
  }
  Staged f;
  const uint32_t mode = r.get<uint32_t>();
  if (mode > static_cast<uint32_t>(MemoryMode::None)) {
    throw bad("its memory mode is " + std::to_string(mode) + " (0 ssskv, 1 window or 2 none)");
  }
  f.mode = static_cast<MemoryMode>(mode);
  const std::string conflict = mode_conflict(f.mode, s.settings_.mode);
  if (!conflict.empty()) {
    throw mismatch(std::string("memory mode: it was saved in mode ") + mode_name(f.mode) + ", this session's is " +
                   mode_name(s.settings_.mode) + " (" + conflict + ")");
  }
  f.recent_max = r.get<int64_t>();
  f.summary_max = r.get<int64_t>();
  f.headroom = r.get<int64_t>();
  for (const int64_t size : {f.recent_max, f.summary_max, f.headroom}) {
    if (size < 0 || size > INT32_MAX) throw bad("its sizes (recent_max, summary_max, headroom) are out of range");
  }
  r.str();  // the system prompt: the Prefix tokens below show what it renders to
  f.template_name = r.str();
  f.prefix = r.tokens();
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
  const uint64_t summarized = version >= 2 ? r.get<uint64_t>() : 0;
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
    f.kv_types_match = type_k == kv.type_k() && type_v == kv.type_v();
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
  if (!valid_ids(f.prefix)) throw bad("its prefix holds token ids outside the vocabulary");
  if (!valid_ids(f.summary_tokens)) throw bad("its summary holds token ids outside the vocabulary");
  if (f.mode != MemoryMode::Ssskv && (!f.summary_text.empty() || !f.summary_tokens.empty())) {
    throw bad("it holds a summary, which memory mode " + std::string(mode_name(f.mode)) + " never writes");
  }
  if (static_cast<int64_t>(s.model_.tokenizer().encode(f.summary_text, false, false).size()) > f.summary_max) {
    throw bad("its summary is longer than summary_max (" + std::to_string(f.summary_max) + " tokens)");
  }
  const bool same_rendering = f.template_name == s.settings_.template_name && f.prefix == s.prefix_;
  if (same_rendering && (!f.summary_tokens.empty() || !f.summary_text.empty())) {
    // The segment as the session writes it for the summary_max it had.
    if (f.summary_tokens != s.encoder_->summary_cells(f.summary_text, f.summary_max)) {
      throw bad("its summary tokens are not its summary text");
    }
  }
  int64_t recent_cells = 0;
  for (const ChatSession::Message& m : f.recent) {
    if (!known_role(m.role)) throw bad("a recent message has the role '" + gguf::printable(m.role) + "' (user or assistant)");
    if (!valid_ids(m.tokens)) throw bad("a recent message holds token ids outside the vocabulary");
    recent_cells += static_cast<int64_t>(m.tokens.size());
  }
  if (recent_cells > f.recent_max + f.headroom) throw bad("its recent messages exceed recent_max + headroom");
  int64_t answers = 0;
  for (size_t i = 0; i < f.log.size(); ++i) {
    const std::string& role = f.log[i].role;
    if (!known_role(role)) throw bad("a logged message has the role '" + gguf::printable(role) + "' (user or assistant)");
    if (role != (i % 2 == 0 ? "user" : "assistant")) {
      throw bad("its messages do not alternate from a user's (message " + std::to_string(i) + " is the " + role + "'s)");
    }
    answers += role == "assistant" ? 1 : 0;
  }
  if (f.recent.size() > f.log.size()) throw bad("it holds more recent messages than messages");
  if (f.log.size() % 2 == 1 && f.recent.empty()) {
    throw bad("its last message, a user's still without an answer, is not among its recent messages");
  }
  const size_t first_recent = f.log.size() - f.recent.size();
  for (size_t i = 0; i < f.recent.size(); ++i) {
    const ChatSession::LoggedMessage& logged = f.log[first_recent + i];
    if (f.recent[i].role != logged.role || f.recent[i].text != logged.content) {
      throw bad("its recent messages are not the last of its messages");
    }
  }
  if (version >= 2) {
    if (summarized > first_recent || (f.mode != MemoryMode::Ssskv && summarized > 0)) {
      throw bad("it says " + std::to_string(summarized) + " messages are summarized, of " +
                std::to_string(first_recent) + " dropped" + (f.mode != MemoryMode::Ssskv ? " and no summary" : ""));
    }
    f.summarized_messages = static_cast<size_t>(summarized);
  } else if (f.mode == MemoryMode::Ssskv && st.summaries > 0) {
    // Format 1: the dropped messages not in the summary are the last ones,
    // whose lines end the dropped text.
    size_t pending = 0, end = f.dropped.size();
    while (pending < first_recent) {
      const ChatSession::LoggedMessage& m = f.log[first_recent - 1 - pending];
      const std::string line = ChatSession::dropped_message_line(m.role, m.content);
      if (line.size() > end || f.dropped.compare(end - line.size(), line.size(), line) != 0) break;
      end -= line.size();
      ++pending;
    }
    f.summarized_messages = first_recent - pending;
  }
  const bool turns_agree = version >= 2 ? st.turns == answers : static_cast<uint64_t>(st.turns) * 2 == f.log.size();
  if (st.dropped_since_summary < 0 || st.dropped_total < st.dropped_since_summary || st.summaries < 0 ||
      st.turns < 0 || !turns_agree) {
    throw bad("its statistics are negative or disagree with its messages");
  }
  for (const double seconds : {st.summary_seconds, st.rebuild_seconds, st.window_shift_seconds}) {
    if (!(std::isfinite(seconds) && seconds >= 0)) throw bad("its timings are negative or not finite");
  }
  const int64_t cells = static_cast<int64_t>(f.prefix.size() + f.summary_tokens.size()) + recent_cells;
  if (f.has_kv) {
    if (static_cast<int64_t>(f.positions.size()) != cells) throw bad("its KV cache does not match its segments");
    for (size_t i = 0; i < f.positions.size(); ++i) {
      if (f.positions[i] != static_cast<int32_t>(i)) {
        throw bad("KV cell " + std::to_string(i) + " is at position " + std::to_string(f.positions[i]) +
                  " (the cells hold positions 0, 1, ...)");
      }
    }
  }
  if (f.has_kv && f.kv_types_match) {
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

void SessionFile::render_again(const ChatSession& s, Staged& f) {
  // A user message's cells as a turn leaves them: its segment as far as it
  // agrees with the turn's render in history; its answer's the rest.
  const size_t first_recent = f.log.size() - f.recent.size();
  for (size_t i = 0; i < f.recent.size(); ++i) {
    const size_t at = first_recent + i;
    const bool user = f.log[at].role == "user";
    if (user && at + 1 == f.log.size()) {
      f.recent[i].tokens = s.encoder_->user_segment(f.log[at].content);
      continue;
    }
    const std::string& user_text = f.log[user ? at : at - 1].content;
    const std::vector<int32_t> pair = s.encoder_->history_tokens(user_text, f.log[user ? at + 1 : at].content);
    const std::vector<int32_t> segment = s.encoder_->user_segment(user_text);
    size_t user_part = 0;
    while (user_part < segment.size() && user_part < pair.size() && segment[user_part] == pair[user_part]) ++user_part;
    const auto split = pair.begin() + static_cast<std::ptrdiff_t>(user_part);
    f.recent[i].tokens = user ? std::vector<int32_t>(pair.begin(), split) : std::vector<int32_t>(split, pair.end());
  }
}

void SessionFile::fit(const ChatSession& s, Staged& f, const std::string& path) {
  const SessionSettings& settings = s.settings_;
  // Another system prompt, template or thinking setting: the Prefix differs,
  // and so may every message's render.
  const bool same_rendering = f.template_name == settings.template_name && f.prefix == s.prefix_;
  if (!same_rendering) render_again(s, f);

  // The summary, cut at a sentence end when this summary_max leaves it less
  // room, as the segment this session writes for it.
  std::vector<int32_t> summary_tokens;
  if (!f.summary_tokens.empty() || !f.summary_text.empty()) {
    if (static_cast<int64_t>(s.encoder_->summary_segment(f.summary_text).size()) > settings.summary_max) {
      f.summary_text = s.summarizer_->clip(f.summary_text);
    }
    summary_tokens = s.encoder_->summary_cells(f.summary_text, settings.summary_max);
  }
  const bool summary_kept = summary_tokens == f.summary_tokens;
  f.summary_tokens = std::move(summary_tokens);

  // Recent within recent_max + headroom, as after a turn: its oldest messages
  // leave as a turn drops them, and a last message larger than that alone
  // loses its start.
  const int64_t bound = settings.recent_max + settings.headroom;
  int64_t cells = 0;
  for (const ChatSession::Message& m : f.recent) cells += static_cast<int64_t>(m.tokens.size());
  if (cells > bound && settings.mode == MemoryMode::None) {
    throw SessionMismatch("session file '" + path + "': recent_max: its conversation holds " + std::to_string(cells) +
                          " tokens in context, more than this session's recent_max + headroom (" +
                          std::to_string(settings.recent_max) + " + " + std::to_string(settings.headroom) +
                          ") hold, and mode none never drops a message (it was saved with recent_max " +
                          std::to_string(f.recent_max) + ")");
  }
  while (cells > bound && f.recent.size() > 1) {
    const ChatSession::Message& m = f.recent.front();
    const auto n = static_cast<int64_t>(m.tokens.size());
    f.dropped += ChatSession::dropped_message_line(m.role, m.text);
    f.stats.dropped_since_summary += n;
    f.stats.dropped_total += n;
    f.dropped_cells += n;
    cells -= n;
    f.recent.pop_front();
  }
  if (cells > bound) {
    ChatSession::Message& m = f.recent.front();
    const int64_t cut = cells - bound;
    f.dropped += ChatSession::cut_message_line(m.role, m.text);
    f.stats.dropped_since_summary += cut;
    f.stats.dropped_total += cut;
    f.dropped_cells += cut;
    m.tokens.erase(m.tokens.begin(), m.tokens.begin() + cut);
  }
  f.use_kv = f.has_kv && f.kv_types_match && same_rendering && summary_kept;
}

void ChatSession::restore(const std::string& path) {
  SessionFile::Staged f = SessionFile::read(*this, path);
  SessionFile::fit(*this, f, path);
  // The file has passed every check and fits: from here on nothing refuses it.
  cancel_summary();
  last_turn_.reset();
  summary_text_ = std::move(f.summary_text);
  summary_tokens_ = std::move(f.summary_tokens);
  recent_ = std::move(f.recent);
  for (Message& m : recent_) m.serial = next_serial_++;
  dropped_text_ = std::move(f.dropped);
  log_ = std::move(f.log);
  summarized_messages_ = f.summarized_messages;
  job_messages_ = 0;
  stats_ = f.stats;
  try {
    if (f.use_kv) {
      runtime::KvCache& kv = ctx_->kv();
      const int64_t segments = first_recent_cell();
      const auto saved = static_cast<int64_t>(f.positions.size());
      if (f.dropped_cells == 0) {
        kv.restore(f.kv_bytes, f.positions);
      } else {
        // As a turn drops messages: their cells leave, the rest moves down.
        const int64_t kept = saved - segments - f.dropped_cells;
        kv.restore(snapshot_slice(f.kv_bytes, saved, 0, segments, kv),
                   std::vector<int32_t>(f.positions.begin(), f.positions.begin() + segments));
        kv.put_back(segments, snapshot_slice(f.kv_bytes, saved, segments + f.dropped_cells, kept, kv),
                    std::vector<int32_t>(f.positions.end() - kept, f.positions.end()));
        ctx_->shift_positions(segments, kept, -static_cast<int32_t>(f.dropped_cells));
      }
    } else {
      prefill_all();
    }
  } catch (...) {
    // The model failed on the saved conversation (not the file): a session
    // with no conversation rather than one whose cells disagree with it.
    reset();
    throw;
  }
  // The penalty window sees the recent conversation again.
  sampler_.reset();
  for (const Message& m : recent_) {
    for (int32_t t : m.tokens) sampler_.accept(t);
  }
  if (settings_.mode == MemoryMode::Ssskv) maybe_start_summary();
}

}  // namespace peak::chat
