// The vocabulary of a GGUF model: token texts, scores and attributes, special token
// ids, tokenizer flags and (for BPE) merge ranks, read from the tokenizer.ggml.* keys
// and validated as a whole: a Vocab that exists is internally consistent.
//
// Attributes and end-of-generation tokens follow llama.cpp's llama-vocab.cpp, so that
// peak tokenizes a GGUF file exactly as llama.cpp does.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_reader.h"
#include "tokenizer/pretokenizer.h"

namespace peak::tokenizer {

// Thrown for a vocabulary peak refuses; the message names the metadata key.
class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr int32_t kNoToken = -1;

enum class VocabType {
  Spm,  // tokenizer.ggml.model "llama": SentencePiece pieces with scores, byte fallback
  Bpe,  // tokenizer.ggml.model "gpt2": byte-level BPE with merge ranks
  Wpm,  // tokenizer.ggml.model "bert": WordPiece, longest match first
};

// Token attributes (bit flags, llama.cpp's numbering). The token type of the file
// gives one of the first six; some tokens gain CONTROL or RSTRIP by name.
enum TokenAttr : uint32_t {
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrRstrip = 1u << 8,  // when parsed as special, swallows the whitespace after it
};

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

// Special token ids, kNoToken when the model has none.
struct SpecialTokens {
  int32_t bos = kNoToken;
  int32_t eos = kNoToken;
  int32_t eot = kNoToken;
  int32_t eom = kNoToken;
  int32_t unk = kNoToken;
  int32_t sep = kNoToken;
  int32_t pad = kNoToken;
  int32_t mask = kNoToken;
  int32_t fim_pre = kNoToken;
  int32_t fim_suf = kNoToken;
  int32_t fim_mid = kNoToken;
  int32_t fim_pad = kNoToken;
  int32_t fim_rep = kNoToken;
  int32_t fim_sep = kNoToken;
};

struct TokenizerFlags {
  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;           // WPM: SEP after the text
  bool add_space_prefix = false;  // SPM: a space before text that starts a fragment
  bool ignore_merges = false;     // BPE: a word that is a token is not merged
};

class Vocab {
 public:
  // Throws TokenizerError (or gguf::GgufError for a value of the wrong type).
  static std::unique_ptr<Vocab> from_gguf(const gguf::GgufFile& file);

  VocabType type() const { return type_; }
  PreTokenizer pre_tokenizer() const { return pre_tokenizer_; }
  const TokenizerFlags& flags() const { return flags_; }
  const SpecialTokens& special() const { return special_; }

  int32_t n_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  bool contains(int32_t id) const { return id >= 0 && id < n_tokens(); }
  const TokenData& token(int32_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  // The id of the token spelled `text`, kNoToken if there is none.
  int32_t find(std::string_view text) const;
  // Bytes of the longest token text.
  size_t max_token_bytes() const { return max_token_bytes_; }

  // SPM: the byte-fallback token of a byte (<0xNN>, else the one-byte token, else
  // unknown). BPE: the token of the byte's byte-level character. kNoToken if none.
  int32_t byte_token(uint8_t byte) const { return byte_tokens_[byte]; }

  // BPE: rank and result of merging `left` then `right`, or nullptr.
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  const Merge* find_merge(int32_t left, int32_t right) const;

  // Tokens recognised in raw text before tokenizing (control, user-defined and
  // unknown ones), longest text first: the order llama.cpp splits text at them.
  const std::vector<int32_t>& special_tokens_longest_first() const { return special_by_length_; }

  bool is_eog(int32_t id) const;

 private:
  Vocab() = default;
  void load_tokens(const gguf::GgufFile& file);
  void load_merges(const gguf::GgufFile& file);
  void load_special_ids(const gguf::GgufFile& file);
  void detect_special_tokens_by_text();
  void set_model_specific_attributes(const gguf::GgufFile& file);
  void build_byte_tokens();
  // Open addressing over ids: a model's vocabulary (up to a few hundred
  // thousand tokens) is indexed at load, where node-based maps cost a cache
  // miss and an allocation per token.
  void index_texts();
  // The slot of text_slots_ holding `text` (hash `hash`), or the empty one
  // where it would go.
  size_t text_slot(std::string_view text, uint64_t hash) const;
  // The slot of merge_slots_ (not empty) holding `key`, or the empty one where it would go.
  size_t merge_slot(uint64_t key) const;

  VocabType type_ = VocabType::Spm;
  PreTokenizer pre_tokenizer_ = PreTokenizer::Default;
  TokenizerFlags flags_;
  SpecialTokens special_;
  std::vector<TokenData> tokens_;
  // A power of two of slots, at most half used: the text's hash in the high
  // half (matched before the text is compared), the id + 1 in the low (0: empty).
  std::vector<uint64_t> text_slots_;
  struct MergeSlot {
    uint64_t key = kNoMerge;  // left << 32 | right
    Merge merge{};
  };
  static constexpr uint64_t kNoMerge = ~uint64_t{0};  // no pair of ids >= 0 has it
  std::vector<MergeSlot> merge_slots_;                // a power of two, at most half used, or none
  std::array<int32_t, 256> byte_tokens_{};
  std::vector<int32_t> special_by_length_;
  std::vector<int32_t> eog_ids_;  // sorted
  size_t max_token_bytes_ = 0;
};

}  // namespace peak::tokenizer
