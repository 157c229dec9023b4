// The split is checked against the rule Qwen3's chat template applies to an
// assistant message when it renders history (Qwen/Qwen3-0.6B
// tokenizer_config.json, also in ../shared/fixtures/templates):
//   reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
//   answer    = content.split('</think>')[-1].lstrip('\n')
// for outputs that open with the reasoning block, and must hold however the
// output is cut into streamed pieces.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "chat/reasoning.h"

namespace peak::chat {
namespace {

std::string rstrip_newlines(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}
std::string lstrip_newlines(const std::string& s) { return s.substr(s.find_first_not_of('\n') == std::string::npos ? s.size() : s.find_first_not_of('\n')); }

// Qwen3's rule, written out with std::string.
std::pair<std::string, std::string> template_split(const std::string& content) {
  const size_t close = content.find("</think>");
  if (close == std::string::npos) return {"", content};
  std::string before = rstrip_newlines(content.substr(0, close));
  const size_t open = before.rfind("<think>");
  if (open != std::string::npos) before = before.substr(open + 7);
  const size_t last_close = content.rfind("</think>");
  return {lstrip_newlines(before), lstrip_newlines(content.substr(last_close + 8))};
}

struct Streamed {
  std::string reasoning, answer;
  int switches = 0;  // how often the kind changed: reasoning first, then answer
};

Streamed stream(const std::string& output, size_t piece, bool opened = false) {
  ReasoningSplitter splitter({}, opened);
  Streamed s;
  TextKind last = TextKind::Reasoning;
  const KindedTextFn emit = [&](TextKind kind, const std::string& text) {
    EXPECT_FALSE(text.empty());
    if (kind != last) ++s.switches;
    last = kind;
    (kind == TextKind::Reasoning ? s.reasoning : s.answer) += text;
    return true;
  };
  for (size_t at = 0; at < output.size(); at += piece) splitter.feed(output.substr(at, piece), emit);
  splitter.finish(emit);
  EXPECT_EQ(s.reasoning, splitter.reasoning());
  EXPECT_EQ(s.answer, splitter.answer());
  return s;
}

const char* const kOutputs[] = {
    "<think>\nThe user wants a colour.\n</think>\n\nBlue.",
    "<think>\n\n</think>\n\nHello, how can I help?",
    "<think>\nFirst line.\n\nSecond line with < and </thin and </ inside.\n</think>\n\nAnswer\n\nwith paragraphs.\n",
    "<think>short</think>Direct answer",
    "<think>\nNo answer yet",
    "<think>\n</think>",
};

TEST(ReasoningSplitter, MatchesTheTemplateRuleForEveryPieceSize) {
  for (const std::string output : kOutputs) {
    const auto [reasoning, answer] = template_split(output);
    for (size_t piece = 1; piece <= output.size(); ++piece) {
      const Streamed s = stream(output, piece);
      if (output.find("</think>") != std::string::npos) {
        EXPECT_EQ(s.reasoning, reasoning) << output << " in pieces of " << piece;
        EXPECT_EQ(s.answer, answer) << output << " in pieces of " << piece;
      } else {
        EXPECT_EQ(s.reasoning, "No answer yet");  // cut off while thinking: all of it is reasoning
        EXPECT_EQ(s.answer, "");
      }
      EXPECT_LE(s.switches, 1) << output;
    }
  }
}

TEST(ReasoningSplitter, TextWithoutAReasoningBlockIsAllAnswer) {
  for (const std::string output : {"Blue.", "Text, then <think> is text", "<thin", "<", "The tag <think> mid-answer."}) {
    for (size_t piece = 1; piece <= output.size(); ++piece) {
      const Streamed s = stream(output, piece);
      EXPECT_EQ(s.answer, output) << piece;
      EXPECT_EQ(s.reasoning, "");
    }
  }
}

TEST(ReasoningSplitter, LeadingWhitespaceBeforeTheBlockIsDropped) {
  const Streamed s = stream("\n<think>\nwhy\n</think>\n\nbecause", 3);
  EXPECT_EQ(s.reasoning, "why");
  EXPECT_EQ(s.answer, "because");
}

TEST(ReasoningSplitter, AnOpenedBlockStartsInReasoning) {
  // DeepSeek-R1's generation prompt ends with "<think>\n": the output starts inside.
  for (size_t piece = 1; piece < 8; ++piece) {
    const Streamed s = stream("Let me think.\n</think>\n\nDone.", piece, /*opened=*/true);
    EXPECT_EQ(s.reasoning, "Let me think.");
    EXPECT_EQ(s.answer, "Done.");
  }
}

// What a grammar for the answer reads: everything after the closing marker
// (all of the output when it opens no block), from the feed that ends the
// reasoning on, whichever piece the marker ends in.
TEST(ReasoningSplitter, TheAnswersLeadIsTheRawTextAfterTheReasoning) {
  const std::vector<std::string> outputs = {
      kOutputs[0], kOutputs[2], kOutputs[3], "Blue.", "  Text <think> in it", "<think>x</think>\n\n{\"a\": 1}"};
  for (const std::string& output : outputs) {
    const size_t close = output.find("</think>");
    const std::string after = close == std::string::npos ? output : output.substr(close + 8);
    for (size_t piece = 1; piece <= output.size(); ++piece) {
      ReasoningSplitter splitter;
      std::string read;  // what the grammar would read
      bool found = false;
      for (size_t at = 0; at < output.size(); at += piece) {
        const std::string text = output.substr(at, piece);
        if (found) read += text;
        const bool before = splitter.before_answer();
        splitter.feed(text, nullptr);
        if (before && !splitter.before_answer()) {
          found = true;
          read = splitter.answer_lead();
        }
      }
      EXPECT_TRUE(found) << output << " in pieces of " << piece;
      EXPECT_EQ(read, after) << output << " in pieces of " << piece;
    }
  }
}

TEST(ReasoningSplitter, StopsWhenTheReceiverSaysSo) {
  ReasoningSplitter splitter;
  int calls = 0;
  const KindedTextFn stop = [&](TextKind, const std::string&) { return ++calls < 1; };
  EXPECT_FALSE(splitter.feed("<think>\nreasoning\n</think>\n\nanswer", stop));
  EXPECT_EQ(calls, 1);
}

TEST(ReasoningSplitter, OtherMarkers) {
  ReasoningSplitter splitter({"<|thought|>", "<|/thought|>"});
  splitter.feed("<|thought|>hmm<|/thought|>\nyes", nullptr);
  splitter.finish(nullptr);
  EXPECT_EQ(splitter.reasoning(), "hmm");
  EXPECT_EQ(splitter.answer(), "yes");
}

}  // namespace
}  // namespace peak::chat
