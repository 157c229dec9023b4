// The chat page `peak serve` answers GET / with: one HTML file (server/web/index.html)
// with its script and style inline, compiled into the binary, so that it works
// with no network access and no files beside the executable.
#pragma once

#include <string_view>

namespace peak_server {

std::string_view web_page_html();

}  // namespace peak_server
