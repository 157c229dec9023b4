#include "chat/session_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/tensor.h"
#include "gguf/printable.h"
#include "io/atomic_file.h"
#include "io/checksum.h"
#include "io/mapped_file.h"

namespace peak::chat {

using kernels::GgmlType;

namespace {

constexpr uint32_t kFormatVersion = 6;
constexpr uint32_t kOldestFormatVersion = 1;
// Format 3 added tool calls and results, format 4 pictures, format 5 pictures
// cut into tiles, format 6 pictures whose tokens are placed by row and column
// (SessionImage::token_cols); a conversation without them is still written
// in the oldest format that holds it, which older readers take.
constexpr uint32_t kToolsFormatVersion = 3;
constexpr uint32_t kImagesFormatVersion = 4;
constexpr uint32_t kTiledImagesFormatVersion = 5;
constexpr uint32_t kPlacedImagesFormatVersion = 6;

bool holds_tools(const SessionState& s) {
  return std::any_of(s.log.begin(), s.log.end(),
                     [](const LoggedMessage& m) { return m.role == "tool" || !m.tool_calls.empty(); });
}

// The pictures of the log, each once, in the order they first appear.
ImageList log_images(const SessionState& s) {
  ImageList images;
  for (const LoggedMessage& m : s.log) add_images(images, m.images);
  return images;
}
constexpr char kMagic[4] = {'P', 'K', 'S', 'S'};
constexpr size_t kHeaderBytes = 16;  // magic, version, payload bytes
constexpr size_t kTrailerBytes = 8;  // checksum

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
  // `path` names the file in messages.
  Reader(const uint8_t* p, size_t n, const std::string& path) : p_(p), n_(n), path_(path) {}
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
  // `n` floats, their size checked against what is left before anything is allocated.
  std::vector<float> floats(uint64_t n) {
    if (n > (n_ - at_) / sizeof(float)) fail();
    std::vector<float> f(static_cast<size_t>(n));
    std::memcpy(f.data(), p_ + at_, f.size() * sizeof(float));
    at_ += f.size() * sizeof(float);
    return f;
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
  [[noreturn]] void fail() const { throw std::runtime_error("session file '" + path_ + "': payload ends early"); }
  const uint8_t* p_;
  size_t n_;
  const std::string& path_;
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

// Whether the session renders the saved messages as they were: the same
// template and Prefix.
bool renders_as_saved(const SavedSettings& saved, const RestoringSession& session) {
  return saved.template_name == session.settings.template_name && saved.prefix == session.prefix;
}

// The payload, section by section (the layout in session_file.h).
void write_settings(Writer& w, const SavedSettings& s) {
  w.put<uint32_t>(static_cast<uint32_t>(s.mode));
  w.put<int64_t>(s.recent_max);
  w.put<int64_t>(s.summary_max);
  w.put<int64_t>(s.headroom);
  w.str(s.system_prompt);
  w.str(s.template_name);
}

void write_segments(Writer& w, const std::vector<int32_t>& prefix, const SessionState& s) {
  w.tokens(prefix);
  w.str(s.summary_text);
  w.tokens(s.summary_tokens);
  w.put<uint64_t>(s.recent.size());
  for (const RecentMessage& m : s.recent) {
    w.str(m.role);
    w.str(m.text);
    w.tokens(m.tokens);
  }
}

// Format 4: id, hash, tokens, width, whether they attend both ways, the rows.
void write_images(Writer& w, const ImageList& images, uint32_t version) {
  w.put<uint64_t>(images.size());
  for (const ImagePtr& image : images) {
    w.put<uint32_t>(image->id);
    w.put<uint64_t>(image->hash);
    w.put<int64_t>(image->n_tokens);
    w.put<int64_t>(image->n_embd);
    w.put<uint8_t>(image->bidirectional ? 1 : 0);
    if (version >= kTiledImagesFormatVersion) {
      w.put<int64_t>(image->grid_rows);
      w.put<int64_t>(image->grid_cols);
    }
    if (version >= kPlacedImagesFormatVersion) w.put<int64_t>(image->token_cols);
    const auto* bytes = reinterpret_cast<const uint8_t*>(image->rows.data());
    w.bytes.insert(w.bytes.end(), bytes, bytes + image->rows.size() * sizeof(float));
  }
}

void write_tool_fields(Writer& w, const LoggedMessage& m) {
  w.put<uint64_t>(m.tool_calls.size());
  for (const ToolCall& call : m.tool_calls) {
    w.put<uint8_t>(call.id ? 1 : 0);
    w.str(call.id.value_or(""));
    w.str(call.name);
    w.str(call.arguments);
  }
  w.str(m.tool_call_id);
  w.str(m.name);
}

void write_messages(Writer& w, const SessionState& s, uint32_t version) {
  w.str(s.dropped_text);
  w.put<uint64_t>(s.log.size());
  for (const LoggedMessage& m : s.log) {
    w.str(m.role);
    w.str(m.content);
    if (version >= kToolsFormatVersion) write_tool_fields(w, m);
    if (version >= kImagesFormatVersion) {
      w.put<uint64_t>(m.images.size());
      for (const ImagePtr& image : m.images) w.put<uint32_t>(image->id);
    }
  }
  if (version >= kToolsFormatVersion) w.put<uint64_t>(s.unsent);
  w.put<uint64_t>(s.summarized_messages);
}

void write_statistics(Writer& w, const SessionStats& st) {
  w.put(st.dropped_since_summary);
  w.put(st.dropped_total);
  w.put(st.summaries);
  w.put(st.turns);
  w.put(st.summary_seconds);
  w.put(st.rebuild_seconds);
  w.put(st.window_shift_seconds);
}

void write_cells(Writer& w, const runtime::KvCache* kv) {
  w.put<uint8_t>(kv ? 1 : 0);
  if (!kv) return;
  w.put<uint32_t>(static_cast<uint32_t>(kv->type_k()));
  w.put<uint32_t>(static_cast<uint32_t>(kv->type_v()));
  w.tokens(kv->positions());
  w.blob(kv->snapshot());
}

// Reads a payload section by section, each checked with what came before it.
class PayloadReader {
 public:
  PayloadReader(const std::string& path, uint32_t version, const uint8_t* payload, size_t n,
                const RestoringSession& session)
      : path_(path), version_(version), r_(payload, n, path_), session_(session) {}

  SessionFileContents read() {
    read_model();
    read_settings();
    if (version_ >= kImagesFormatVersion) read_images();
    read_segments();
    read_messages();
    read_statistics();
    if (version_ < 2) work_out_summarized();
    read_cells();
    if (!r_.done()) throw bad("unexpected bytes after the payload");
    return std::move(f_);
  }

 private:
  std::runtime_error bad(const std::string& why) const {
    return std::runtime_error("session file '" + path_ + "': " + why);
  }
  SessionMismatch mismatch(const std::string& why) const {
    return SessionMismatch("session file '" + path_ + "': " + why);
  }
  bool valid_ids(const std::vector<int32_t>& t) const {
    const auto n_vocab = static_cast<int32_t>(session_.model.hparams().n_vocab);
    return std::all_of(t.begin(), t.end(), [n_vocab](int32_t x) { return x >= 0 && x < n_vocab; });
  }
  // Vocabulary ids, or rows of the file's pictures.
  bool valid_cells(const std::vector<int32_t>& t) const {
    const auto n_vocab = static_cast<int32_t>(session_.model.hparams().n_vocab);
    return std::all_of(t.begin(), t.end(), [&](int32_t x) {
      if (!is_image_token(x)) return x < n_vocab;
      const ImagePtr image = find_image(images_, image_of(x));
      return image && image_row(x) < image->n_tokens;
    });
  }
  bool known_role(const std::string& role) const {
    return role == "user" || role == "assistant" || (version_ >= kToolsFormatVersion && role == "tool");
  }
  std::string known_roles() const {
    return version_ >= kToolsFormatVersion ? "user, assistant or tool" : "user or assistant";
  }
  size_t first_recent() const { return f_.state.log.size() - f_.state.unsent - f_.state.recent.size(); }

  void read_model();
  void read_settings();
  void read_images();
  void read_segments();
  void read_summary();
  void read_recent();
  void read_messages();
  void read_log();
  void read_tool_fields(LoggedMessage& m);
  void read_message_images(LoggedMessage& m);
  // Format 3: user, answer; an answer's calls are followed by their results
  // (in any order) and the answer to them.
  void check_order(size_t i, const LoggedMessage& m) const;
  void check_recent_tokens() const;
  void read_summarized();
  void work_out_summarized();
  void read_statistics();
  void read_cells();
  void check_cell_bytes(const SavedCells& cells) const;

  const std::string& path_;
  uint32_t version_;
  Reader r_;
  const RestoringSession& session_;
  SessionFileContents f_;
  int64_t recent_cells_ = 0;
  int64_t answers_ = 0;  // assistant messages in the log
  ImageList images_;     // format 4: the pictures the log shows
};

void PayloadReader::read_images() {
  const uint64_t count = r_.get<uint64_t>();
  if (count > kMaxImages) throw bad("it holds " + std::to_string(count) + " pictures, more than a session can");
  if (count > 0 && !session_.settings.images) {
    throw mismatch(
        "its conversation holds pictures, and this session takes none: create it with the model's "
        "vision projector");
  }
  const int64_t n_embd = session_.model.hparams().n_embd;
  for (uint64_t i = 0; i < count; ++i) {
    const auto id = r_.get<uint32_t>();
    const auto hash = r_.get<uint64_t>();
    const auto n_tokens = r_.get<int64_t>();
    const auto rows_width = r_.get<int64_t>();
    const uint8_t bidirectional = r_.get<uint8_t>();
    const int64_t grid_rows = version_ >= kTiledImagesFormatVersion ? r_.get<int64_t>() : 0;
    const int64_t grid_cols = version_ >= kTiledImagesFormatVersion ? r_.get<int64_t>() : 0;
    const int64_t token_cols = version_ >= kPlacedImagesFormatVersion ? r_.get<int64_t>() : 0;
    const std::string which = "picture " + std::to_string(i);
    if (id >= kMaxImages || find_image(images_, id)) {
      throw bad(which + " has the id " + std::to_string(id) + ", out of range or taken");
    }
    if (n_tokens < 1 || n_tokens >= kMaxImageTokens) {
      throw bad(which + " has " + std::to_string(n_tokens) + " tokens (1 to " + std::to_string(kMaxImageTokens - 1) +
                ")");
    }
    if (rows_width != n_embd) {
      throw bad(which + " has rows of " + std::to_string(rows_width) + " floats; the model's width is " +
                std::to_string(n_embd));
    }
    if (bidirectional > 1) throw bad(which + "'s attention flag is " + std::to_string(bidirectional));
    auto image = std::make_shared<SessionImage>();
    try {
      *image =
          frame_image(*session_.settings.images, n_tokens, grid_rows, grid_cols, session_.settings.n_batch, token_cols);
    } catch (const std::invalid_argument& e) {
      throw mismatch(which + " does not suit this session's projector: " + e.what());
    }
    if (image->bidirectional != (bidirectional == 1)) {
      throw mismatch(which + "'s tokens attend " + (bidirectional ? "both ways" : "causally") +
                     "; this session's projector reads them " + (image->bidirectional ? "both ways" : "causally"));
    }
    image->id = id;
    image->hash = hash;
    image->n_embd = n_embd;
    image->rows = r_.floats(static_cast<uint64_t>(n_tokens * n_embd));
    if (!std::all_of(image->rows.begin(), image->rows.end(), [](float x) { return std::isfinite(x); })) {
      throw bad(which + " holds NaN or infinite values");
    }
    if (io::fnv1a(image->rows.data(), image->rows.size() * sizeof(float)) != image->hash) {
      throw bad(which + "'s rows do not match its hash");
    }
    images_.push_back(std::move(image));
  }
}

void PayloadReader::read_model() {
  const std::string saved = r_.str();
  const std::string mine = fingerprint(session_.model);
  if (saved != mine) throw mismatch("it was saved with another model: " + model_difference(saved, mine));
}

void PayloadReader::read_settings() {
  SavedSettings& s = f_.settings;
  const uint32_t mode = r_.get<uint32_t>();
  if (mode > static_cast<uint32_t>(MemoryMode::None)) {
    throw bad("its memory mode is " + std::to_string(mode) + " (0 ssskv, 1 window or 2 none)");
  }
  s.mode = static_cast<MemoryMode>(mode);
  const std::string conflict = mode_conflict(s.mode, session_.settings.mode);
  if (!conflict.empty()) {
    throw mismatch(std::string("memory mode: it was saved in mode ") + mode_name(s.mode) + ", this session's is " +
                   mode_name(session_.settings.mode) + " (" + conflict + ")");
  }
  s.recent_max = r_.get<int64_t>();
  s.summary_max = r_.get<int64_t>();
  s.headroom = r_.get<int64_t>();
  for (const int64_t size : {s.recent_max, s.summary_max, s.headroom}) {
    if (size < 0 || size > INT32_MAX) throw bad("its sizes (recent_max, summary_max, headroom) are out of range");
  }
  s.system_prompt = r_.str();  // the Prefix tokens show what it renders to
  s.template_name = r_.str();
}

void PayloadReader::read_segments() {
  f_.settings.prefix = r_.tokens();
  if (!valid_ids(f_.settings.prefix)) throw bad("its prefix holds token ids outside the vocabulary");
  read_summary();
  read_recent();
}

void PayloadReader::read_summary() {
  SessionState& s = f_.state;
  s.summary_text = r_.str();
  s.summary_tokens = r_.tokens();
  if (!valid_ids(s.summary_tokens)) throw bad("its summary holds token ids outside the vocabulary");
  if (s.summary_text.empty() && s.summary_tokens.empty()) return;
  const int64_t summary_max = f_.settings.summary_max;
  if (f_.settings.mode != MemoryMode::Ssskv) {
    throw bad("it holds a summary, which memory mode " + std::string(mode_name(f_.settings.mode)) + " never writes");
  }
  if (static_cast<int64_t>(session_.model.tokenizer().encode(s.summary_text, false, false).size()) > summary_max) {
    throw bad("its summary is longer than summary_max (" + std::to_string(summary_max) + " tokens)");
  }
  // The segment as the session writes it for the summary_max it had.
  if (renders_as_saved(f_.settings, session_) &&
      s.summary_tokens != session_.encoder.summary_cells(s.summary_text, summary_max)) {
    throw bad("its summary tokens are not its summary text");
  }
}

void PayloadReader::read_recent() {
  for (uint64_t i = 0, count = r_.get<uint64_t>(); i < count; ++i) {
    RecentMessage m;
    m.role = r_.str();
    m.text = r_.str();
    m.tokens = r_.tokens();
    if (!known_role(m.role)) {
      throw bad("a recent message has the role '" + gguf::printable(m.role) + "' (" + known_roles() + ")");
    }
    if (!valid_cells(m.tokens)) throw bad("a recent message holds token ids outside the vocabulary and its pictures");
    for (const int32_t t : m.tokens) {
      if (is_image_token(t) && !find_image(m.images, image_of(t))) m.images.push_back(find_image(images_, image_of(t)));
    }
    recent_cells_ += static_cast<int64_t>(m.tokens.size());
    f_.state.recent.push_back(std::move(m));
  }
  if (recent_cells_ > f_.settings.recent_max + f_.settings.headroom) {
    throw bad("its recent messages exceed recent_max + headroom");
  }
}

void PayloadReader::read_messages() {
  f_.state.dropped_text = r_.str();
  read_log();
  read_summarized();
  if (renders_as_saved(f_.settings, session_)) check_recent_tokens();
}

void PayloadReader::read_log() {
  const SessionState& s = f_.state;
  std::vector<LoggedMessage>& log = f_.state.log;
  for (uint64_t i = 0, count = r_.get<uint64_t>(); i < count; ++i) {
    LoggedMessage m;
    m.role = r_.str();
    m.content = r_.str();
    if (version_ >= kToolsFormatVersion) read_tool_fields(m);
    if (version_ >= kImagesFormatVersion) read_message_images(m);
    if (!known_role(m.role)) {
      throw bad("a logged message has the role '" + gguf::printable(m.role) + "' (" + known_roles() + ")");
    }
    if (version_ >= kToolsFormatVersion) {
      check_order(static_cast<size_t>(i), m);
    } else if (m.role != (i % 2 == 0 ? "user" : "assistant")) {
      throw bad("its messages do not alternate from a user's (message " + std::to_string(i) + " is the " + m.role +
                "'s)");
    }
    answers_ += m.role == "assistant" ? 1 : 0;
    log.push_back(std::move(m));
  }
  if (version_ >= kToolsFormatVersion) {
    const uint64_t unsent = r_.get<uint64_t>();
    size_t results = 0;
    while (results < log.size() && log[log.size() - 1 - results].role == "tool") ++results;
    if (unsent != results) {
      throw bad("it says " + std::to_string(unsent) + " tool results wait for their answer, of " +
                std::to_string(results) + " at its end");
    }
    f_.state.unsent = static_cast<size_t>(unsent);
  }
  if (s.recent.size() > log.size() - s.unsent) throw bad("it holds more recent messages than messages");
  if (!log.empty() && log.back().role == "user" && s.recent.empty()) {
    throw bad("its last message, a user's still without an answer, is not among its recent messages");
  }
  for (size_t i = 0; i < s.recent.size(); ++i) {
    const LoggedMessage& logged = log[first_recent() + i];
    if (s.recent[i].role != logged.role || s.recent[i].text != summary_text(logged)) {
      throw bad("its recent messages are not the last of its messages");
    }
  }
}

// Recent's messages hold the cells their turns left (ChatSession's
// settle_turn, append_user, append_answer): a turn's tokens, its prompt's then
// its answer's, are the turn as the template renders it in history (a user
// message still waiting for its answer: its segment, with the header that
// opens the answer). Of that render they may hold a piece only: the oldest
// message loses its start as Recent moves on, a message longer than
// recent_max keeps its end, and an answer cut by the context's end lacks its
// tail (so a message waiting for its answer holds the end of its segment). Any other tokens would have the model read
// what the log does not say. Checked with this session's encoder, whose renders are the saved ones' (renders_as_saved:
// the same template and Prefix).
void PayloadReader::check_recent_tokens() const {
  const SessionState& s = f_.state;
  const std::vector<LoggedMessage>& log = s.log;
  const size_t first = first_recent();
  const size_t end = log.size() - s.unsent;
  for (size_t at = first; at < end;) {
    size_t start = at;  // the turn's first message
    while (start > 0 && log[start - 1].role != "assistant") --start;
    size_t answer = at;
    while (answer < end && log[answer].role != "assistant") ++answer;
    const size_t next = std::min(answer + 1, end);
    std::vector<int32_t> held;
    for (size_t i = at; i < next; ++i) {
      const std::vector<int32_t>& tokens = s.recent[i - first].tokens;
      held.insert(held.end(), tokens.begin(), tokens.end());
    }
    std::vector<int32_t> rendered;
    try {
      if (answer == end) {
        rendered = session_.encoder.user_segment(log[end - 1].content, log[end - 1].images);
      } else {
        const std::vector<LoggedMessage> turn(log.begin() + static_cast<std::ptrdiff_t>(start),
                                              log.begin() + static_cast<std::ptrdiff_t>(answer + 1));
        if (log[start].role == "tool") {
          const std::vector<LoggedMessage> context(
              log.begin() + static_cast<std::ptrdiff_t>(exchange_start(log, start)),
              log.begin() + static_cast<std::ptrdiff_t>(start));
          rendered = session_.encoder.history_after(chat_messages(context), chat_messages(turn));
        } else {
          rendered = session_.encoder.history_tokens(chat_messages(turn));
        }
      }
    } catch (const std::exception& e) {
      throw bad("the chat template does not render message " + std::to_string(at) +
                " again to check its tokens: " + e.what());
    }
    // A message waiting for its answer loses only its start (a cut keeps a message's end).
    const bool agrees =
        answer == end ? held.size() <= rendered.size() && std::equal(held.rbegin(), held.rend(), rendered.rbegin())
                      : std::search(rendered.begin(), rendered.end(), held.begin(), held.end()) != rendered.end();
    if (!agrees) {
      throw bad("the tokens of its recent message " + std::to_string(at) +
                (next > at + 1 ? "-" + std::to_string(next - 1) : "") +
                " are not their text as the chat template renders it");
    }
    at = next;
  }
}

void PayloadReader::read_tool_fields(LoggedMessage& m) {
  for (uint64_t i = 0, count = r_.get<uint64_t>(); i < count; ++i) {
    ToolCall call;
    const uint8_t has_id = r_.get<uint8_t>();
    const std::string id = r_.str();
    if (has_id > 1) throw bad("a tool call's id flag is " + std::to_string(has_id) + ", not 0 or 1");
    if (has_id) call.id = id;
    call.name = r_.str();
    call.arguments = r_.str();
    m.tool_calls.push_back(std::move(call));
  }
  m.tool_call_id = r_.str();
  m.name = r_.str();
  if (!m.tool_calls.empty() && m.role != "assistant") throw bad("a " + m.role + " message holds tool calls");
  if ((!m.tool_call_id.empty() || !m.name.empty()) && m.role != "tool") {
    throw bad("a " + m.role + " message names a tool call");
  }
}

void PayloadReader::read_message_images(LoggedMessage& m) {
  const uint64_t count = r_.get<uint64_t>();
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t id = r_.get<uint32_t>();
    ImagePtr image = find_image(images_, id);
    if (!image) throw bad("a message shows the picture " + std::to_string(id) + ", which it lacks");
    m.images.push_back(std::move(image));
  }
  if (!m.images.empty() && m.role != "user") throw bad("a " + m.role + " message shows pictures");
  if (count_image_markers(m.content) != m.images.size()) {
    throw bad("a message shows " + std::to_string(m.images.size()) + " pictures at " +
              std::to_string(count_image_markers(m.content)) + " markers");
  }
}

void PayloadReader::check_order(size_t i, const LoggedMessage& m) const {
  const std::vector<LoggedMessage>& log = f_.state.log;
  const LoggedMessage* previous = i == 0 ? nullptr : &log[i - 1];
  const std::string expected = !previous || previous->role == "assistant" ? "user" : "assistant";
  size_t answer = i;
  while (answer > 0 && log[answer - 1].role == "tool") --answer;
  const LoggedMessage* calling = answer > 0 && log[answer - 1].role == "assistant" ? &log[answer - 1] : nullptr;
  const bool after_calls = calling && !calling->tool_calls.empty();
  if (m.role == "tool") {
    const bool answers_call = after_calls && std::any_of(calling->tool_calls.begin(), calling->tool_calls.end(),
                                                         [&](const ToolCall& c) { return c.id == m.tool_call_id; });
    if (!answers_call) {
      throw bad("message " + std::to_string(i) + " is the result of the call '" + gguf::printable(m.tool_call_id) +
                "', which the answer before it did not make");
    }
    return;
  }
  if (after_calls && m.role == "user") {
    throw bad("message " + std::to_string(i) + " is a user's, where the answer before it called tools");
  }
  if (m.role != expected && !(after_calls && m.role == "assistant" && previous->role == "tool")) {
    throw bad("its messages do not alternate from a user's (message " + std::to_string(i) + " is the " + m.role +
              "'s)");
  }
}

void PayloadReader::read_summarized() {
  if (version_ < 2) return;
  SessionState& s = f_.state;
  const bool ssskv = f_.settings.mode == MemoryMode::Ssskv;
  const uint64_t summarized = r_.get<uint64_t>();
  if (summarized > first_recent() || (!ssskv && summarized > 0)) {
    throw bad("it says " + std::to_string(summarized) + " messages are summarized, of " +
              std::to_string(first_recent()) + " dropped" + (ssskv ? "" : " and no summary"));
  }
  s.summarized_messages = static_cast<size_t>(summarized);
}

// Format 1 files do not say how many messages the summary covers: the dropped
// messages not in it are the last ones, whose lines end the dropped text.
void PayloadReader::work_out_summarized() {
  SessionState& s = f_.state;
  if (f_.settings.mode != MemoryMode::Ssskv || s.stats.summaries == 0) return;
  const size_t first_recent = s.log.size() - s.recent.size();
  size_t pending = 0, end = s.dropped_text.size();
  while (pending < first_recent) {
    const LoggedMessage& m = s.log[first_recent - 1 - pending];
    const std::string line = dropped_message_line(m.role, m.content);
    if (line.size() > end || s.dropped_text.compare(end - line.size(), line.size(), line) != 0) break;
    end -= line.size();
    ++pending;
  }
  s.summarized_messages = first_recent - pending;
}

void PayloadReader::read_statistics() {
  SessionStats& st = f_.state.stats;
  st = session_.stats;
  st.dropped_since_summary = r_.get<int64_t>();
  st.dropped_total = r_.get<int64_t>();
  st.summaries = r_.get<int64_t>();
  st.turns = r_.get<int64_t>();
  st.summary_seconds = r_.get<double>();
  st.rebuild_seconds = r_.get<double>();
  st.window_shift_seconds = r_.get<double>();
  const bool turns_agree =
      version_ >= 2 ? st.turns == answers_ : static_cast<uint64_t>(st.turns) * 2 == f_.state.log.size();
  if (st.dropped_since_summary < 0 || st.dropped_total < st.dropped_since_summary || st.summaries < 0 ||
      st.turns < 0 || !turns_agree) {
    throw bad("its statistics are negative or disagree with its messages");
  }
  for (const double seconds : {st.summary_seconds, st.rebuild_seconds, st.window_shift_seconds}) {
    if (!(std::isfinite(seconds) && seconds >= 0)) throw bad("its timings are negative or not finite");
  }
}

void PayloadReader::read_cells() {
  const uint8_t has_kv = r_.get<uint8_t>();
  if (has_kv > 1) throw bad("its KV flag is " + std::to_string(has_kv) + ", not 0 or 1");
  if (has_kv == 0) return;
  SavedCells cells;
  cells.type_k = static_cast<GgmlType>(r_.get<uint32_t>());
  cells.type_v = static_cast<GgmlType>(r_.get<uint32_t>());
  cells.positions = r_.tokens();
  cells.bytes = r_.blob();
  const int64_t segments = static_cast<int64_t>(f_.settings.prefix.size() + f_.state.summary_tokens.size());
  if (static_cast<int64_t>(cells.positions.size()) != segments + recent_cells_) {
    throw bad("its KV cache does not match its segments");
  }
  // The positions evaluating the cells' tokens gives (0, 1, ... but where a
  // picture's tokens share one).
  CellPositions expected =
      cell_positions(f_.state.cached_tokens(f_.settings.prefix), images_, session_.cache.keeps_places());
  for (size_t i = 0; i < cells.positions.size(); ++i) {
    if (cells.positions[i] != expected.positions[i]) {
      throw bad("KV cell " + std::to_string(i) + " is at position " + std::to_string(cells.positions[i]) +
                ", not the " + std::to_string(expected.positions[i]) + " its tokens take");
    }
  }
  cells.places = std::move(expected.places);
  check_cell_bytes(cells);
  f_.cells = std::move(cells);
}

// Cells of this session's KV types (the others are never used): their size
// and finite values.
void PayloadReader::check_cell_bytes(const SavedCells& cells) const {
  const runtime::KvCache& kv = session_.cache;
  if (cells.type_k != kv.type_k() || cells.type_v != kv.type_v()) return;
  const size_t per_layer_k = cells.positions.size() * kv.cell_bytes_k();
  const size_t per_layer_v = cells.positions.size() * kv.cell_bytes_v();
  const size_t n_layer = kv.layers().size();
  if (cells.bytes.size() != (per_layer_k + per_layer_v) * n_layer) {
    throw bad("its KV cache holds " + std::to_string(cells.bytes.size()) + " bytes for " +
              std::to_string(cells.positions.size()) + " cells, not " +
              std::to_string((per_layer_k + per_layer_v) * n_layer));
  }
  const uint8_t* at = cells.bytes.data();
  for (size_t l = 0; l < n_layer; ++l) {
    if (!kv_values_finite(kv.type_k(), at, per_layer_k) ||
        !kv_values_finite(kv.type_v(), at + per_layer_k, per_layer_v)) {
      throw bad("its KV cache holds NaN or infinite values (layer " + std::to_string(l) + ")");
    }
    at += per_layer_k + per_layer_v;
  }
}

// Renders Recent's messages again in this session's template: a user
// message's cells as a turn leaves them, its segment as far as it agrees with
// the turn's render in history; its answer's the rest.
void render_again(const TurnEncoder& encoder, SessionState& s) {
  const size_t first_recent = s.log.size() - s.recent.size();
  for (size_t i = 0; i < s.recent.size(); ++i) {
    const size_t at = first_recent + i;
    const bool user = s.log[at].role == "user";
    if (user && at + 1 == s.log.size()) {
      s.recent[i].tokens = encoder.user_segment(s.log[at].content, s.log[at].images);
      continue;
    }
    const LoggedMessage& user_message = s.log[user ? at : at - 1];
    const std::vector<int32_t> pair =
        encoder.history_tokens({chat_message(user_message), {"assistant", s.log[user ? at + 1 : at].content}});
    const std::vector<int32_t> segment = encoder.user_segment(user_message.content, user_message.images);
    size_t user_part = 0;
    while (user_part < segment.size() && user_part < pair.size() && segment[user_part] == pair[user_part]) ++user_part;
    const auto split = pair.begin() + static_cast<std::ptrdiff_t>(user_part);
    s.recent[i].tokens = user ? std::vector<int32_t>(pair.begin(), split) : std::vector<int32_t>(split, pair.end());
  }
}

// The summary, cut at a sentence end when this summary_max leaves it less
// room, as the segment this session writes for it; returns whether its cells
// stay what they were.
bool fit_summary(SessionState& s, const RestoringSession& session) {
  if (s.summary_tokens.empty() && s.summary_text.empty()) return true;
  const int64_t summary_max = session.settings.summary_max;
  if (static_cast<int64_t>(session.encoder.summary_segment(s.summary_text).size()) > summary_max) {
    s.summary_text = session.summarizer->clip(s.summary_text);
  }
  std::vector<int32_t> tokens = session.encoder.summary_cells(s.summary_text, summary_max);
  const bool kept = tokens == s.summary_tokens;
  s.summary_tokens = std::move(tokens);
  return kept;
}

}  // namespace

SavedSettings saved_settings(const SessionSettings& settings, const std::vector<int32_t>& prefix) {
  return {settings.mode,
          settings.recent_max,
          settings.summary_max,
          settings.headroom,
          settings.system_prompt,
          settings.template_name,
          prefix};
}

void write_session_file(const std::string& path, const model::Model& model, const SavedSettings& settings,
                        const SessionState& state, const runtime::KvCache* cells) {
  const io::MappedFile* model_file = model.file().mapping();
  if (model_file && model_file->is_file(path)) {
    throw std::invalid_argument("refusing to write a session file over the model in use, '" + path + "'");
  }
  Writer payload;
  payload.str(fingerprint(model));
  write_settings(payload, settings);
  const ImageList images = log_images(state);
  const bool tiled =
      std::any_of(images.begin(), images.end(), [](const ImagePtr& image) { return image->n_frames() > 1; });
  const bool placed =
      std::any_of(images.begin(), images.end(), [](const ImagePtr& image) { return image->token_cols > 0; });
  const uint32_t version = placed               ? kPlacedImagesFormatVersion
                           : tiled              ? kTiledImagesFormatVersion
                           : !images.empty()    ? kImagesFormatVersion
                           : holds_tools(state) ? kToolsFormatVersion
                                                : kToolsFormatVersion - 1;
  if (version >= kImagesFormatVersion) write_images(payload, images, version);
  write_segments(payload, settings.prefix, state);
  write_messages(payload, state, version);
  write_statistics(payload, state.stats);
  write_cells(payload, cells);
  Writer header;
  header.bytes.insert(header.bytes.end(), kMagic, kMagic + 4);
  header.put<uint32_t>(version);
  header.put<uint64_t>(payload.bytes.size());
  Writer trailer;
  trailer.put<uint64_t>(io::fnv1a(payload.bytes.data(), payload.bytes.size()));

  io::AtomicFile file(path);  // removes its temporary file if a write throws
  file.write(header.bytes.data(), header.bytes.size());
  file.write(payload.bytes.data(), payload.bytes.size());
  file.write(trailer.bytes.data(), trailer.bytes.size());
  file.commit();
}

SessionFileContents read_session_file(const std::string& path, const RestoringSession& session) {
  io::MapOptions read_all;
  read_all.use_mmap = false;
  const auto file = io::MappedFile::open(path, read_all);
  const uint8_t* p = file->data();
  const size_t n = file->size();
  auto bad = [&](const std::string& why) { return std::runtime_error("session file '" + path + "': " + why); };
  if (n < kHeaderBytes + kTrailerBytes || std::memcmp(p, kMagic, 4) != 0) throw bad("not a peak session file");
  uint32_t version;
  uint64_t payload_size;
  std::memcpy(&version, p + 4, 4);
  std::memcpy(&payload_size, p + 8, 8);
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    throw bad("format version " + std::to_string(version) + " is not supported (" +
              std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion) + ")");
  }
  if (payload_size != n - kHeaderBytes - kTrailerBytes) {
    throw bad("truncated or padded (" + std::to_string(n) + " bytes)");
  }
  uint64_t checksum;
  std::memcpy(&checksum, p + kHeaderBytes + payload_size, 8);
  if (checksum != io::fnv1a(p + kHeaderBytes, static_cast<size_t>(payload_size))) {
    throw bad("checksum mismatch (corrupted)");
  }
  return PayloadReader(path, version, p + kHeaderBytes, static_cast<size_t>(payload_size), session).read();
}

