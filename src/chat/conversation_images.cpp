#include "chat/conversation_images.h"

#include <algorithm>
#include <stdexcept>

#include "model/vision.h"
#include "runtime/context.h"

namespace peak::chat {

size_t count_image_markers(const std::string& text) {
  const std::string marker = kImageMarker;
  size_t n = 0;
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + marker.size())) ++n;
  return n;
}

std::string text_for_summary(const std::string& text) {
  const std::string marker = kImageMarker;
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, from)) {
    out.append(text, from, at - from).append(kImageInSummary);
    from = at + marker.size();
  }
  return out.append(text, from, std::string::npos);
}

ImagePtr find_image(const ImageList& images, uint32_t id) {
  for (const ImagePtr& image : images) {
    if (image->id == id) return image;
  }
  return nullptr;
}

SessionImage frame_image(model::Arch projector, int64_t n_tokens, int64_t grid_rows, int64_t grid_cols,
                         int64_t max_frame_rows, int64_t token_cols) {
  const model::ArchSpec& spec = model::arch_spec(projector);
  SessionImage image;
  image.n_tokens = n_tokens;
  image.bidirectional = spec.image_bidirectional;
  image.grid_rows = grid_rows;
  image.grid_cols = grid_cols;
  image.texts = model::frame_texts(spec, grid_rows, grid_cols);
  const int64_t n_frames = image.n_frames();
  if (n_tokens % n_frames != 0) {
    throw std::invalid_argument("an image of " + std::to_string(n_tokens) + " tokens cannot be " +
                                std::to_string(n_frames) + " frames of equal length (" + std::to_string(grid_rows) +
                                " x " + std::to_string(grid_cols) + " tiles and the overview)");
  }
  const bool sized = spec.tiling == model::VisionTiling::SmartResize;
  if (sized ? token_cols < 1 || image.rows_per_frame() % token_cols != 0 : token_cols != 0) {
    throw std::invalid_argument(
        sized ? "a picture of " + std::to_string(n_tokens) + " tokens is not rows of " + std::to_string(token_cols) +
                    " across; this projector sizes each picture, so its tokens' grid comes from the picture's size"
              : "this projector's pictures take no grid of tokens (" + std::to_string(token_cols) + " across)");
  }
  image.token_cols = token_cols;
  if (image.bidirectional && image.rows_per_frame() > max_frame_rows) {
    throw std::invalid_argument("an image of " + std::to_string(image.rows_per_frame()) +
                                " tokens attending to each other must fit one batch: n_batch is " +
                                std::to_string(max_frame_rows));
  }
  return image;
}

void add_images(ImageList& to, const ImageList& from) {
  for (const ImagePtr& image : from) {
    if (!find_image(to, image->id)) to.push_back(image);
  }
}

CellPositions cell_positions(const std::vector<int32_t>& tokens, const ImageList& images, bool places) {
  CellPositions out;
  out.positions.reserve(tokens.size());
  if (places) out.places.reserve(tokens.size());
  int32_t next = 0;           // the position the next token takes
  int32_t picture_start = 0;  // the placed picture's position
  for (const int32_t t : tokens) {
    runtime::PicturePlace place;
    int32_t position = next;
    if (places && is_image_token(t)) {
      const ImagePtr image = find_image(images, image_of(t));
      if (image && image->token_cols > 0) {
        const int64_t row = image_row(t);
        if (row == 0) picture_start = next;
        position = picture_start;
        place = {static_cast<int32_t>(row / image->token_cols), static_cast<int32_t>(row % image->token_cols)};
      }
    }
    out.positions.push_back(position);
    if (places) out.places.push_back(place);
    next = position + place.reach() + 1;
  }
  return out;
}

std::vector<int32_t> text_tokens(const std::vector<int32_t>& tokens) {
  std::vector<int32_t> text;
  text.reserve(tokens.size());
  std::copy_if(tokens.begin(), tokens.end(), std::back_inserter(text), [](int32_t t) { return !is_image_token(t); });
  return text;
}

void evaluate_cells(runtime::Context& ctx, const int32_t* tokens, int64_t n, const ImageList& images,
                    const core::Cancellation* cancel) {
  if (std::none_of(tokens, tokens + n, is_image_token)) {
    ctx.eval(tokens, n, nullptr, cancel);
    return;
  }
  // Several calls: what the first ones appended goes again when a later one fails.
  const int64_t used_before = ctx.kv().used();
  const std::vector<float> logits_before(ctx.logits(), ctx.logits() + ctx.n_vocab());
  try {
    for (int64_t at = 0; at < n;) {
      int64_t end = at + 1;
      if (!is_image_token(tokens[at])) {
        while (end < n && !is_image_token(tokens[end])) ++end;
        ctx.eval(tokens + at, end - at, nullptr, cancel);
      } else {
        // One image's consecutive rows.
        const uint32_t id = image_of(tokens[at]);
        const ImagePtr image = find_image(images, id);
        const int64_t first = image_row(tokens[at]);
        if (!image || first >= image->n_tokens) {
          throw std::invalid_argument("the conversation's tokens hold an image (" + std::to_string(id) +
                                      ") the session has no rows for");
        }
        while (end < n && is_image_token(tokens[end]) && image_of(tokens[end]) == id &&
               image_row(tokens[end]) == first + (end - at) && image_row(tokens[end]) < image->n_tokens)
          ++end;
        const int64_t cols = ctx.kv().keeps_places() ? image->token_cols : 0;
        if (cols > 0 && first != 0) {
          throw std::invalid_argument("a picture placed by rows and columns is evaluated from its first token, not " +
                                      std::to_string(first));
        }
        ctx.eval_embeddings(image->rows.data() + first * image->n_embd, end - at, image->bidirectional, cancel, cols);
      }
      at = end;
    }
  } catch (...) {
    ctx.drop_last(ctx.kv().used() - used_before, logits_before.data());
    throw;
  }
}

}  // namespace peak::chat
