#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <optional>

#include "gguf/printable.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTokenTypeKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

// tokenizer.ggml.token_type values (the GGUF convention).
enum TokenType : int32_t {
  kTypeUndefined = 0, kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3,
  kTypeUserDefined = 4, kTypeUnused = 5, kTypeByte = 6,
};

[[noreturn]] void refuse(std::string_view key, const std::string& what) {
  throw TokenizerError("tokenizer: " + what + " (key '" + std::string(key) + "')");
}

uint32_t attr_of_type(int32_t type, uint64_t index) {
  switch (type) {
    case kTypeUndefined: return 0;
    case kTypeNormal: return kAttrNormal;
    case kTypeUnknown: return kAttrUnknown;
    case kTypeControl: return kAttrControl;
    case kTypeUserDefined: return kAttrUserDefined;
    case kTypeUnused: return kAttrUnused;
    case kTypeByte: return kAttrByte;
    default:
      refuse(kTokenTypeKey, "token " + std::to_string(index) + " has unknown type " + std::to_string(type));
  }
}

// "<0xNN>" with upper-case hex digits, as SentencePiece spells byte tokens.
std::optional<uint8_t> parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  const int hi = hex(text[3]), lo = hex(text[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

std::string byte_token_text(uint8_t byte) {
  static const char kHex[] = "0123456789ABCDEF";
  return std::string("<0x") + kHex[byte >> 4] + kHex[byte & 15] + ">";
}

// Texts llama.cpp recognises special tokens by, for models whose metadata does not
// name them (llama-vocab.cpp, "auto-detect special tokens by text").
const std::initializer_list<std::string_view> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
const std::initializer_list<std::string_view> kEomTexts = {"<|eom_id|>"};
const std::initializer_list<std::string_view> kFimPreTexts = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
    "<|prefix|>"};
const std::initializer_list<std::string_view> kFimSufTexts = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>",
    "<|suffix|>"};
const std::initializer_list<std::string_view> kFimMidTexts = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>",
    "<|middle|>"};
const std::initializer_list<std::string_view> kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
                                                              "[PAD]"};
const std::initializer_list<std::string_view> kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                                              "<REPO>", "<reponame>"};
const std::initializer_list<std::string_view> kFimSepTexts = {"<|file_sep|>"};
const std::initializer_list<std::string_view> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>"};

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> texts) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::unique_ptr<Vocab> Vocab::from_gguf(const gguf::GgufFile& file) {
  std::unique_ptr<Vocab> vocab(new Vocab());
  const std::optional<gguf::Value> model = file.find(kModelKey);
  if (!model) refuse(kModelKey, "the file has no tokenizer");
  const std::string_view model_name = model->str();
  if (model_name == "llama") {
    vocab->type_ = VocabType::Spm;
    vocab->flags_.add_space_prefix = true;
    vocab->flags_.add_bos = true;
  } else if (model_name == "gpt2") {
    vocab->type_ = VocabType::Bpe;
    const std::optional<gguf::Value> pre = file.find(kPreKey);
    const std::string_view pre_name = pre ? pre->str() : std::string_view();
    PreTokenizerInfo info{};
    if (!pre_tokenizer_from_name(pre_name, info)) {
      refuse(kPreKey, "pre-tokenizer '" + gguf::printable(pre_name) + "' is not supported");
    }
    vocab->pre_tokenizer_ = info.kind;
    vocab->flags_.ignore_merges = info.ignore_merges;
    vocab->flags_.add_bos = info.add_bos;
  } else if (model_name == "bert") {
    vocab->type_ = VocabType::Wpm;
    vocab->flags_.add_bos = true;
    vocab->flags_.add_sep = true;
  } else {
    refuse(kModelKey,
           "tokenizer model '" + gguf::printable(model_name) + "' is not supported (peak has 'llama', 'gpt2' and 'bert')");
  }
  if (const auto v = file.find("tokenizer.ggml.add_space_prefix")) vocab->flags_.add_space_prefix = v->boolean();

  vocab->load_tokens(file);
  if (vocab->type_ == VocabType::Bpe) vocab->load_merges(file);
  // llama.cpp's defaults for models without the keys.
  auto default_id = [&](int32_t id) { return vocab->contains(id) ? id : kNoToken; };
  if (vocab->type_ == VocabType::Spm) {
    vocab->special_.bos = default_id(1);
    vocab->special_.eos = default_id(2);
    vocab->special_.unk = default_id(0);
  } else if (vocab->type_ == VocabType::Wpm) {
    vocab->special_.bos = default_id(101);  // [CLS]
    vocab->special_.unk = default_id(100);
    vocab->special_.sep = default_id(102);
    vocab->special_.pad = default_id(0);
    vocab->special_.mask = default_id(103);
  }
  vocab->load_special_ids(file);
  if (const auto v = file.find("tokenizer.ggml.add_bos_token")) vocab->flags_.add_bos = v->boolean();
  if (const auto v = file.find("tokenizer.ggml.add_eos_token")) vocab->flags_.add_eos = v->boolean();
  if (const auto v = file.find("tokenizer.ggml.add_sep_token")) vocab->flags_.add_sep = v->boolean();
  if (vocab->type_ == VocabType::Wpm && vocab->special_.unk == kNoToken) {
    refuse("tokenizer.ggml.unknown_token_id", "a WordPiece vocabulary needs an unknown token");
  }
  if (vocab->flags_.add_bos && vocab->special_.bos == kNoToken) {
    refuse("tokenizer.ggml.add_bos_token", "a BOS token is to be added but the vocabulary has none");
  }
  if (vocab->flags_.add_eos && vocab->special_.eos == kNoToken) {
    refuse("tokenizer.ggml.add_eos_token", "an EOS token is to be added but the vocabulary has none");
  }
  if (vocab->flags_.add_sep && vocab->special_.sep == kNoToken) {
    refuse("tokenizer.ggml.add_sep_token", "a SEP token is to be added but the vocabulary has none");
  }
  vocab->detect_special_tokens_by_text();

  for (int32_t id = 0; id < vocab->n_tokens(); ++id) {
    const TokenData& data = vocab->tokens_[static_cast<size_t>(id)];
    if ((data.attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) != 0 && !data.text.empty()) {
      vocab->special_by_length_.push_back(id);
    }
  }
  std::stable_sort(vocab->special_by_length_.begin(), vocab->special_by_length_.end(), [&](int32_t a, int32_t b) {
    return vocab->tokens_[static_cast<size_t>(a)].text.size() > vocab->tokens_[static_cast<size_t>(b)].text.size();
  });
  vocab->set_model_specific_attributes(file);
  vocab->build_byte_tokens();
  return vocab;
}

