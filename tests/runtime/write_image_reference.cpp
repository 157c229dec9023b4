// Writes the tiny Gemma 3 image encoder and the naive double-precision
// reference's embeddings (tests/model/vision_reference.h) of the test picture
// PIL resized to its 32 x 32 input, for the C API's image test
// (tests/capi/test_capi_image.c), which checks that peak_image_encode gives
// them from the picture's PNG (resized by peak) and from the resized pixels:
//   write_image_reference <projector.gguf> <resized.ppm> <reference.txt> [<projector64.gguf> [<tiles64.gguf>]]
// reference.txt: the float count, then the floats (token by token).
// projector64.gguf: the same encoder made 64 wide at its output, for the CLI's
// tests on stories260K (tests/tools). tiles64.gguf: a tiny SmolVLM encoder 64
// wide that cuts pictures into tiles of 32 pixels, its longest edge 96.
#include <cstdio>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/synth.h"
#include "tiny_models.h"
#include "vision_reference.h"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr,
                 "usage: write_image_reference <projector.gguf> <resized.ppm> <reference.txt> [<projector64.gguf> "
                 "[<tiles64.gguf>]]\n");
    return 2;
  }
  peak::model::SynthOptions opt;
  opt.seed = 7;
  opt.varied_norms = true;
  peak::model::SynthSpec spec = peak::test::tiny_spec(peak::model::Arch::Gemma3Vision);
  peak::model::write_synth_model(spec, opt, argv[1]);
  if (argc >= 5) {
    spec.n_embd_out = 64;  // stories260K's width
    peak::model::write_synth_model(spec, opt, argv[4]);
  }
  if (argc == 6) {
    peak::model::SynthSpec tiles = peak::test::tiny_spec(peak::model::Arch::Idefics3Vision);
    tiles.n_embd_out = 64;
    tiles.longest_edge = 96;
    peak::model::write_synth_model(tiles, opt, argv[5]);
  }
  const auto file = peak::gguf::GgufFile::open(argv[1]);

  // A binary PPM of 32 x 32 (make_vision.py's header: "P6\n32 32\n255\n").
  std::string bytes(64 * 1024, '\0');
  std::FILE* ppm = std::fopen(argv[2], "rb");
  bytes.resize(ppm ? std::fread(bytes.data(), 1, bytes.size(), ppm) : 0);
  if (ppm) std::fclose(ppm);
  const std::string header = "P6\n32 32\n255\n";
  if (bytes.compare(0, header.size(), header) != 0 || bytes.size() != header.size() + 32 * 32 * 3) {
    std::fprintf(stderr, "%s: not the 32 x 32 binary PPM expected\n", argv[2]);
    return 1;
  }
  const auto* rgb = reinterpret_cast<const uint8_t*>(bytes.data() + header.size());
  const std::vector<double> embeddings = peak::test::image_embeddings_reference(
      *file, peak::test::normalise_reference(*file, rgb, 32, 32), nullptr, nullptr);

  std::FILE* f = std::fopen(argv[3], "w");
  if (!f) {
    std::perror(argv[3]);
    return 1;
  }
  std::fprintf(f, "%zu\n", embeddings.size());
  for (const double x : embeddings) std::fprintf(f, "%.9g\n", x);
  return std::fclose(f) == 0 ? 0 : 1;
}
