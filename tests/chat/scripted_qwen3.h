// A scripted model with Qwen3's real vocabulary and chat template
// (../shared/fixtures): its next token depends only on the current one
// (attention and FFN weights are zero, so the residual stream is the token's
// embedding, and the output matrix maps it to the scripted successor). Greedy
// decoding then writes exactly
//   after "assistant\n" (thinking on):   <think>Reason</think>\n\nBlue.<|im_end|>
//   after "</think>\n\n" (thinking off): Blue.<|im_end|>
// which is what the thinking tests of sessions and `peak chat` need.
#pragma once

#include <string>

namespace peak::test {

void write_scripted_qwen3(const std::string& path);

}  // namespace peak::test