void Vocab::load_tokens(const gguf::GgufFile& file) {
  const std::optional<gguf::Value> tokens_value = file.find(kTokensKey);
  if (!tokens_value) refuse(kTokensKey, "the vocabulary has no tokens");
  const gguf::ArrayView texts = tokens_value->array();
  const uint64_t n = texts.size();
  if (n == 0) refuse(kTokensKey, "the vocabulary is empty");
  if (n > static_cast<uint64_t>(INT32_MAX)) refuse(kTokensKey, "too many tokens");
  std::optional<gguf::ArrayView> scores, types;
  if (const auto v = file.find(kScoresKey)) scores = v->array();
  if (const auto v = file.find(kTokenTypeKey)) types = v->array();
  if (scores && scores->size() != n) {
    refuse(kScoresKey, std::to_string(scores->size()) + " scores for " + std::to_string(n) + " tokens");
  }
  if (types && types->size() != n) {
    refuse(kTokenTypeKey, std::to_string(types->size()) + " token types for " + std::to_string(n) + " tokens");
  }
  tokens_.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    TokenData& data = tokens_[i];
    data.text = std::string(texts.str(i));
    data.score = scores ? scores->at<float>(i) : 0.0f;
    data.attr = types ? attr_of_type(types->at<int32_t>(i), i) : kAttrNormal;
    if ((data.attr & kAttrByte) != 0 && !parse_byte_token(data.text)) {
      refuse(kTokenTypeKey, "byte token " + std::to_string(i) + " is not spelled <0xNN>");
    }
    max_token_bytes_ = std::max(max_token_bytes_, data.text.size());
  }
  index_texts();
}

namespace {

// The smallest power of two of at least twice `count` slots (count < 2^31).
size_t table_size(size_t count) {
  size_t size = 16;
  while (size < 2 * count) size *= 2;
  return size;
}

uint64_t text_hash(std::string_view text) { return std::hash<std::string_view>{}(text); }

// Fibonacci hashing spreads the pairs' ids, which are small and close, over the table.
size_t pair_slot(uint64_t key, size_t mask) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask; }

// A text slot's id + 1 (0: empty).
size_t slot_id(uint64_t held) { return static_cast<size_t>(held & 0xFFFFFFFFu) - 1; }

}  // namespace

