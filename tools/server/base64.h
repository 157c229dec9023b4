// Base64 as RFC 4648 section 4 defines it (the standard alphabet A-Z a-z 0-9
// + /, '=' padding), the server's one home for it: embeddings sent as base64
// (encoding_format "base64") and pictures received in data URLs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace peak_server {

// `bytes` in base64, padded with '=' to a whole number of 4-character groups.
std::string base64_encode(std::string_view bytes);

// How many bytes `text` decodes to when it is valid base64: for a bound
// checked before anything is decoded or allocated.
size_t base64_decoded_size(std::string_view text);

// The bytes of base64 `text`, read strictly: only the standard alphabet (no
// whitespace, no line breaks, no URL-safe '-' '_'), and the bits after the
// last byte zero (RFC 4648 section 3.5's canonical encoding). The trailing
// '=' may be left out (RFC 4648 section 3.2 lets a format do so, and the data
// URLs browsers read allow it), but padding that is there must complete the
// last group. False on anything else, with *error saying what and at which
// offset of `text` ("the character '%' at offset 12 is not base64 ...").
bool base64_decode(std::string_view text, std::string* bytes, std::string* error);

}  // namespace peak_server
