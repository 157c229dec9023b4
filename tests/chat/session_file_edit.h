// Test helper: a session file (the layout of src/chat/session_file.cpp, format 1
// or 2) read into its fields, changed, and written back in its format with its
// payload size and checksum recomputed, so that a test or a fuzzer reaches the
// checks behind the checksum.
//   "PKSS" | u32 version | u64 payload bytes | payload | u64 FNV-1a of payload
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace peak::chat::testing {

inline uint64_t session_fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Frames a payload as a file of format `version` (2, the current one: the
// message log is followed by the count of summarized messages; 1 lacks it).
inline std::vector<uint8_t> frame_session_payload(const std::vector<uint8_t>& payload, uint32_t version = 2) {
  std::vector<uint8_t> out = {'P', 'K', 'S', 'S'};
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&version), reinterpret_cast<const uint8_t*>(&version) + 4);
  const uint64_t size = payload.size();
  const uint64_t sum = session_fnv1a(payload.data(), payload.size());
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&size), reinterpret_cast<const uint8_t*>(&size) + 8);
  out.insert(out.end(), payload.begin(), payload.end());
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&sum), reinterpret_cast<const uint8_t*>(&sum) + 8);
  return out;
}

struct EditableSessionFile {
  struct Message {
    std::string role, text;
    std::vector<int32_t> tokens;
  };
  struct Logged {
    std::string role, content;
  };
  uint32_t version = 2;
  std::string fingerprint;
  uint32_t mode = 0;
  int64_t recent_max = 0, summary_max = 0, headroom = 0;
  std::string system_prompt, template_name;
  std::vector<int32_t> prefix;
  std::string summary_text;
  std::vector<int32_t> summary_tokens;
  std::vector<Message> recent;
  std::string dropped;
  std::vector<Logged> log;
  uint64_t summarized_messages = 0;  // format 2
  int64_t dropped_since_summary = 0, dropped_total = 0, summaries = 0, turns = 0;
  double summary_seconds = 0, rebuild_seconds = 0, window_shift_seconds = 0;
  uint8_t has_kv = 0;
  uint32_t type_k = 0, type_v = 0;
  std::vector<int32_t> positions;
  std::vector<uint8_t> kv;

  // Throws std::runtime_error when `file` is not a well-formed session file.
  static EditableSessionFile parse(const std::vector<uint8_t>& file) {
    if (file.size() < 24 || std::memcmp(file.data(), "PKSS", 4) != 0) throw std::runtime_error("not a session file");
    In in{file.data() + 16, file.size() - 24};
    EditableSessionFile f;
    std::memcpy(&f.version, file.data() + 4, 4);
    f.fingerprint = in.str();
    f.mode = in.get<uint32_t>();
    f.recent_max = in.get<int64_t>();
    f.summary_max = in.get<int64_t>();
    f.headroom = in.get<int64_t>();
    f.system_prompt = in.str();
    f.template_name = in.str();
    f.prefix = in.ints();
    f.summary_text = in.str();
    f.summary_tokens = in.ints();
    for (uint64_t i = 0, n = in.get<uint64_t>(); i < n; ++i) {
      Message m;
      m.role = in.str();
      m.text = in.str();
      m.tokens = in.ints();
      f.recent.push_back(m);
    }
    f.dropped = in.str();
    for (uint64_t i = 0, n = in.get<uint64_t>(); i < n; ++i) {
      Logged m;
      m.role = in.str();
      m.content = in.str();
      f.log.push_back(m);
    }
    if (f.version >= 2) f.summarized_messages = in.get<uint64_t>();
    f.dropped_since_summary = in.get<int64_t>();
    f.dropped_total = in.get<int64_t>();
    f.summaries = in.get<int64_t>();
    f.turns = in.get<int64_t>();
    f.summary_seconds = in.get<double>();
    f.rebuild_seconds = in.get<double>();
    f.window_shift_seconds = in.get<double>();
    f.has_kv = in.get<uint8_t>();
    if (f.has_kv) {
      f.type_k = in.get<uint32_t>();
      f.type_v = in.get<uint32_t>();
      f.positions = in.ints();
      const std::string blob = in.str();
      f.kv.assign(blob.begin(), blob.end());
    }
    if (in.left != 0) throw std::runtime_error("bytes after the payload");
    return f;
  }

  std::vector<uint8_t> bytes() const {
    Out out;
    out.str(fingerprint);
    out.put(mode);
    out.put(recent_max);
    out.put(summary_max);
    out.put(headroom);
    out.str(system_prompt);
    out.str(template_name);
    out.ints(prefix);
    out.str(summary_text);
    out.ints(summary_tokens);
    out.put<uint64_t>(recent.size());
    for (const Message& m : recent) {
      out.str(m.role);
      out.str(m.text);
      out.ints(m.tokens);
    }
    out.str(dropped);
    out.put<uint64_t>(log.size());
    for (const Logged& m : log) {
      out.str(m.role);
      out.str(m.content);
    }
    if (version >= 2) out.put(summarized_messages);
    for (const int64_t v : {dropped_since_summary, dropped_total, summaries, turns}) out.put(v);
    for (const double v : {summary_seconds, rebuild_seconds, window_shift_seconds}) out.put(v);
    out.put(has_kv);
    if (has_kv) {
      out.put(type_k);
      out.put(type_v);
      out.ints(positions);
      out.str(std::string(kv.begin(), kv.end()));
    }
    return frame_session_payload(out.bytes, version);
  }

 private:
  struct In {
    const uint8_t* p;
    size_t left;
    template <typename T>
    T get() {
      if (left < sizeof(T)) throw std::runtime_error("payload ends early");
      T v;
      std::memcpy(&v, p, sizeof v);
      p += sizeof v;
      left -= sizeof v;
      return v;
    }
    std::string str() {
      const uint64_t n = get<uint64_t>();
      if (n > left) throw std::runtime_error("payload ends early");
      std::string s(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
      p += n;
      left -= static_cast<size_t>(n);
      return s;
    }
    std::vector<int32_t> ints() {
      const uint64_t n = get<uint64_t>();
      if (n > left / 4) throw std::runtime_error("payload ends early");
      std::vector<int32_t> v(static_cast<size_t>(n));
      for (int32_t& x : v) x = get<int32_t>();
      return v;
    }
  };
  struct Out {
    std::vector<uint8_t> bytes;
    template <typename T>
    void put(T v) {
      const auto* b = reinterpret_cast<const uint8_t*>(&v);
      bytes.insert(bytes.end(), b, b + sizeof v);
    }
    void str(const std::string& s) {
      put<uint64_t>(s.size());
      bytes.insert(bytes.end(), s.begin(), s.end());
    }
    void ints(const std::vector<int32_t>& v) {
      put<uint64_t>(v.size());
      for (const int32_t x : v) put(x);
    }
  };
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The format version a session file's header gives (0 for a file too short).
inline uint32_t saved_format_version(const std::string& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  uint32_t version = 0;
  if (bytes.size() >= 8) std::memcpy(&version, bytes.data() + 4, sizeof version);
  return version;
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

}  // namespace peak::chat::testing
