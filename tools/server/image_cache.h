// The pictures of chat requests as the language model reads them: each
// decoded (peak_image_decode) and encoded (peak_image_encode) by the server's
// one image encoder, and kept. A front-end resends the whole conversation,
// its pictures with it, every turn: a picture is encoded when first seen and
// taken from here afterwards.
//
// The key is a picture's file bytes: their FNV-1a (64 bits) and length find
// an entry, and a hit compares the bytes themselves, so that two files of one
// hash are two pictures. The entries are bounded in bytes (rows and file
// bytes), the least recently used dropped first; one larger than the bound
// is encoded for its request and not kept.
//
// Locking. encode_mutex_ makes the encoder (used by one thread at a time)
// serve one request after another; decoding runs under it too, so that only
// one decoded picture (up to 64 Mi pixels) is in memory at a time. Encoding is
// not on the path of any token: a request encodes its pictures before it
// takes a slot. cache_mutex_ guards the entries and is held for lookups and
// insertions only, never while encoding; it is taken inside encode_mutex_,
// never the other way round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "peak/peak.h"

namespace peak_server {

struct EncodedImage {
  uint64_t hash = 0;        // FNV-1a of the file's bytes
  std::string bytes;        // the file, compared on a hit
  std::vector<float> rows;  // its image tokens' embeddings (peak_image_encode), every frame's
  uint32_t width = 0;       // the picture's size, which gives its frames (peak_session_attach_picture)
  uint32_t height = 0;
};

// FNV-1a (64 bits) of a byte string.
uint64_t fnv1a(const std::string& bytes);

class ImageCache {
 public:
  // 64 MiB: some 20 pictures of Gemma 3 4B (256 rows of 2560 floats, 2.6 MB,
  // each with its file).
  static constexpr size_t kDefaultMaxBytes = size_t{64} << 20;

  // An encoder on `projector` with n_threads threads (0: every fast core);
  // throws PeakError when it cannot be created.
  ImageCache(const peak_projector* projector, size_t n_threads, size_t max_bytes = kDefaultMaxBytes);
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;

  // The picture of a PNG or JPEG file, encoded now or taken from the cache
  // (*cached says which). A file the decoder refuses is a RequestError naming
  // `field` (where the request gave it) and the decoder's reason. Any thread.
  std::shared_ptr<const EncodedImage> get(const std::string& bytes, const std::string& field, bool* cached);

  // Bytes the entries hold (rows and files).
  size_t held_bytes() const;

 private:
  using Entry = std::shared_ptr<const EncodedImage>;
  // The entry of these bytes, made the most recently used; null when none. cache_mutex_ held.
  Entry find(uint64_t hash, const std::string& bytes);
  static size_t size_of(const EncodedImage& image);

  std::unique_ptr<peak_image_encoder, void (*)(peak_image_encoder*)> encoder_{nullptr, peak_image_encoder_free};
  const size_t max_bytes_;
  std::mutex encode_mutex_;

  mutable std::mutex cache_mutex_;
  std::list<Entry> lru_;  // the most recently used first
  std::unordered_multimap<uint64_t, std::list<Entry>::iterator> by_hash_;
  size_t held_bytes_ = 0;
};

}  // namespace peak_server