FittedSession fit_session_file(SessionFileContents file, const RestoringSession& session, const std::string& path) {
  const SessionSettings& settings = session.settings;
  FittedSession fitted;
  SessionState& s = fitted.state;
  s = std::move(file.state);
  // Another system prompt, template or thinking setting: the Prefix differs,
  // and so may every message's render.
  const bool same_rendering = renders_as_saved(file.settings, session);
  if (!same_rendering && holds_tools(s)) {
    throw SessionMismatch("session file '" + path +
                          "': its conversation holds tool calls, which are rendered again only with the template and "
                          "Prefix (tools included) it was saved with, and this session's differ");
  }
  if (!same_rendering) render_again(session.encoder, s);
  const bool summary_kept = fit_summary(s, session);

  // Recent within recent_max + headroom, as after a turn: its oldest messages
  // leave as a turn drops them, and a last message larger than that alone
  // loses its start.
  const int64_t bound = settings.recent_max + settings.headroom;
  const int64_t saved_cells = s.recent_cells();
  int64_t cells = saved_cells;
  if (cells > bound && settings.mode == MemoryMode::None) {
    throw SessionMismatch("session file '" + path + "': recent_max: its conversation holds " + std::to_string(cells) +
                          " tokens in context, more than this session's recent_max + headroom (" +
                          std::to_string(settings.recent_max) + " + " + std::to_string(settings.headroom) +
                          ") hold, and mode none never drops a message (it was saved with recent_max " +
                          std::to_string(file.settings.recent_max) + ")");
  }
  while (cells > bound && s.recent.size() > 1) {
    cells -= s.drop_front();
    // A call's results leave with it, as a turn drops them.
    while (s.recent.size() > 1 && s.recent.front().role == "tool") cells -= s.drop_front();
  }
  if (cells > bound) s.cut_front(cells - bound);
  fitted.dropped_cells = saved_cells - s.recent_cells();
  const runtime::KvCache& kv = session.cache;
  if (file.cells && file.cells->type_k == kv.type_k() && file.cells->type_v == kv.type_v() && same_rendering &&
      summary_kept) {
    fitted.cells = std::move(file.cells);
  }
  return fitted;
}

