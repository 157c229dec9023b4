#include "stop_filter.h"

#include <algorithm>

namespace peak_server {

bool StopFilter::feed(std::string_view text, std::string* out) {
  pending_.append(text);
  // The earliest stop string wins.
  size_t stop_at = std::string::npos;
  for (const std::string& s : stops_) stop_at = std::min(stop_at, pending_.find(s));
  if (stop_at != std::string::npos) {
    out->append(pending_, 0, stop_at);
    pending_.clear();
    return true;
  }
  // Hold back the longest end of the text that begins some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n) {
      if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  out->append(pending_, 0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return false;
}

void StopFilter::flush(std::string* out) {
  out->append(pending_);
  pending_.clear();
}

}  // namespace peak_server
