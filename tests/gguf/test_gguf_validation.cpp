// One test per validation rule of the GGUF reader: each file is malformed in
// exactly one way and must be refused with a message naming the problem, the
// key or tensor, and the byte offset, without allocating more than the file size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "gguf/gguf_reader.h"
#include "raw_gguf.h"

namespace peak::gguf {
namespace {

using test::RawGguf;
using ::testing::HasSubstr;

constexpr uint64_t kHeaderBytes = 24;  // magic, version, tensor count, kv count
// Fixed overhead beyond the file size: error strings and empty containers.
constexpr size_t kAllocationSlack = 4096;

// Parses `file`, expects a GgufError whose message contains every fragment,
// and checks the parse allocated at most the file size (plus slack).
void expect_refused(const RawGguf& file, const std::vector<std::string>& fragments) {
  std::string message;
  test::AllocationStats stats;
  {
    test::AllocationScope scope;
    try {
      GgufFile::parse(file.bytes.data(), file.bytes.size());
    } catch (const GgufError& e) {
      message = e.what();
    }
    stats = scope.stats();
  }
  ASSERT_FALSE(message.empty()) << "the file was accepted";
  for (const std::string& f : fragments) EXPECT_THAT(message, HasSubstr(f));
  EXPECT_LE(stats.bytes, file.size() + kAllocationSlack) << message;
}

std::string at(uint64_t offset) { return "at byte offset " + std::to_string(offset); }

// A valid one-tensor file: the baseline each tensor case changes one field of.
RawGguf one_tensor_file(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset,
                        size_t data_bytes) {
  RawGguf f;
  f.header(1, 0).tensor(name, std::move(ne), type, offset).pad().zeros(data_bytes);
  return f;
}

TEST(GgufValidation, AcceptsTheBaselineFiles) {
  RawGguf kv;
  kv.header(0, 1).kv_u32("a.b", 7);
  EXPECT_NO_THROW(GgufFile::parse(kv.bytes.data(), kv.size()));
  const RawGguf t = one_tensor_file("w", {8, 2}, 0, 0, 64);
  EXPECT_NO_THROW(GgufFile::parse(t.bytes.data(), t.size()));
}

TEST(GgufValidation, RefusesBadMagic) {
  RawGguf f;
  f.raw("GGML").u32(3).u64(0).u64(0);
  expect_refused(f, {"bad magic", at(0)});
}

TEST(GgufValidation, RefusesFilesShorterThanTheMagic) {
  RawGguf f;
  f.raw("GG");
  expect_refused(f, {"not a GGUF file"});
  expect_refused(RawGguf{}, {"not a GGUF file"});
}

TEST(GgufValidation, RefusesVersion1WithAMessageSayingSo) {
  RawGguf f;
  f.header(0, 0, 1);
  expect_refused(f, {"version 1 is not supported", at(4)});
}

TEST(GgufValidation, RefusesBigEndianFilesWithAMessageSayingSo) {
  RawGguf f;
  f.raw("GGUF").u32(0x03000000u).u64(0).u64(0);
  expect_refused(f, {"big-endian", at(4)});
}

TEST(GgufValidation, RefusesUnknownVersions) {
  RawGguf f;
  f.header(0, 0, 4);
  expect_refused(f, {"unsupported GGUF version 4"});
}

TEST(GgufValidation, AcceptsVersion2) {
  RawGguf f;
  f.header(0, 1, 2).kv_u32("a", 1);
  EXPECT_EQ(GgufFile::parse(f.bytes.data(), f.size())->version(), 2u);
}

TEST(GgufValidation, RefusesATruncatedHeader) {
  RawGguf f;
  f.raw("GGUF").u32(3).u32(0);
  expect_refused(f, {"file ends inside the tensor count", at(8)});
}

TEST(GgufValidation, RefusesAMetadataCountThatCannotFit) {
  RawGguf f;
  f.header(0, std::numeric_limits<uint64_t>::max() / 2).kv_u32("a", 1);
  expect_refused(f, {"metadata count", "cannot fit", at(16)});
}

TEST(GgufValidation, RefusesAPlausibleCountOverGarbageWithoutReservingForIt) {
  // The count fits the bytes left, but the items are garbage: the parse must
  // stop at the first bad item without having reserved for all of them.
  RawGguf f;
  f.header(0, 65536 / 14).zeros(65536);
  expect_refused(f, {"empty key", at(kHeaderBytes)});
  RawGguf t;
  t.header(65536 / 33, 0).zeros(65536);
  expect_refused(t, {"empty tensor name", "tensor #0"});
}

TEST(GgufValidation, RefusesATensorCountThatCannotFit) {
  RawGguf f;
  f.header(uint64_t{1} << 40, 0).zeros(64);
  expect_refused(f, {"tensor count", "cannot fit", at(8)});
}

TEST(GgufValidation, RefusesAStringLongerThanTheFile) {
  RawGguf f;
  f.header(0, 1).str("a").u32(8).u64(1000).raw("short");
  expect_refused(f, {"string value length 1000", "key 'a'", at(kHeaderBytes + 9 + 4)});
}

TEST(GgufValidation, RefusesAKeyLongerThanTheFile) {
  RawGguf f;
  f.header(0, 1).u64(uint64_t{1} << 62).raw("abc").zeros(32);
  expect_refused(f, {"key length", at(kHeaderBytes)});
}

TEST(GgufValidation, RefusesAnEmptyKey) {
  RawGguf f;
  f.header(0, 1).kv_u32("", 1);
  expect_refused(f, {"empty key", at(kHeaderBytes)});
}

TEST(GgufValidation, RefusesANonAsciiKey) {
  RawGguf f;
  f.header(0, 1).kv_u32("caf\xc3\xa9", 1);
  expect_refused(f, {"not printable ASCII", at(kHeaderBytes)});
  RawGguf g;
  g.header(0, 1).kv_u32(std::string("a\nb"), 1);
  expect_refused(g, {"not printable ASCII", "a\\x0ab"});
}

TEST(GgufValidation, RefusesAKeyOver65535Bytes) {
  RawGguf f;
  f.header(0, 1).kv_u32(std::string(65536, 'k'), 1);
  expect_refused(f, {"key of 65536 bytes", at(kHeaderBytes)});
  RawGguf ok;
  ok.header(0, 1).kv_u32(std::string(65535, 'k'), 1);
  EXPECT_NO_THROW(GgufFile::parse(ok.bytes.data(), ok.size()));
}

TEST(GgufValidation, RefusesDuplicateKeys) {
  RawGguf f;
  f.header(0, 2).kv_u32("general.x", 1).kv_u32("general.x", 2);
  expect_refused(f, {"duplicate key", "key 'general.x'", at(kHeaderBytes + 8 + 9 + 4 + 4)});
}

TEST(GgufValidation, RefusesUnknownValueTypes) {
  RawGguf f;
  f.header(0, 1).str("k").u32(13).u32(0);
  expect_refused(f, {"unknown value type 13", "key 'k'", at(kHeaderBytes + 9)});
}

TEST(GgufValidation, RefusesUnknownArrayElementTypes) {
  RawGguf f;
  f.header(0, 1).str("k").u32(9).u32(77).u64(1).u32(0);
  expect_refused(f, {"unknown array element type 77", "key 'k'", at(kHeaderBytes + 9 + 4)});
}

TEST(GgufValidation, RefusesAnArrayLongerThanTheFile) {
  RawGguf f;
  f.header(0, 1).str("k").u32(9).u32(6).u64(uint64_t{1} << 61).zeros(16);
  expect_refused(f, {"array length", "cannot fit", "key 'k'"});
  RawGguf s;
  s.header(0, 1).str("k").u32(9).u32(8).u64(uint64_t{1} << 40).zeros(16);
  expect_refused(s, {"array length", "cannot fit", "key 'k'"});
}

TEST(GgufValidation, RefusesArraysNestedTooDeep) {
  RawGguf f;
  f.header(0, 1).str("k").u32(9);
  for (uint32_t depth = 0; depth < kMaxArrayNesting; ++depth) f.u32(9).u64(1);
  f.u32(4).u64(0);
  expect_refused(f, {"nested more than 8 deep", "key 'k'"});
}

TEST(GgufValidation, AcceptsArraysNestedToTheLimit) {
  RawGguf f;
  f.header(0, 1).str("k").u32(9);
  for (uint32_t depth = 1; depth < kMaxArrayNesting; ++depth) f.u32(9).u64(1);
  f.u32(4).u64(1).u32(42);
  const auto file = GgufFile::parse(f.bytes.data(), f.size());
  ArrayView a = file->get("k").array();
  for (uint32_t depth = 1; depth < kMaxArrayNesting; ++depth) a = a.array(0);
  EXPECT_EQ(a.at<uint32_t>(0), 42u);
}

TEST(GgufValidation, RefusesBoolValuesOtherThan0And1) {
  RawGguf f;
  f.header(0, 1).str("flag").u32(7).put<uint8_t>(2);
  expect_refused(f, {"bool value 2", "key 'flag'", at(kHeaderBytes + 12 + 4)});
  RawGguf a;
  a.header(0, 1).str("flags").u32(9).u32(7).u64(3).put<uint8_t>(1).put<uint8_t>(0).put<uint8_t>(9);
  expect_refused(a, {"bool array element 2 is 9", "key 'flags'"});
}

TEST(GgufValidation, RefusesAnAlignmentThatIsNotAPowerOfTwo) {
  RawGguf f;
  f.header(0, 1).kv_u32("general.alignment", 48);
  expect_refused(f, {"alignment 48 is not a power of two", "general.alignment"});
  RawGguf zero;
  zero.header(0, 1).kv_u32("general.alignment", 0);
  expect_refused(zero, {"alignment 0 is not a power of two"});
}

TEST(GgufValidation, RefusesAnAlignmentOfAnotherType) {
  RawGguf f;
  f.header(0, 1).kv_string("general.alignment", "32");
  expect_refused(f, {"alignment must be uint32, not string"});
}

TEST(GgufValidation, RefusesATensorNameOver63Bytes) {
  const std::string name(64, 'n');
  expect_refused(one_tensor_file(name, {8}, 0, 0, 32), {"tensor name of 64 bytes", at(kHeaderBytes)});
  const RawGguf ok = one_tensor_file(std::string(63, 'n'), {8}, 0, 0, 32);
  EXPECT_NO_THROW(GgufFile::parse(ok.bytes.data(), ok.size()));
}

TEST(GgufValidation, RefusesAnEmptyTensorName) {
  expect_refused(one_tensor_file("", {8}, 0, 0, 32), {"empty tensor name", "tensor #0"});
}

TEST(GgufValidation, RefusesDuplicateTensorNames) {
  RawGguf f;
  f.header(2, 0).tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).pad().zeros(64);
  expect_refused(f, {"duplicate tensor name", "tensor 'w'"});
}

TEST(GgufValidation, RefusesDimensionCountsOutside1To4) {
  expect_refused(one_tensor_file("w", {}, 0, 0, 32), {"0 dimensions", "tensor 'w'"});
  expect_refused(one_tensor_file("w", {1, 1, 1, 1, 1}, 0, 0, 32), {"5 dimensions", "tensor 'w'"});
}

TEST(GgufValidation, RefusesAZeroDimension) {
  expect_refused(one_tensor_file("w", {8, 0}, 0, 0, 32), {"dimension 1 is 0", "tensor 'w'"});
}

TEST(GgufValidation, RefusesAnElementCountThatOverflows) {
  expect_refused(one_tensor_file("w", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0, 32),
                 {"element count overflows", "tensor 'w'"});
}

TEST(GgufValidation, RefusesAByteSizeThatOverflows) {
  // 2^62 F32 elements fit in the element count but need 2^64 bytes.
  expect_refused(one_tensor_file("w", {uint64_t{1} << 31, uint64_t{1} << 31}, 0, 0, 32),
                 {"byte size overflows", "tensor 'w'"});
}

TEST(GgufValidation, RefusesARowWhoseByteSizeOverflows) {
  // One row of 2^62 F32 elements: 2^64 bytes, which wraps to 0 in 64 bits
  // (found by fuzz_gguf: a division by that 0).
  expect_refused(one_tensor_file("w", {uint64_t{1} << 62}, 0, 0, 32), {"byte size overflows", "tensor 'w'"});
}

TEST(GgufValidation, RefusesRowsThatAreNotWholeBlocks) {
  expect_refused(one_tensor_file("w", {33, 2}, 2, 0, 64), {"row of 33 elements", "Q4_0", "block size 32"});
}

TEST(GgufValidation, RefusesUnknownTensorTypes) {
  expect_refused(one_tensor_file("w", {8}, 40, 0, 32), {"unknown tensor type 40", "tensor 'w'"});
  expect_refused(one_tensor_file("w", {8}, 1000000, 0, 32), {"unknown tensor type 1000000"});
}

TEST(GgufValidation, RefusesRemovedTensorTypes) {
  expect_refused(one_tensor_file("w", {32}, 4, 0, 32), {"tensor type 4 (Q4_2) was removed"});
  expect_refused(one_tensor_file("w", {32}, 5, 0, 32), {"tensor type 5 (Q4_3) was removed"});
  expect_refused(one_tensor_file("w", {32}, 31, 0, 32), {"tensor type 31 (Q4_0_4_4) was removed"});
}

TEST(GgufValidation, RefusesUnalignedDataOffsets) {
  expect_refused(one_tensor_file("w", {8}, 0, 16, 64), {"data offset 16 is not a multiple of the alignment 32"});
}

TEST(GgufValidation, RefusesTensorDataPastTheEndOfTheFile) {
  expect_refused(one_tensor_file("w", {8, 4}, 0, 0, 64), {"runs past the end of the file", "tensor 'w'"});
  expect_refused(one_tensor_file("w", {8}, 0, uint64_t{1} << 60, 32), {"runs past the end of the file"});
}

TEST(GgufValidation, RefusesADataSectionPastTheEndOfTheFile) {
  RawGguf f;
  f.header(1, 0).tensor("w", {8}, 0, 0);  // no padding, no data
  expect_refused(f, {"past the end of the file"});
}

TEST(GgufValidation, RefusesOverlappingTensors) {
  RawGguf f;
  f.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).pad().zeros(128);
  expect_refused(f, {"overlaps tensor 'a'", "tensor 'b'"});
}

TEST(GgufValidation, RefusesEveryTruncationOfAValidFile) {
  RawGguf f;
  f.header(2, 3).kv_string("general.name", "tiny").kv_u32("general.alignment", 32);
  f.str("tokens").u32(9).u32(8).u64(2).str("a").str("bc");
  f.tensor("x", {8}, 0, 0).tensor("y", {32, 2}, 8, 32).pad().zeros(32 + 68);
  ASSERT_NO_THROW(GgufFile::parse(f.bytes.data(), f.size()));
  for (size_t n = 0; n < f.size(); ++n) {
    RawGguf prefix;
    prefix.bytes.assign(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    std::string message;
    try {
      GgufFile::parse(prefix.bytes.data(), prefix.size());
    } catch (const GgufError& e) {
      message = e.what();
    }
    EXPECT_FALSE(message.empty()) << "a " << n << "-byte prefix was accepted";
  }
}

}  // namespace
}  // namespace peak::gguf
