#include "tokenizer/tokenizer_wpm.h"

#include <algorithm>
#include <string>

#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

// The CJK ideograph blocks BERT splits one by one (as Hugging Face's tokenizers,
// including its 0x2B920 where the block starts at 0x2B820).
bool is_cjk_ideograph(uint32_t cpt) {
  return (cpt >= 0x4E00 && cpt <= 0x9FFF) || (cpt >= 0x3400 && cpt <= 0x4DBF) || (cpt >= 0x20000 && cpt <= 0x2A6DF) ||
         (cpt >= 0x2A700 && cpt <= 0x2B73F) || (cpt >= 0x2B740 && cpt <= 0x2B81F) ||
         (cpt >= 0x2B920 && cpt <= 0x2CEAF) || (cpt >= 0xF900 && cpt <= 0xFAFF) || (cpt >= 0x2F800 && cpt <= 0x2FA1F);
}

std::vector<std::string> normalized_words(std::string_view text) {
  std::vector<std::string> words(1);
  for (const uint32_t original : decode_utf8(text)) {
    const uint32_t cpt = unicode::nfd_first(original);
    const uint16_t flags = unicode::flags(cpt);
    if ((flags & unicode::kWhitespace) != 0) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (cpt == 0 || cpt == kReplacementCharacter || (flags & unicode::kControl) != 0) continue;
    std::string lowered;
    append_utf8(lowered, unicode::to_lower(cpt));
    const bool stands_alone = (flags & unicode::kPunctuation) != 0 ||
                              (cpt < 0x7F && (flags & unicode::kSymbol) != 0) || is_cjk_ideograph(cpt);
    if (stands_alone) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = lowered;
      words.emplace_back();
    } else {
      words.back() += lowered;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void tokenize_wpm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : normalized_words(text)) {
    const std::string spelled = "\xE2\x96\x81" + word;  // the word-start marker
    const size_t word_start = out.size();
    for (size_t begin = 0; begin < spelled.size();) {
      // The longest token that starts here.
      size_t end = std::min(spelled.size(), begin + vocab.max_token_bytes());
      int32_t id = kNoToken;
      for (; end > begin; --end) {
        id = vocab.find(std::string_view(spelled).substr(begin, end - begin));
        if (id != kNoToken) break;
      }
      if (id == kNoToken) {
        out.resize(word_start);  // a word that cannot be spelled whole is unknown
        break;
      }
      out.push_back(id);
      begin = end;
    }
    if (out.size() == word_start) out.push_back(vocab.special().unk);
  }
}

}  // namespace peak::tokenizer
