// FNV-1a (64 bits) of a byte range: the checksum of session files, and the
// identity of a picture's rows in a conversation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::io {

uint64_t fnv1a(const void* data, size_t n);

}  // namespace peak::io