void load_saved_cells(runtime::Context& ctx, const FittedSession& fitted, int64_t segments) {
  runtime::KvCache& kv = ctx.kv();
  const SavedCells& cells = *fitted.cells;
  if (fitted.dropped_cells == 0) {
    kv.restore(cells.bytes, cells.positions, cells.places);
    return;
  }
  // As a turn drops messages: their cells leave, the rest moves down.
  const auto saved = static_cast<int64_t>(cells.positions.size());
  const int64_t kept = saved - segments - fitted.dropped_cells;
  const auto places = [&](int64_t first, int64_t n) {
    return cells.places.empty()
               ? std::vector<runtime::PicturePlace>()
               : std::vector<runtime::PicturePlace>(cells.places.begin() + first, cells.places.begin() + first + n);
  };
  kv.restore(snapshot_slice(cells.bytes, saved, 0, segments, kv),
             std::vector<int32_t>(cells.positions.begin(), cells.positions.begin() + segments), places(0, segments));
  kv.put_back(segments, snapshot_slice(cells.bytes, saved, segments + fitted.dropped_cells, kept, kv),
              std::vector<int32_t>(cells.positions.end() - kept, cells.positions.end()), places(saved - kept, kept));
  if (kept > 0) ctx.shift_positions(segments, kept, -kv.gap_before(segments));
}

}  // namespace peak::chat
