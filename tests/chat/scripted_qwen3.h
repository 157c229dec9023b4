// A scripted model with Qwen3's real vocabulary and chat template
// (../shared/fixtures): its next token depends only on the current one
// (attention and FFN weights are zero, so the residual stream is the token's
// embedding, and the output matrix maps it to the scripted successor). Greedy
// decoding then writes exactly
//   after "assistant\n" (thinking on):   <think>Reason</think>\n\nBlue.<|im_end|>
//   after "</think>\n\n" (thinking off): Blue.<|im_end|>
// which is what the thinking tests of sessions and `peak chat` need. Other
// scripts write Hermes tool calls (Qwen3's format) of their own accord; what a
// call holds past its opening marker the script leaves to a grammar (all other
// tokens tie, and greedy decoding takes the first the grammar allows: mostly
// single characters), but for what follows a '>' (the end of a call's closing
// marker, spelled out so).
#pragma once

#include <string>

namespace peak::test {

enum class Qwen3Script {
  Answer,        // ... Blue.<|im_end|>; '>' ends the answer
  Call,          // ... <tool_call> in place of Blue.; '>' ends the answer
  TextThenCall,  // ... Blue.<tool_call>; '>' ends the answer
  CallAgain,     // ... <tool_call>; a newline after '>' (a second call, under Hermes)
};

void write_scripted_qwen3(const std::string& path, Qwen3Script script = Qwen3Script::Answer);

}  // namespace peak::test
