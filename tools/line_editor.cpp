#include "line_editor.h"

#include <utility>

std::string LineEditor::start_new_line() {
  std::string old = line_.text();
  line_.clear();
  history_.stop_browsing();
  return old;
}

void LineEditor::kill(std::string killed, bool backward) {
  killing_ = true;
  if (!after_kill_) killed_.clear();
  killed_ = backward ? killed + killed_ : killed_ + killed;
}

EditResult LineEditor::apply(const Key& key) {
  const bool second_interrupt = interrupted_;
  interrupted_ = key.code == KeyCode::Interrupt;
  after_kill_ = killing_;
  killing_ = false;
  switch (key.code) {
    case KeyCode::Text:
    case KeyCode::Paste: line_.insert(key.text); break;
    case KeyCode::Enter: {
      const std::string& text = line_.text();
      if (!text.empty() && text.back() == '\\') {
        std::string continued = text;
        continued.back() = '\n';
        line_.assign(std::move(continued));
        break;
      }
      line_.move_to_end();
      return EditResult::Submitted;
    }
    case KeyCode::InsertNewline: line_.insert("\n"); break;
    case KeyCode::Backspace: line_.erase_before(); break;
    case KeyCode::Delete: line_.erase_at(); break;
    case KeyCode::Left: line_.move_left(); break;
    case KeyCode::Right: line_.move_right(); break;
    case KeyCode::WordLeft: line_.move_word_left(); break;
    case KeyCode::WordRight: line_.move_word_right(); break;
    case KeyCode::Home: line_.move_line_start(); break;
    case KeyCode::End: line_.move_line_end(); break;
    case KeyCode::Up:
      if (const std::string* older = history_.older(line_.text())) line_.assign(*older);
      break;
    case KeyCode::Down:
      if (const std::string* newer = history_.newer(line_.text())) line_.assign(*newer);
      break;
    case KeyCode::KillWordBefore: kill(line_.kill_word_before(), true); break;
    case KeyCode::KillAlnumWordBefore: kill(line_.kill_alnum_word_before(), true); break;
    case KeyCode::KillWordAfter: kill(line_.kill_word_after(), false); break;
    case KeyCode::KillToLineStart: kill(line_.kill_to_line_start(), true); break;
    case KeyCode::KillToLineEnd: kill(line_.kill_to_line_end(), false); break;
    case KeyCode::Yank: line_.insert(killed_); break;
    case KeyCode::ClearScreen: return EditResult::ClearScreen;
    case KeyCode::Interrupt:
      if (second_interrupt) return EditResult::Exit;
      line_.move_to_end();
      return EditResult::Interrupted;
    case KeyCode::EndOfFile:
      if (line_.empty()) return EditResult::Exit;
      line_.erase_at();
      break;
    case KeyCode::Suspend: return EditResult::Suspend;
    case KeyCode::Ignored: break;
  }
  return EditResult::Editing;
}
