#include "web_page.h"

#include <cstddef>

// Defined by the source cmake/PeakEmbedFile.cmake writes from web/index.html.
extern const unsigned char peak_web_index_html[];
extern const std::size_t peak_web_index_html_size;

namespace peak_server {

std::string_view web_page_html() {
  return {reinterpret_cast<const char*>(peak_web_index_html), peak_web_index_html_size};
}

}  // namespace peak_server
