// The tool-call stream parser. The answer (the text after any reasoning) is
// read left to right:
//  - text outside calls is content; text that may be the start of an opening
//    marker, and whitespace that may precede one, wait until decided;
//  - an opening marker (or, where the format says so, a '{' opening the answer)
//    starts a section, held until its closing marker, or its JSON value's end
//    where the format has no closing marker;
//  - a complete section that reads as the format's calls becomes calls, the
//    whitespace around it dropped; one that does not (or one the text ends
//    inside) is content, as written.
// The decisions depend only on the text, never on how it was cut into pieces.
#include <algorithm>
#include <utility>

#include "chat/tool_call.h"
#include "chat/tool_call_sections.h"

namespace peak::chat {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

class ToolCallStreamParser::Answer {
 public:
  Answer(const ToolCallFormat& format, std::string id_prefix, json::Value tools)
      : format_(format), id_prefix_(std::move(id_prefix)), tools_(std::move(tools)) {}

  void feed(std::string_view text, const ToolParseEventFn& emit) {
    pending_.append(text);
    run(false, emit);
  }
  void finish(const ToolParseEventFn& emit) { run(true, emit); }

 private:
  enum class State { Start, Text, Section };
  enum class Step { Continue, Wait };

  void run(bool end, const ToolParseEventFn& emit) {
    Step step = Step::Continue;
    while (step == Step::Continue) {
      switch (state_) {
        case State::Start: step = start(end); break;
        case State::Text: step = text(end, emit); break;
        case State::Section: step = section(end, emit); break;
      }
    }
    pending_.erase(0, pos_);
    pos_ = 0;
    if (end) flush_space(emit);
  }

  // The answer's first '{' opens a call in formats whose calls are the whole answer.
  // Leading whitespace waits in space_, as before any section: content if text
  // follows, dropped if a call does.
  Step start(bool end) {
    const size_t first = std::min(pending_.find_first_not_of(" \n\t\r", pos_), pending_.size());
    space_.append(pending_, pos_, first - pos_);
    pos_ = first;
    if (first == pending_.size() && !end) return Step::Wait;
    if (format_.answer_is_json && first < pending_.size() && pending_[first] == '{') {
      begin_section(0);
    } else {
      state_ = State::Text;
    }
    return Step::Continue;
  }

  Step text(bool end, const ToolParseEventFn& emit) {
    if (after_call_) {
      while (pos_ < pending_.size() && is_space(pending_[pos_])) ++pos_;
      if (pos_ == pending_.size()) return Step::Wait;
      after_call_ = false;
    }
    const std::string_view open = format_.open;
    const size_t marker = open.empty() ? std::string::npos : pending_.find(open, pos_);
    if (marker != std::string::npos) {
      add_content(std::string_view(pending_).substr(pos_, marker - pos_), emit);
      pos_ = marker;
      begin_section(open.size());
      return Step::Continue;
    }
    const std::string_view rest = std::string_view(pending_).substr(pos_);
    const size_t keep = end ? 0 : partial_marker_at_end(rest, open);
    add_content(rest.substr(0, rest.size() - keep), emit);
    pos_ = pending_.size() - keep;
    return Step::Wait;
  }

  void begin_section(size_t marker_size) {
    state_ = State::Section;
    marker_size_ = marker_size;
    scanned_ = marker_size;
    extent_ = JsonExtent();
  }

  Step section(bool end, const ToolParseEventFn& emit) {
    const std::string_view text = std::string_view(pending_).substr(pos_);
    const std::string_view close = format_.close;
    size_t section_end = 0;  // just past the section; 0 while it is open
    if (!close.empty()) {
      const size_t found = text.find(close, scanned_);
      if (found != std::string_view::npos) section_end = found + close.size();
      scanned_ = std::max(scanned_, text.size() < close.size() ? 0 : text.size() - close.size() + 1);
    } else if (extent_.scan(text, &scanned_, &section_end) == JsonExtent::Status::NotJson) {
      // Only the marker was not a call: the text after it is read again.
      add_content(text.substr(0, marker_size_), emit);
      pos_ += marker_size_;
      state_ = State::Text;
      return Step::Continue;
    }
    if (section_end == 0 && !end) return Step::Wait;
    if (section_end == 0) {
      add_content(text, emit);  // the text ended inside the section
      pos_ = pending_.size();
    } else {
      decide(text.substr(0, section_end), text.substr(marker_size_, section_end - marker_size_ - close.size()), emit);
      pos_ += section_end;
    }
    state_ = State::Text;
    return Step::Continue;
  }

