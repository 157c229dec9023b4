// libFuzzer target: any byte string, read as GBNF (up to a first NUL byte),
// must compile or be refused with a GrammarError that names a line and column
// inside the text. A grammar that compiles is run on the texts after the NUL
// (NUL-separated) or, without one, on the grammar's own text; and on a text
// built a byte at a time from the grammar's bytes, each kept only if the
// matcher takes it. Checked: a verdict does not depend on where the text is cut
// and handed over as a snapshot; a text built of taken bytes is never rejected;
// a stopped matcher stays stopped. Anything else (a crash, a hang, a sanitizer
// report, another exception) is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"

namespace {

using peak::sampling::Grammar;
using peak::sampling::GrammarError;
using peak::sampling::GrammarMatcher;
using peak::sampling::GrammarVerdict;

constexpr size_t kMaxTextBytes = 64;  // each text run on a grammar
constexpr size_t kMaxTexts = 4;
constexpr size_t kBuiltBytes = 24;     // the length of the text built from taken bytes
constexpr size_t kCandidateBytes = 8;  // bytes of the grammar tried at each step

std::shared_ptr<const Grammar> compile(std::string_view text) {
  try {
    return Grammar::parse(text);
  } catch (const GrammarError& error) {
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    if (error.line() < 1 || error.line() > lines || error.column() < 1) std::abort();
    return nullptr;
  }
}

// The text read whole, and read in two parts with the first handed over as a
// snapshot, give the same verdict.
void check_text(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  text = text.substr(0, kMaxTextBytes);
  GrammarMatcher whole(grammar);
  whole.accept_bytes(text);
  const size_t split = text.size() / 2;
  GrammarMatcher first(grammar);
  first.accept_bytes(text.substr(0, split));
  GrammarMatcher second(grammar);
  second.restore(first.state());
  second.accept_bytes(text.substr(split));
  if (second.verdict() != whole.verdict()) std::abort();
  if (whole.verdict() == GrammarVerdict::kRejected && whole.accept_bytes("a")) std::abort();
}

// Builds a text of bytes the matcher takes, trying the grammar's own bytes.
void check_built_text(const std::shared_ptr<const Grammar>& grammar, std::string_view bytes) {
  GrammarMatcher matcher(grammar);
  std::string built;
  for (size_t step = 0; step < kBuiltBytes && !bytes.empty(); ++step) {
    const GrammarMatcher::State before = matcher.state();
    bool taken = false;
    for (size_t i = 0; i < kCandidateBytes && !taken; ++i) {
      const char byte = bytes[(step * 7 + i * 13) % bytes.size()];
      taken = matcher.accept_byte(static_cast<uint8_t>(byte));
      if (taken) built += byte;
      if (!taken) matcher.restore(before);
    }
    if (!taken) break;
  }
  if (matcher.verdict() == GrammarVerdict::kRejected) std::abort();
  const GrammarVerdict again = peak::sampling::grammar_verdict(grammar, built);
  if (again != matcher.verdict()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  const std::shared_ptr<const Grammar> grammar = compile(text);
  if (!grammar) return 0;
  if (nul == std::string_view::npos) {
    check_text(grammar, text);
  } else {
    std::string_view rest = input.substr(nul + 1);
    for (size_t i = 0; i < kMaxTexts && !rest.empty(); ++i) {
      const size_t end = rest.find('\0');
      check_text(grammar, rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  check_built_text(grammar, text);
  return 0;
}
