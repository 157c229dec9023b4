#include "image_cache.h"

#include <iterator>

#include "chat_slot.h"

namespace peak_server {

uint64_t fnv1a(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

ImageCache::ImageCache(const peak_projector* projector, size_t n_threads, size_t max_bytes) : max_bytes_(max_bytes) {
  peak_image_encoder_params params = peak_image_encoder_default_params();
  params.n_threads = n_threads;
  peak_image_encoder* encoder = nullptr;
  check(peak_image_encoder_create(projector, &params, &encoder));
  encoder_.reset(encoder);
}

size_t ImageCache::size_of(const EncodedImage& image) { return image.bytes.size() + image.rows.size() * sizeof(float); }

size_t ImageCache::held_bytes() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return held_bytes_;
}

ImageCache::Entry ImageCache::find(uint64_t hash, const std::string& bytes) {
  const auto [first, last] = by_hash_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if ((*it->second)->bytes != bytes) continue;
    lru_.splice(lru_.begin(), lru_, it->second);
    return *it->second;
  }
  return nullptr;
}

std::shared_ptr<const EncodedImage> ImageCache::get(const std::string& bytes, const std::string& field, bool* cached) {
  const uint64_t hash = fnv1a(bytes);
  *cached = true;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (Entry hit = find(hash, bytes)) return hit;
  }
  std::lock_guard<std::mutex> encoding(encode_mutex_);
  {
    // Another request may have encoded it while this one waited.
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (Entry hit = find(hash, bytes)) return hit;
  }
  *cached = false;
  peak_image* decoded = nullptr;
  if (peak_image_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &decoded) != PEAK_OK) {
    throw RequestError("'" + field + "': " + peak_last_error(), field);
  }
  const std::unique_ptr<peak_image, void (*)(peak_image*)> image(decoded, peak_image_free);
  auto encoded = std::make_shared<EncodedImage>();
  encoded->hash = hash;
  encoded->bytes = bytes;
  check(peak_image_get_size(image.get(), &encoded->width, &encoded->height, nullptr));
  size_t n_floats = 0;
  const peak_status asked = peak_image_encode(encoder_.get(), image.get(), nullptr, 0, &n_floats);
  if (asked != PEAK_ERR_BUFFER_TOO_SMALL) check(asked);
  encoded->rows.resize(n_floats);
  check(peak_image_encode(encoder_.get(), image.get(), encoded->rows.data(), encoded->rows.size(), &n_floats));

  const size_t size = size_of(*encoded);
  if (size > max_bytes_) return encoded;
  std::lock_guard<std::mutex> lock(cache_mutex_);
  while (held_bytes_ + size > max_bytes_) {
    const Entry& oldest = lru_.back();
    const auto [first, last] = by_hash_.equal_range(oldest->hash);
    for (auto it = first; it != last; ++it) {
      if (it->second == std::prev(lru_.end())) {
        by_hash_.erase(it);
        break;
      }
    }
    held_bytes_ -= size_of(*oldest);
    lru_.pop_back();
  }
  lru_.push_front(encoded);
  by_hash_.emplace(hash, lru_.begin());
  held_bytes_ += size;
  return encoded;
}

}  // namespace peak_server