  void decide(std::string_view whole, std::string_view body, const ToolParseEventFn& emit) {
    Section read = read_section(format_, body, tools_);
    if (!read.ok) {
      add_content(whole, emit);
      return;
    }
    space_.clear();
    add_content(read.content, emit);
    for (SectionCall& call : read.calls) {
      const size_t index = next_index_++;
      std::string id = call.id.empty() ? "call_" + id_prefix_ + std::to_string(index) : std::move(call.id);
      emit({ToolParseEvent::Kind::CallStart, index, {}, std::move(id), std::move(call.name)});
      emit({ToolParseEvent::Kind::Arguments, index, std::move(call.arguments), {}, {}});
      emit({ToolParseEvent::Kind::CallEnd, index, {}, {}, {}});
    }
    after_call_ = true;
  }

  // Content, with its trailing whitespace held back: dropped if a call follows.
  void add_content(std::string_view text, const ToolParseEventFn& emit) {
    size_t body = text.size();
    while (body > 0 && is_space(text[body - 1])) --body;
    if (body == 0) {
      space_.append(text);
      return;
    }
    std::string piece = std::move(space_);
    piece.append(text.substr(0, body));
    space_.assign(text.substr(body));
    emit({ToolParseEvent::Kind::Content, 0, std::move(piece), {}, {}});
  }

  void flush_space(const ToolParseEventFn& emit) {
    if (space_.empty()) return;
    emit({ToolParseEvent::Kind::Content, 0, std::move(space_), {}, {}});
    space_.clear();
  }

  const ToolCallFormat& format_;
  const std::string id_prefix_;
  const json::Value tools_;
  State state_ = State::Start;
  std::string pending_;  // text not yet decided, from pos_
  size_t pos_ = 0;
  std::string space_;        // whitespace after content: dropped when a call follows
  bool after_call_ = false;  // whitespace right after a call is dropped
  size_t marker_size_ = 0;   // Section: the opening marker's length
  size_t scanned_ = 0;       // Section: how far its end has been looked for, from pos_
  JsonExtent extent_;
  size_t next_index_ = 0;
};

ToolCallStreamParser::ToolCallStreamParser(const ToolCallFormat& format, ToolParseOptions options)
    : reasoning_(options.reasoning_markers, options.reasoning_opened),
      parse_reasoning_(options.parse_reasoning),
      answer_(std::make_unique<Answer>(format, std::move(options.id_prefix), std::move(options.tools))) {}

ToolCallStreamParser::~ToolCallStreamParser() = default;

void ToolCallStreamParser::feed(std::string_view text, const ToolParseEventFn& emit) {
  if (!parse_reasoning_) return answer_->feed(text, emit);
  reasoning_.feed(text, [&](TextKind kind, const std::string& piece) {
    if (kind == TextKind::Reasoning) {
      emit({ToolParseEvent::Kind::Reasoning, 0, piece, {}, {}});
    } else {
      answer_->feed(piece, emit);
    }
    return true;
  });
}

void ToolCallStreamParser::finish(const ToolParseEventFn& emit) {
  if (parse_reasoning_) {
    reasoning_.finish([&](TextKind kind, const std::string& piece) {
      if (kind == TextKind::Reasoning) {
        emit({ToolParseEvent::Kind::Reasoning, 0, piece, {}, {}});
      } else {
        answer_->feed(piece, emit);
      }
      return true;
    });
  }
  answer_->finish(emit);
}

void apply_event(ParsedResponse& response, const ToolParseEvent& event) {
  switch (event.kind) {
    case ToolParseEvent::Kind::Content: response.content += event.text; break;
    case ToolParseEvent::Kind::Reasoning: response.reasoning_content += event.text; break;
    case ToolParseEvent::Kind::CallStart: response.tool_calls.push_back({event.id, event.name, {}}); break;
    case ToolParseEvent::Kind::Arguments: response.tool_calls.back().arguments += event.text; break;
    case ToolParseEvent::Kind::CallEnd: break;
  }
}

ParsedResponse parse_response(const ToolCallFormat& format, std::string_view text, const ToolParseOptions& options) {
  ParsedResponse response;
  ToolCallStreamParser parser(format, options);
  const auto apply = [&](const ToolParseEvent& event) { apply_event(response, event); };
  parser.feed(text, apply);
  parser.finish(apply);
  return response;
}

json::Value to_openai_message(const ParsedResponse& response) {
  json::Value message = json::Value::object();
  message.set("role", "assistant");
  message.set("content",
              response.content.empty() && !response.tool_calls.empty() ? json::Value() : json::Value(response.content));
  if (!response.reasoning_content.empty()) message.set("reasoning_content", response.reasoning_content);
  if (response.tool_calls.empty()) return message;
  json::Value calls = json::Value::array();
  for (const ToolCall& call : response.tool_calls) {
    json::Value function = json::Value::object();
    function.set("name", call.name).set("arguments", call.arguments);
    json::Value item = json::Value::object();
    item.set("id", call.id.value_or("")).set("type", "function").set("function", std::move(function));
    calls.push(std::move(item));
  }
  message.set("tool_calls", std::move(calls));
  return message;
}

}  // namespace peak::chat
