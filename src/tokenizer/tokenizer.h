// Text <-> token ids for a GGUF model, matching llama.cpp's tokenizers: `llama`
// (SentencePiece-style), `gpt2` (byte-level BPE) and `bert` (WordPiece) vocabularies.
//
// Thread safety: a Tokenizer is immutable once built; every method is const and may
// be called from any number of threads at once.
//
// Untrusted input: any bytes tokenize (ill-formed UTF-8 included), in time close to
// linear in their length.
//
// Where peak differs from llama.cpp (all outside well-formed input to supported files):
// - Ill-formed UTF-8 is cut into maximal subparts (utf8.h): SPM turns each into byte
//   tokens, BPE into one U+FFFD; llama.cpp replaces every bad byte and accepts
//   overlong and surrogate forms.
// - A special token id outside the vocabulary is refused (llama.cpp warns and keeps
//   its default); BPE vocabularies without BOS/EOS keys have none (llama.cpp: 11).
// - Byte-level pieces keep characters outside the byte alphabet as they are;
//   detokenize does not apply llama.cpp's clean_spaces (" ," -> ",") pass.
// - Model-specific attribute hacks other than Phi-3's are not reproduced (jina and
//   modern-bert <mask> LSTRIP, gpt-oss / solar-open / gemma4 token retyping).
// Where both lose text, peak says so: encode reports the characters a vocabulary
// without byte tokens cannot spell (llama.cpp drops them, or makes them unknown,
// without a word).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_reader.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace peak::tokenizer {

// What encode could not spell: the characters of the text the vocabulary has no
// token for, which byte-level BPE drops (as llama.cpp does) and SPM turns into its
// unknown token. WordPiece's unknown words are not counted: BERT makes a word it
// cannot spell whole unknown by design.
struct Unspelled {
  std::string characters;     // each once, in the order they first appear
  bool nothing_left = false;  // the text gave no token: it had nothing the vocabulary can spell
};

// `characters` (as in Unspelled) quoted one by one for a message, escaped
// (gguf::printable): "'h', ' ', '\x1b'"; the first 16, then how many more.
std::string quote_characters(std::string_view characters);

// Bytes [offset, offset + length) of a text.
struct TextRange {
  size_t offset = 0;
  size_t length = 0;
};

class Tokenizer {
 public:
  // Reads and validates the tokenizer.ggml.* metadata. Throws TokenizerError naming
  // the key for anything peak does not support or a file gets wrong.
  static std::unique_ptr<Tokenizer> from_gguf(const gguf::GgufFile& file);

  // `add_special`: add BOS / EOS (/ SEP) as the model asks (tokenizer.ggml.add_bos_token ...).
  // `parse_special`: recognise control tokens spelled in the text ("<|im_end|>").
  // User-defined tokens are recognised either way, as llama.cpp does.
  // `unspelled`, when given, receives what the vocabulary could not spell.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special,
                              Unspelled* unspelled = nullptr) const;
  // A prompt template filled with users' texts: as encode(text, false, true),
  // but a control token spelled within a range of `verbatim` (the texts filled
  // in) stays text, so a document cannot close the template's turn. Text
  // around the ranges tokenizes together with them, as the whole string would.
  std::vector<int32_t> encode_filled(std::string_view text, const std::vector<TextRange>& verbatim,
                                     Unspelled* unspelled = nullptr) const;

  // The bytes a token stands for (not always whole UTF-8 characters: feed them to a
  // Utf8StreamDecoder). Control and unknown tokens give "" unless `render_special`.
  // Throws TokenizerError for an id outside the vocabulary.
  std::string token_to_piece(int32_t id, bool render_special) const;

  // The text of a token sequence: pieces joined, less the space an SPM encoder puts
  // before the text; `remove_special` drops the BOS / EOS that encode would add.
  std::string detokenize(const std::vector<int32_t>& ids, bool remove_special, bool render_special) const;

  int32_t n_vocab() const { return vocab_->n_tokens(); }
  int32_t bos() const { return vocab_->special().bos; }
  int32_t eos() const { return vocab_->special().eos; }
  int32_t eot() const { return vocab_->special().eot; }
  int32_t unk() const { return vocab_->special().unk; }
  int32_t pad() const { return vocab_->special().pad; }
  bool add_bos() const { return vocab_->flags().add_bos; }
  bool add_eos() const { return vocab_->flags().add_eos; }
  // The token encode's add_special puts last: [SEP] for a vocabulary that adds
  // one (WordPiece), else EOS when the model adds it; kNoToken when neither.
  int32_t appended_end() const;
  // End of generation: EOS, EOT and the other tokens models end a turn with.
  bool is_eog(int32_t id) const { return vocab_->is_eog(id); }
  const Vocab& vocab() const { return *vocab_; }

 private:
  explicit Tokenizer(std::unique_ptr<Vocab> vocab);
  std::string render_piece(int32_t id) const;
  // encode, with control tokens not recognised inside `verbatim` (encode_filled).
  std::vector<int32_t> encode_with(std::string_view text, bool add_special, bool parse_special,
                                   const std::vector<TextRange>& verbatim, Unspelled* unspelled) const;

  std::unique_ptr<Vocab> vocab_;
  std::vector<std::string> pieces_;  // token id -> its bytes, special tokens rendered
};

}  // namespace peak::tokenizer
