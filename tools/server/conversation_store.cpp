#include "conversation_store.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace peak_server {

namespace {

// Creates `path` empty, so that no other conversation is given it; an
// existing file of that name is refused, never saved over.
void create_new_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw PeakError(PEAK_ERR_IO, "cannot create " + path + " for a conversation: " + std::strerror(errno));
  }
  ::close(fd);
}

}  // namespace

ConversationStore::ConversationStore(size_t n_slots, size_t max_conversations, std::string dir,
                                     std::function<std::string()> file_name)
    : max_conversations_(max_conversations),
      file_name_(std::move(file_name)),
      slot_conversation_(n_slots),
      dir_(std::move(dir)) {}

ConversationStore::~ConversationStore() {
  for (const auto& [id, c] : conversations_)
    if (!c.file.empty()) ::unlink(c.file.c_str());
  if (owns_dir_) ::rmdir(dir_.c_str());
}

ConversationStore::Claim ConversationStore::claim(size_t s, const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!id.empty()) {
    if (slot_conversation_[s] == id) return Claim::HoldsIt;
    const auto it = conversations_.find(id);
    if (it != conversations_.end() && it->second.slot >= 0) return Claim::HeldElsewhere;
  }
  return slot_conversation_[s].empty() ? Claim::HoldsNothing : Claim::HoldsAnother;
}

const std::string& ConversationStore::file_of(Conversation& c) {
  if (!c.file.empty()) return c.file;
  if (dir_.empty()) {
    std::string tmpl = (std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    tmpl += "/peak-serve-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw PeakError(PEAK_ERR_IO, "cannot create a directory for conversations");
    dir_ = tmpl;
    owns_dir_ = true;
  }
  std::string file = dir_ + "/" + file_name_() + ".pkss";
  create_new_file(file);
  c.file = std::move(file);
  return c.file;
}

void ConversationStore::evict(size_t s, ChatSlot& slot) {
  if (slot.conversation().empty()) return;
  std::string file;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = conversations_.find(slot.conversation());
    if (it != conversations_.end()) {
      file = file_of(it->second);
      it->second.slot = -1;
    }
    slot_conversation_[s].clear();
  }
  if (!file.empty()) slot.save(file);
  slot.set_conversation("");
}

std::string ConversationStore::forget_oldest() {
  auto oldest = conversations_.end();
  for (auto c = conversations_.begin(); c != conversations_.end(); ++c)
    if (c->second.slot < 0 && (oldest == conversations_.end() || c->second.last_used < oldest->second.last_used))
      oldest = c;
  if (oldest == conversations_.end()) return "";
  std::string file = std::move(oldest->second.file);
  conversations_.erase(oldest);
  return file;
}

void ConversationStore::load(size_t s, ChatSlot& slot, const std::string& id,
                             const std::optional<std::string>& system) {
  std::optional<std::string> saved_system;
  std::string file, dropped_file;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = conversations_.find(id);
    if (it == conversations_.end()) {
      if (conversations_.size() >= max_conversations_) dropped_file = forget_oldest();
      it = conversations_.emplace(id, Conversation{system, "", -1, 0}).first;
    }
    saved_system = it->second.system;
    file = it->second.file;
    it->second.slot = static_cast<long>(s);
    it->second.last_used = ++clock_;
    slot_conversation_[s] = id;
  }
  if (!dropped_file.empty()) ::unlink(dropped_file.c_str());
  try {
    if (!file.empty()) {
      slot.restore(file, saved_system);
    } else {
      slot.prepare_chat(saved_system, "", {});
    }
  } catch (...) {
    // The slot must not pass for this conversation's: the next eviction would
    // save what it holds (another conversation's turns) over the saved file.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot_conversation_[s].clear();
      auto it = conversations_.find(id);
      if (it != conversations_.end()) it->second.slot = -1;
    }
    slot.clear();
    throw;
  }
  slot.set_conversation(id);
}

}  // namespace peak_server
