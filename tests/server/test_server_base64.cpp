// Base64 (tools/server/base64.h) against RFC 4648's own test vectors and
// Python's base64 module, and the strict decoder's refusals.
#include <gtest/gtest.h>

#include <string>

#include "base64.h"
#include "openai_response.h"

namespace {

using peak_server::base64_decode;
using peak_server::base64_decoded_size;
using peak_server::base64_encode;

// RFC 4648 section 10.
const std::pair<const char*, const char*> kRfcVectors[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

// Python 3: base64.b64encode(bytes(range(256))).decode(): every character of the alphabet.
const char kAllBytesBase64[] =
    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVF"
    "VWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmq"
    "q6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w"
    "==";

std::string all_bytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  return bytes;
}

std::string decoded(const std::string& text) {
  std::string bytes, error;
  EXPECT_TRUE(base64_decode(text, &bytes, &error)) << text << ": " << error;
  return bytes;
}

std::string decode_error(const std::string& text) {
  std::string bytes, error;
  EXPECT_FALSE(base64_decode(text, &bytes, &error)) << "accepted: " << text;
  return error;
}

TEST(ServerBase64, RfcVectorsEncodeAndDecode) {
  for (const auto& [bytes, text] : kRfcVectors) {
    EXPECT_EQ(base64_encode(bytes), text);
    EXPECT_EQ(decoded(text), bytes);
    EXPECT_EQ(base64_decoded_size(text), std::string(bytes).size()) << text;
  }
  EXPECT_EQ(base64_encode(all_bytes()), kAllBytesBase64);
  EXPECT_EQ(decoded(kAllBytesBase64), all_bytes());
}

TEST(ServerBase64, RoundTripsEveryLengthAndLeftOutPaddingReadsTheSame) {
  std::string bytes;
  for (size_t n = 0; n < 300; ++n) {
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size(), (n + 2) / 3 * 4);
    EXPECT_EQ(decoded(text), bytes) << n;
    std::string unpadded = text;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    EXPECT_EQ(decoded(unpadded), bytes) << n;
    EXPECT_EQ(base64_decoded_size(unpadded), n);
    bytes.push_back(static_cast<char>(n * 37 + 11));
  }
}

TEST(ServerBase64, TheDecoderRefusesWhatIsNotStrictBase64) {
  EXPECT_EQ(decode_error("Zm9v%mFy"),
            "the character '%' at offset 4 is not base64 (A-Z, a-z, 0-9, '+' and '/', then '=' padding at the end)");
  EXPECT_EQ(decode_error("Zm9v\nYmFy"),
            "the character byte 0x0A at offset 4 is not base64 (A-Z, a-z, 0-9, '+' and '/', then '=' padding at the "
            "end)");
  EXPECT_EQ(decode_error("Zm9 v").substr(0, 36), "the character ' ' at offset 3 is not");
  EXPECT_EQ(decode_error("-_-_").substr(0, 36), "the character '-' at offset 0 is not");  // base64url's
  EXPECT_EQ(decode_error("Zg==Zm8="), "'=' at offset 2 is padding before the end of the data");
  EXPECT_EQ(decode_error("Zm9vY"),
            "5 characters of data leave one over after whole 4-character groups, which is no byte: the data is cut "
            "short or has one character too many");
  EXPECT_EQ(decode_error("Zg="),
            "the padding at offset 2 (1 '=') does not complete the last 4-character group, which has 2 characters of "
            "data");
  EXPECT_EQ(decode_error("Zg==="),
            "the padding at offset 2 (3 '=') does not complete the last 4-character group, which has 2 characters of "
            "data");
  EXPECT_EQ(decode_error("Zm9v="),
            "the padding at offset 4 (1 '=') does not complete the last 4-character group, which has 0 characters of "
            "data");
  EXPECT_EQ(decode_error("="),
            "the padding at offset 0 (1 '=') does not complete the last 4-character group, which has 0 characters of "
            "data");
  // "Zh==" and "Zm9=" leave bits set after the last byte: lenient decoders
  // (Python's b64decode) read them as "f" and "fo".
  EXPECT_EQ(decode_error("Zh=="),
            "the last character 'h' at offset 1 sets bits past the last byte (not canonical base64, RFC 4648 section "
            "3.5)");
  EXPECT_EQ(decode_error("Zm9="),
            "the last character '9' at offset 2 sets bits past the last byte (not canonical base64, RFC 4648 section "
            "3.5)");
}

// OpenAI's embeddings in base64: little-endian float32. Python 3:
// base64.b64encode(struct.pack('<2f', 1.0, -2.5)).
TEST(ServerBase64, FloatsAreLittleEndianFloat32) {
  const float floats[] = {1.0f, -2.5f};
  EXPECT_EQ(peak_server::base64_floats(floats, 2), "AACAPwAAIMA=");
  EXPECT_EQ(peak_server::base64_floats(floats, 0), "");
}

}  // namespace
