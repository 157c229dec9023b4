#include "model/model.h"

#include <algorithm>
#include <stdexcept>

#include "core/thread_pool.h"
#include "log/log.h"
#include "model/model_error.h"
#include "model/tensor_check.h"
#include "model/weight_repack.h"

namespace peak::model {

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options) {
  return load(io::FileSource::path(path), options);
}

void Model::check_source(const io::FileSource& source, const LoadOptions& options) {
  if (options.n_threads < 0 || options.n_threads > kMaxLoadThreads) {
    throw std::invalid_argument("n_threads must be between 0 (automatic) and " + std::to_string(kMaxLoadThreads));
  }
  if (source.is_region() && options.use_mmap && source.offset() % kMappedRegionAlignment != 0) {
    throw std::invalid_argument(source.name() + ": a mapped model must start at a multiple of " +
                                std::to_string(kMappedRegionAlignment) +
                                " bytes, so that its tensors stay aligned (align the file that embeds it, as "
                                "zipalign does, or read it into memory instead of mapping it)");
  }
}

std::unique_ptr<Model> Model::load(const io::FileSource& source, const LoadOptions& options) {
  check_source(source, options);
  io::MapOptions map;
  map.use_mmap = options.use_mmap;
  map.lock = options.use_mlock;
  std::unique_ptr<Model> m(new Model());
  m->read_layout(source, map, /*check_values=*/true);
  if (options.use_mlock && !m->file_->mapping()->is_locked()) {
    log::warn(source.name() + ": the weights could not be locked in RAM (RLIMIT_MEMLOCK is too low?); they stay "
              "unlocked and may be paged out");
  }
  if (options.check_tensors) require_all_finite(*m->file_);
  m->tokenizer_ = tokenizer::Tokenizer::from_gguf(*m->file_);
  if (m->tokenizer_->n_vocab() != m->hparams_.n_vocab) {
    throw InvalidModel("the tokenizer has " + std::to_string(m->tokenizer_->n_vocab()) +
                             " tokens but the embedding matrix has " + std::to_string(m->hparams_.n_vocab) + " rows");
  }

  // Page the weights in ahead of the first token: those read as stored by a
  // hint per tensor, then those the kernels read faster in their own layout by
  // repacking them on several threads. Progress counts the bytes done. A
  // background repacking starts once the rest is ready; until it publishes a
  // matrix, the first tokens read its stored rows, hinted here too.
  const gguf::GgufFile& f = *m->file_;
  if (options.repack_weights) m->repacker_ = std::make_unique<WeightRepacker>(m->weights_, f);
  WeightRepacker* repacker = options.repack_in_background ? nullptr : m->repacker_.get();
  const uint64_t total = m->weight_bytes_;
  const auto fraction = [total](uint64_t done) {
    return total ? static_cast<float>(done) / static_cast<float>(total) : 1.0f;
  };
  uint64_t done = 0;
  if (options.progress && !options.progress(0.0f)) throw LoadCancelled();
  for (size_t i = 0; i < f.n_tensors(); ++i) {
    const gguf::TensorInfo& t = f.tensor(i);
    if (repacker && repacker->chosen(t)) continue;
    if (f.mapping()) {
      f.mapping()->prefetch(static_cast<size_t>(f.data_offset() + t.offset), static_cast<size_t>(t.n_bytes));
    }
    done += t.n_bytes;
    if (options.progress && !options.progress(fraction(done))) throw LoadCancelled();
  }
  if (repacker) {
    const int n_threads =
        options.n_threads > 0 ? options.n_threads : std::min(core::hardware_threads(), kMaxLoadThreads);
    const bool finished = repacker->run(n_threads, [&](uint64_t repacked) {
      return !options.progress || options.progress(fraction(done + repacked));
    });
    if (!finished) throw LoadCancelled();
  } else if (m->repacker_) {
    m->repacker_->start();
  }
  if (log::enabled(log::Level::Info)) {
    log::info(source.name() + ": " + arch_name(m->hparams_.arch) + ", " + std::to_string(f.n_tensors()) +
              " tensors, " + std::to_string(total) + " bytes " + (f.mapping()->is_mapped() ? "mapped" : "read") +
              (m->repacked_bytes() > 0 ? ", " + std::to_string(m->repacked_bytes()) + " bytes of matrices " +
                                             (repacker ? "repacked" : "being repacked in the background")
                                       : ""));
  }
  return m;
}

std::unique_ptr<Model> Model::load_layout(const io::FileSource& source) {
  std::unique_ptr<Model> m(new Model());
  m->read_layout(source, io::MapOptions{}, /*check_values=*/false);  // mapped: only the metadata's pages are read
  return m;
}

void Model::read_layout(const io::FileSource& source, const io::MapOptions& map, bool check_values) {
  file_ = gguf::GgufFile::open(source, map);
  hparams_ = read_hparams(*file_);
  weights_ = bind_weights(*file_, hparams_, check_values);
  for (size_t i = 0; i < file_->n_tensors(); ++i) {
    n_params_ += static_cast<uint64_t>(file_->tensor(i).n_elements());
    weight_bytes_ += file_->tensor(i).n_bytes;
  }
}

const tokenizer::Tokenizer& Model::tokenizer() const {
  if (!tokenizer_) throw std::logic_error("a model's layout (Model::load_layout) has no tokenizer");
  return *tokenizer_;
}

std::shared_ptr<const sampling::GrammarVocabulary> Model::grammar_vocabulary() const {
  const tokenizer::Tokenizer& tok = tokenizer();
  const std::lock_guard<std::mutex> lock(grammar_vocabulary_mutex_);
  if (!grammar_vocabulary_) {
    grammar_vocabulary_ = sampling::GrammarVocabulary::from_tokenizer(tok, static_cast<int32_t>(hparams_.n_vocab));
  }
  return grammar_vocabulary_;
}

uint64_t Model::repacked_bytes() const { return repacker_ ? repacker_->bytes() : 0; }

Model::~Model() = default;

bool Model::repack_finished() const { return !repacker_ || repacker_->finished(); }

void Model::wait_for_repack() const {
  if (repacker_) repacker_->wait();
}

Model::ForwardPass::ForwardPass(const Model& m) : repacker_(m.repacker_.get()) {
  if (repacker_) repacker_->begin_reads();
}

Model::ForwardPass::~ForwardPass() {
  if (repacker_) repacker_->end_reads();
}

namespace {
std::string string_or_empty(const gguf::GgufFile& f, const std::string& key) {
  const auto v = f.find(key);
  return v && v->type() == gguf::ValueType::String ? std::string(v->str()) : std::string();
}
}  // namespace

std::string Model::name() const { return string_or_empty(*file_, "general.name"); }
std::string Model::chat_template() const { return string_or_empty(*file_, "tokenizer.chat_template"); }
std::string Model::named_chat_template(const std::string& name) const {
  return string_or_empty(*file_, "tokenizer.chat_template." + name);
}

}  // namespace peak::model
