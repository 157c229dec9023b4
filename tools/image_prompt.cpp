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

// The text before frame `index` of `picture` (index n_frames: after the last).
std::string frame_text(const peak_projector* projector, const EncodedPicture& picture, uint32_t index) {
  size_t length = 0;
  const peak_status asked =
      peak_projector_frame_text(projector, picture.width, picture.height, index, nullptr, 0, &length);
  if (asked != PEAK_ERR_BUFFER_TOO_SMALL) check_status(asked);
  std::string text(length + 1, '\0');
  check_status(
      peak_projector_frame_text(projector, picture.width, picture.height, index, text.data(), text.size(), &length));
  text.resize(length);
  return text;
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

EncodedPicture encode_image_file(peak_image_encoder* encoder, const std::string& path) {
  const std::string bytes = read_input_file(path, "image");
  peak_image* decoded = nullptr;
  const peak_status st = peak_image_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &decoded);
  if (st != PEAK_OK) throw CommandError(path + ": " + peak_last_error());
  const std::unique_ptr<peak_image, ImageDeleter> image(decoded);
  EncodedPicture picture;
  check_status(peak_image_get_size(image.get(), &picture.width, &picture.height, nullptr));
  size_t n_floats = 0;
  const peak_status asked = peak_image_encode(encoder, image.get(), nullptr, 0, &n_floats);
  if (asked != PEAK_ERR_BUFFER_TOO_SMALL) check_status(asked);
  picture.rows.resize(n_floats);
  check_status(peak_image_encode(encoder, image.get(), picture.rows.data(), picture.rows.size(), &n_floats));
  return picture;
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
    const EncodedPicture picture = encode_image_file(encoder.get(), image_paths[i]);
    times->encode_seconds += seconds_from(encode_start);
    peak_picture_layout layout{};
    layout.struct_size = sizeof layout;
    check_status(peak_projector_picture_layout(projector.get(), picture.width, picture.height, &layout));

    const auto eval_start = std::chrono::steady_clock::now();
    eval_text(m, pieces[i], i == 0, /*special=*/false);
    for (uint32_t frame = 0; frame <= layout.n_frames; ++frame) {
      eval_text(m, frame_text(projector.get(), picture, frame), false, /*special=*/true);
      if (frame == layout.n_frames) break;
      const float* rows = picture.rows.data() + size_t{frame} * layout.tokens_per_frame * info.n_embd;
      // A frame the language model places by row and column (Qwen2.5-VL's) or one whose tokens follow one another.
      check_status(
          layout.token_cols > 0
              ? peak_context_eval_picture(m.context.get(), rows, layout.tokens_per_frame, layout.token_cols)
              : peak_context_eval_embeddings(m.context.get(), rows, layout.tokens_per_frame, info.bidirectional));
    }
    times->eval_seconds += seconds_from(eval_start);
    times->image_tokens += size_t{layout.n_frames} * layout.tokens_per_frame;
  }
  return pieces.back();
}