size_t Vocab::text_slot(std::string_view text, uint64_t hash) const {
  const size_t mask = text_slots_.size() - 1;
  size_t slot = static_cast<size_t>(hash) & mask;
  for (; text_slots_[slot] != 0; slot = (slot + 1) & mask) {
    const uint64_t held = text_slots_[slot];
    if ((held >> 32) == (hash >> 32) && tokens_[slot_id(held)].text == text) break;
  }
  return slot;
}

size_t Vocab::merge_slot(uint64_t key) const {
  const size_t mask = merge_slots_.size() - 1;
  size_t slot = pair_slot(key, mask);
  while (merge_slots_[slot].key != kNoMerge && merge_slots_[slot].key != key) slot = (slot + 1) & mask;
  return slot;
}

void Vocab::index_texts() {
  text_slots_.assign(table_size(tokens_.size()), 0);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& text = tokens_[i].text;
    if (text.empty()) continue;  // never matched, never found
    const uint64_t hash = text_hash(text);
    const size_t slot = text_slot(text, hash);
    if (text_slots_[slot] != 0) {
      refuse(kTokensKey, "tokens " + std::to_string(slot_id(text_slots_[slot])) + " and " + std::to_string(i) +
                             " are both '" + gguf::printable(text) + "'");
    }
    text_slots_[slot] = (hash & 0xFFFFFFFF00000000ull) | static_cast<uint64_t>(i + 1);
  }
}

void Vocab::load_merges(const gguf::GgufFile& file) {
  const std::optional<gguf::Value> value = file.find(kMergesKey);
  if (!value) refuse(kMergesKey, "a BPE vocabulary needs merges");
  const gguf::ArrayView merges = value->array();
  if (merges.size() > static_cast<uint64_t>(INT32_MAX)) refuse(kMergesKey, "too many merges");
  merge_slots_.assign(table_size(static_cast<size_t>(merges.size())), MergeSlot{});
  std::string joined;  // left then right: the merged token's text
  for (uint64_t i = 0; i < merges.size(); ++i) {
    const std::string_view merge = merges.str(i);
    // "left right"; the first space after the first byte separates them, so a left
    // part may itself be a space.
    const size_t space = merge.find(' ', 1);
    if (space == std::string_view::npos) {
      refuse(kMergesKey, "merge " + std::to_string(i) + " '" + gguf::printable(merge) + "' is not two tokens");
    }
    const std::string_view left_text = merge.substr(0, space), right_text = merge.substr(space + 1);
    const int32_t left = find(left_text), right = find(right_text);
    joined.assign(left_text).append(right_text);
    const int32_t result = find(joined);
    if (left == kNoToken || right == kNoToken || result == kNoToken) {
      refuse(kMergesKey,
             "merge " + std::to_string(i) + " '" + gguf::printable(merge) + "' names a token not in the vocabulary");
    }
    const uint64_t key = (static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right);
    MergeSlot& slot = merge_slots_[merge_slot(key)];
    if (slot.key == kNoMerge)
      slot = MergeSlot{key, Merge{static_cast<int32_t>(i), result}};  // a repeated pair keeps its first rank
  }
}

void Vocab::load_special_ids(const gguf::GgufFile& file) {
  const std::pair<std::string_view, int32_t*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &special_.bos},
      {"tokenizer.ggml.eos_token_id", &special_.eos},
      {"tokenizer.ggml.eot_token_id", &special_.eot},
      {"tokenizer.ggml.eom_token_id", &special_.eom},
      {"tokenizer.ggml.unknown_token_id", &special_.unk},
      {"tokenizer.ggml.seperator_token_id", &special_.sep},
      {"tokenizer.ggml.padding_token_id", &special_.pad},
      {"tokenizer.ggml.mask_token_id", &special_.mask},
      {"tokenizer.ggml.fim_pre_token_id", &special_.fim_pre},
      {"tokenizer.ggml.fim_suf_token_id", &special_.fim_suf},
      {"tokenizer.ggml.fim_mid_token_id", &special_.fim_mid},
      {"tokenizer.ggml.fim_pad_token_id", &special_.fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &special_.fim_rep},
      {"tokenizer.ggml.fim_sep_token_id", &special_.fim_sep},
      // older names of the first three FIM keys
      {"tokenizer.ggml.prefix_token_id", &special_.fim_pre},
      {"tokenizer.ggml.suffix_token_id", &special_.fim_suf},
      {"tokenizer.ggml.middle_token_id", &special_.fim_mid},
  };
  for (const auto& [key, id] : keys) {
    const std::optional<gguf::Value> value = file.find(key);
    if (!value) continue;
    const int64_t raw = value->as_int();
    if (raw == -1 || raw == 0xFFFFFFFF) {  // "none", however the converter stored it
      *id = kNoToken;
    } else if (raw < 0 || raw >= n_tokens()) {
      refuse(key, "token id " + std::to_string(raw) + " is outside the vocabulary of " + std::to_string(n_tokens()));
    } else {
      *id = static_cast<int32_t>(raw);
    }
  }
}

