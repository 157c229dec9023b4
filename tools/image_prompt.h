// Images in a prompt (peak run --mmproj FILE --image FILE ...): each image
// takes the place of a <__media__> marker in the prompt (llama.cpp's marker),
// or, when the prompt has none, the images come first. An image enters as its
// projector says the language model takes it: for each of its frames the text
// before it and its tokens' embeddings from the image encoder, then the text
// after the last.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model_session.h"

constexpr const char* kMediaMarker = "<__media__>";

struct ImagePromptTimes {
  size_t image_tokens = 0;  // all images'
  double encode_seconds = 0;
  double eval_seconds = 0;  // the text before the last piece and the images' tokens
};

// Loads the projector file `mmproj` (peak_projector_load) for `model`:
// CommandError when its image tokens are of another width than the model's
// (another model's projector), naming both widths.
std::unique_ptr<peak_projector, ProjectorDeleter> load_projector(const std::string& mmproj,
                                                                 const peak_model_info& model);

// A projector's image encoder on n_threads threads (0: every fast core).
std::unique_ptr<peak_image_encoder, ImageEncoderDeleter> create_image_encoder(peak_projector* projector,
                                                                              size_t n_threads);

// A picture file's image tokens, every frame's (peak_image_encode), and its
// size, which gives its frames (peak_projector_picture_layout).
struct EncodedPicture {
  std::vector<float> rows;
  uint32_t width = 0;
  uint32_t height = 0;
};

// The picture file `path` (PNG or JPEG) encoded by `encoder`; CommandError
// naming the file when it is no picture peak can read.
EncodedPicture encode_image_file(peak_image_encoder* encoder, const std::string& path);

// Evaluates `prompt` in m's context up to its last text piece, with the
// images (`image_paths`, PNG or JPEG) encoded by the projector file `mmproj`
// in their places (BOS first, as the model asks); returns the last text piece,
// which peak_generate then appends (without BOS). Throws UsageError for a
// marker count other than 0 or the number of images, CommandError for a
// projector of another width than the model's or an image it cannot read.
// The encoder runs on n_threads threads (0: every fast core).
std::string eval_prompt_with_images(LoadedModel& m, const std::string& prompt, const std::string& mmproj,
                                    const std::vector<std::string>& image_paths, size_t n_threads,
                                    ImagePromptTimes* times);
