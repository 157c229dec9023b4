// OpenAI's `stop` strings over streamed text: text is passed on as it comes,
// except an end that could be the start of a stop string, which is held back
// until the next piece tells; at a stop string the text before it is passed on
// and generation ends (the stop string itself is never sent).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace peak_server {

class StopFilter {
 public:
  explicit StopFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds `text`; appends what may be sent now to *out. true once a stop
  // string was found (then *out ends before it, and nothing more may be fed).
  bool feed(std::string_view text, std::string* out);
  // The end of the text: what was held back is sent after all.
  void flush(std::string* out);

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // held back: a possible start of a stop string
};

}  // namespace peak_server
