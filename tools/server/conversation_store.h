// The `conversation` extension's sessions: which slot holds which
// conversation, and the conversations no slot holds, saved to files.
//
// A conversation lives in at most one slot at a time. A request for it runs on
// that slot (it waits while another request has it); a slot taken for
// something else first saves the conversation it holds to a session file,
// from which a later request restores it into whatever slot it gets. At most
// max_conversations are kept: a new one forgets the least recently used
// conversation no slot holds, and removes its file.
//
// Locking. One mutex, mutex_, guards everything the store keeps: the
// conversations (their files, slots and ages), which conversation each slot
// holds, the directory of the files and the age clock. The order:
//  - mutex_ is taken inside SlotPool's lock (claim() runs from a
//    SlotPool::Score) and never the other way round: no method calls into the
//    pool while holding it;
//  - the session files are written, read and removed after it is released
//    (only the private directory is made under it, once, and each file is
//    created empty there when named), and so is everything done to a ChatSlot.
// A slot's ChatSlot is not guarded by mutex_: evict() and load() take the
// ChatSlot of slot `s` from the request holding `s` (its SlotPool lease), the
// one thread that may change it; claim() never touches a ChatSlot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "chat_slot.h"

namespace peak_server {

class ConversationStore {
 public:
  // What slot `s` holds, seen by a request for conversation `id` ("" none).
  enum class Claim {
    HoldsIt,        // the slot holds `id`
    HeldElsewhere,  // another slot holds `id`: only that one may run it
    HoldsNothing,   // the slot holds no conversation
    HoldsAnother,   // the slot holds another conversation (it would be saved away first)
  };

  // `dir`: where saved conversations go; "": a private temporary directory,
  // made when the first one is saved. `file_name` gives each saved
  // conversation's file its name (no directory, no extension); it is called
  // with mutex_ held, so it must not call back into the store. A name whose
  // file exists already fails that save (PeakError): no file is saved over.
  ConversationStore(size_t n_slots, size_t max_conversations, std::string dir, std::function<std::string()> file_name);
  // Removes the saved conversations and the private directory (no request
  // may be running).
  ~ConversationStore();
  ConversationStore(const ConversationStore&) = delete;
  ConversationStore& operator=(const ConversationStore&) = delete;

  Claim claim(size_t s, const std::string& id) const;
  // Saves the conversation `slot` (slot `s`) holds, if any, and unpins it.
  void evict(size_t s, ChatSlot& slot);
  // Puts conversation `id` into `slot` (slot `s`, holding none): restored from
  // its file, or new with `system`. When that throws, the slot is left
  // cleared and holding no conversation.
  void load(size_t s, ChatSlot& slot, const std::string& id, const std::optional<std::string>& system);

 private:
  struct Conversation {
    std::optional<std::string> system;
    std::string file;  // its saved session; "" while never saved
    long slot = -1;    // the slot holding it, or -1
    uint64_t last_used = 0;
  };

  // Forgets the least recently used conversation no slot holds; returns its
  // file ("" none) for the caller to remove outside the lock. mutex_ held.
  std::string forget_oldest();
  // The file `c` is saved to, named and created empty (and the private
  // directory made) on its first save. mutex_ held.
  const std::string& file_of(Conversation& c);

  const size_t max_conversations_;
  const std::function<std::string()> file_name_;

  mutable std::mutex mutex_;
  std::map<std::string, Conversation> conversations_;
  std::vector<std::string> slot_conversation_;  // per slot: the conversation it holds ("" none)
  std::string dir_;
  bool owns_dir_ = false;
  uint64_t clock_ = 0;  // ages for last_used
};

}  // namespace peak_server
