#include "image_prompt.h"

#include <chrono>
#include <memory>

#include "input_file.h"

namespace {

double seconds_from(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The prompt's text pieces around its markers: one more than the markers.
std::vector<std::string> pieces_of(const std::string& prompt) {
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t at; (at = prompt.find(kMediaMarker, start)) != std::string::npos;) {
    pieces.push_back(prompt.substr(start, at - start));
    start = at + std::char_traits<char>::length(kMediaMarker);
  }
  pieces.push_back(prompt.substr(start));
  return pieces;
}

// Appends `text`'s tokens (special tokens spelled by name only when `special`)
// to the context and tells the sampler; BOS when `first`.
void eval_text(LoadedModel& m, const std::string& text, bool first, bool special) {
  if (text.empty() && !first) return;
  const std::vector<int32_t> tokens = tokenize(m.model.get(), text, first, special);
  if (tokens.empty()) return;
  check_status(peak_context_eval(m.context.get(), tokens.data(), tokens.size()));
  for (const int32_t t : tokens) check_status(peak_sampler_accept_prompt(m.sampler.get(), t));
}

}  // namespace

std::unique_ptr<peak_projector, ProjectorDeleter> load_projector(const std::string& mmproj,
                                                                 const peak_model_info& model) {
  peak_projector* loaded = nullptr;
  check_status(peak_projector_load(mmproj.c_str(), nullptr, &loaded));
  std::unique_ptr<peak_projector, ProjectorDeleter> projector(loaded);
  peak_projector_info info{};
  info.struct_size = sizeof info;
  check_status(peak_projector_get_info(projector.get(), &info));
  if (info.n_embd != model.n_embd) {
    throw CommandError(mmproj + ": its image tokens are " + std::to_string(info.n_embd) + " wide and the model's " +
                       std::to_string(model.n_embd) + ": it is not this model's projector");
  }
  return projector;
}

std::unique_ptr<peak_image_encoder, ImageEncoderDeleter> create_image_encoder(peak_projector* projector,
                                                                              size_t n_threads) {
  peak_image_encoder_params params = peak_image_encoder_default_params();
  params.n_threads = n_threads;
  peak_image_encoder* created = nullptr;
  check_status(peak_image_encoder_create(projector, &params, &created));
  return std::unique_ptr<peak_image_encoder, ImageEncoderDeleter>(created);
}

std::vector<float> encode_image_file(peak_image_encoder* encoder, const peak_projector_info& info,
                                     const std::string& path) {
  const std::string bytes = read_input_file(path, "image");
  peak_image* decoded = nullptr;
  const peak_status st = peak_image_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &decoded);
  if (st != PEAK_OK) throw CommandError(path + ": " + peak_last_error());
  const std::unique_ptr<peak_image, ImageDeleter> image(decoded);
  std::vector<float> rows(static_cast<size_t>(info.n_image_tokens) * info.n_embd);
  size_t n_floats = 0;
  check_status(peak_image_encode(encoder, image.get(), rows.data(), rows.size(), &n_floats));
  rows.resize(n_floats);
  return rows;
}

std::string eval_prompt_with_images(LoadedModel& m, const std::string& prompt, const std::string& mmproj,
                                    const std::vector<std::string>& image_paths, size_t n_threads,
                                    ImagePromptTimes* times) {
  std::vector<std::string> pieces = pieces_of(prompt);
  if (pieces.size() == 1) {
    pieces.insert(pieces.begin(), image_paths.size(), std::string());  // the images first
  } else if (pieces.size() != image_paths.size() + 1) {
    throw UsageError("the prompt has " + std::to_string(pieces.size() - 1) + " " + kMediaMarker + " markers for " +
                     std::to_string(image_paths.size()) + " images (give one per image, or none: the images first)");
  }
  const std::unique_ptr<peak_projector, ProjectorDeleter> projector = load_projector(mmproj, m.info);
  peak_projector_info info{};
  info.struct_size = sizeof info;
  check_status(peak_projector_get_info(projector.get(), &info));
  const std::unique_ptr<peak_image_encoder, ImageEncoderDeleter> encoder =
      create_image_encoder(projector.get(), n_threads);

  for (size_t i = 0; i < image_paths.size(); ++i) {
    const auto encode_start = std::chrono::steady_clock::now();
    const std::vector<float> rows = encode_image_file(encoder.get(), info, image_paths[i]);
    times->encode_seconds += seconds_from(encode_start);

    const auto eval_start = std::chrono::steady_clock::now();
    eval_text(m, pieces[i], i == 0, /*special=*/false);
    eval_text(m, info.image_prefix, false, /*special=*/true);
    check_status(peak_context_eval_embeddings(m.context.get(), rows.data(), info.n_image_tokens, info.bidirectional));
    eval_text(m, info.image_suffix, false, /*special=*/true);
    times->eval_seconds += seconds_from(eval_start);
    times->image_tokens += info.n_image_tokens;
  }
  return pieces.back();
}