void Vocab::detect_special_tokens_by_text() {
  // As llama.cpp: a role the metadata left empty goes to the first token spelled as
  // that role's tokens are (lowest id first here; llama.cpp's order is a hash map's),
  // and every such token, end-of-generation ones too, is made a control token.
  const std::pair<int32_t*, std::initializer_list<std::string_view>> roles[] = {
      {&special_.eot, kEotTexts},         {&special_.eom, kEomTexts},         {&special_.fim_pre, kFimPreTexts},
      {&special_.fim_suf, kFimSufTexts},  {&special_.fim_mid, kFimMidTexts},  {&special_.fim_pad, kFimPadTexts},
      {&special_.fim_rep, kFimRepTexts},  {&special_.fim_sep, kFimSepTexts},
  };
  for (const auto& [role, texts] : roles) {
    if (*role != kNoToken) continue;
    for (int32_t id = 0; id < n_tokens(); ++id) {
      if (is_one_of(tokens_[static_cast<size_t>(id)].text, texts)) {
        *role = id;
        tokens_[static_cast<size_t>(id)].attr |= kAttrControl;
        break;
      }
    }
  }
  // Control tokens named "...unused..." are unused.
  for (TokenData& data : tokens_) {
    if ((data.attr & kAttrControl) != 0 && data.text.find("unused") != std::string::npos) data.attr |= kAttrUnused;
  }
  for (const int32_t id : {special_.fim_pad, special_.fim_rep, special_.fim_sep}) {
    if (id != kNoToken) eog_ids_.push_back(id);
  }
  for (int32_t id = 0; id < n_tokens(); ++id) {
    if (is_one_of(tokens_[static_cast<size_t>(id)].text, kEogTexts)) {
      eog_ids_.push_back(id);
      tokens_[static_cast<size_t>(id)].attr |= kAttrControl;
    }
  }
  for (const int32_t id : {special_.eos, special_.eot, special_.eom}) {
    if (id != kNoToken) eog_ids_.push_back(id);
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
}

void Vocab::set_model_specific_attributes(const gguf::GgufFile& file) {
  // llama.cpp gives Phi-3's special tokens RSTRIP (they swallow the whitespace after
  // them when parsed), except <unk>, <s> and <|endoftext|>.
  const std::optional<gguf::Value> name = file.find("general.name");
  const std::string model_name = name ? lower_ascii(name->str()) : std::string();
  if (model_name.find("phi-3") == std::string::npos && model_name.find("phi3") == std::string::npos) return;
  for (const int32_t id : special_by_length_) tokens_[static_cast<size_t>(id)].attr |= kAttrRstrip;
  if (const int32_t id = find("</s>"); id != kNoToken) tokens_[static_cast<size_t>(id)].attr |= kAttrRstrip;
  for (const std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
    if (const int32_t id = find(text); id != kNoToken) tokens_[static_cast<size_t>(id)].attr &= ~kAttrRstrip;
  }
}

void Vocab::build_byte_tokens() {
  for (int byte = 0; byte < 256; ++byte) {
    const auto b = static_cast<uint8_t>(byte);
    int32_t id = kNoToken;
    if (type_ == VocabType::Spm) {
      id = find(byte_token_text(b));
      if (id == kNoToken) id = find(std::string(1, static_cast<char>(b)));
      if (id == kNoToken) id = special_.unk;
    } else {
      std::string text;
      append_utf8(text, byte_to_codepoint(b));
      id = find(text);
    }
    byte_tokens_[b] = id;
  }
}

int32_t Vocab::find(std::string_view text) const {
  if (text.empty()) return kNoToken;
  const uint64_t held = text_slots_[text_slot(text, text_hash(text))];
  return held == 0 ? kNoToken : static_cast<int32_t>(slot_id(held));
}

const Vocab::Merge* Vocab::find_merge(int32_t left, int32_t right) const {
  if (merge_slots_.empty() || left < 0 || right < 0) return nullptr;
  const uint64_t key = (static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right);
  const MergeSlot& slot = merge_slots_[merge_slot(key)];
  return slot.key == key ? &slot.merge : nullptr;
}

bool Vocab::is_eog(int32_t id) const {
  return id != kNoToken && std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

}  // namespace peak::tokenizer
