// peak bench --mmproj: how fast an image encoder (a vision-language model's
// projector file) turns one picture into its image tokens' embeddings: the
// picture (--image FILE, else a made-up gradient of the encoder's input size)
// decoded once, then encoded once to warm up and R times timed, resizing
// included. Reports seconds per image (mean ± sd), patches and image tokens
// per second, and the process's resident memory after loading and after
// encoding (the weights are mapped, so the first counts only what was read).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "input_file.h"
#include "text_format.h"

namespace {

struct ImageBenchOptions {
  std::vector<std::string> projectors;
  std::string image;  // empty: a gradient of the encoder's input size
  std::vector<int> threads;
  int repetitions = 5;
  std::string output = "md";
};

struct ImageResult {
  std::string projector, type, image;
  uint64_t size = 0, params = 0;
  int threads = 0;
  uint32_t patches = 0, tokens = 0;
  double seconds_mean = 0, seconds_sd = 0;
  long rss_loaded_kib = 0, rss_kib = 0, rss_peak_kib = 0;
};

void print_help() {
  std::printf(
      "usage: peak bench --mmproj FILE [--mmproj FILE2 ...] [--image FILE] [-t T] [-r 5] [-o md|csv|json]\n"
      "  Image encoding: one picture through a vision-language model's image encoder (its projector\n"
      "  file), resizing included; seconds per image, and the process's resident memory (RSS) after\n"
      "  loading the encoder, after encoding, and its peak.\n"
      "  --image FILE  a PNG or JPEG (default: a made-up gradient of the encoder's input size)\n"
      "  -t T          threads, a comma-separated list (default: every core)\n"
      "  -r N          timed runs after one warm-up run (default 5)\n"
      "  -o FORMAT     md (default), csv or json\n");
}

ImageBenchOptions parse(int argc, char** argv, bool* help) {
  ImageBenchOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "--mmproj")) {
      o.projectors.push_back(args.value(a));
    } else if (!std::strcmp(a, "--image")) {
      o.image = args.value(a);
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.threads = parse_list(a, args.value(a), 1, 64);
    } else if (!std::strcmp(a, "-r") || !std::strcmp(a, "--repetitions")) {
      o.repetitions = static_cast<int>(args.integer(a, 1, 1000));
    } else if (!std::strcmp(a, "-o") || !std::strcmp(a, "--output")) {
      o.output = args.value(a);
      if (o.output != "md" && o.output != "csv" && o.output != "json") {
        throw UsageError("option -o: unknown format '" + o.output + "' (md, csv, json)");
      }
    } else {
      throw UsageError(std::string("unknown option '") + a + "' for peak bench --mmproj");
    }
  }
  if (o.projectors.empty()) throw UsageError("no projector given (--mmproj FILE)");
  if (o.threads.empty()) o.threads = {static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  return o;
}

// The picture to encode: the file's, or a gradient of side x side pixels.
std::unique_ptr<peak_image, ImageDeleter> load_picture(const std::string& path, uint32_t side) {
  peak_image* image = nullptr;
  if (!path.empty()) {
    const std::string bytes = read_input_file(path, "image");
    check_status(peak_image_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &image));
  } else {
    std::vector<uint8_t> pixels(size_t{side} * side * 3);
    for (uint32_t y = 0; y < side; ++y) {
      for (uint32_t x = 0; x < side; ++x) {
        uint8_t* p = &pixels[(size_t{y} * side + x) * 3];
        p[0] = static_cast<uint8_t>(255 * x / side), p[1] = static_cast<uint8_t>(255 * y / side), p[2] = 128;
      }
    }
    check_status(peak_image_from_pixels(pixels.data(), side, side, 3, 0, &image));
  }
  return std::unique_ptr<peak_image, ImageDeleter>(image);
}

double time_encode(peak_image_encoder* encoder, const peak_image* image, std::vector<float>& out) {
  size_t n_floats = 0;
  const auto start = std::chrono::steady_clock::now();
  check_status(peak_image_encode(encoder, image, out.data(), out.size(), &n_floats));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ImageResult run_test(const std::string& path, const peak_projector* projector, const peak_projector_info& info,
                     const ImageBenchOptions& o, int threads, long rss_loaded_kib) {
  peak_image_encoder_params params = peak_image_encoder_default_params();
  params.n_threads = static_cast<size_t>(threads);
  peak_image_encoder* created = nullptr;
  check_status(peak_image_encoder_create(projector, &params, &created));
  const std::unique_ptr<peak_image_encoder, ImageEncoderDeleter> encoder(created);
  const auto picture = load_picture(o.image, info.image_size);
  uint32_t width = 0, height = 0;
  check_status(peak_image_get_size(picture.get(), &width, &height, nullptr));
  peak_picture_layout layout{};
  layout.struct_size = sizeof layout;
  check_status(peak_projector_picture_layout(projector, width, height, &layout));
  std::vector<float> out(size_t{layout.n_frames} * layout.tokens_per_frame * info.n_embd);
  time_encode(encoder.get(), picture.get(), out);  // warm-up
  std::vector<double> seconds;
  for (int run = 0; run < o.repetitions; ++run) seconds.push_back(time_encode(encoder.get(), picture.get(), out));

  struct stat st {};
  ::stat(path.c_str(), &st);
  ImageResult r;
  r.projector = model_label(path);
  r.type = dominant_type(path);
  r.image = o.image.empty() ? "gradient" : model_label(o.image);
  r.size = static_cast<uint64_t>(st.st_size);
  r.params = info.n_params;
  r.threads = threads;
  const uint32_t side = info.image_size / info.patch_size;
  r.patches = layout.n_frames * side * side;
  r.tokens = layout.n_frames * layout.tokens_per_frame;
  mean_sd(seconds, &r.seconds_mean, &r.seconds_sd);
  r.rss_loaded_kib = rss_loaded_kib;
  r.rss_kib = process_status_kib("VmRSS:");
  r.rss_peak_kib = process_status_kib("VmHWM:");
  return r;
}

void print_results(const std::vector<ImageResult>& results, const std::string& format) {
  if (format == "md") {
    std::printf(
        "| projector | type | size | params | threads | image | patches | tokens | s/image | patches/s | RSS loaded "
        "MiB "
        "| RSS MiB | peak RSS MiB |\n");
    std::printf("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const ImageResult& r : results) {
      std::printf("| %s | %s | %s | %.2f M | %d | %s | %u | %u | %.3f ± %.3f | %.1f | %.1f | %.1f | %.1f |\n",
                  r.projector.c_str(), r.type.c_str(), human_bytes(r.size).c_str(), static_cast<double>(r.params) / 1e6,
                  r.threads, r.image.c_str(), r.patches, r.tokens, r.seconds_mean, r.seconds_sd,
                  r.patches / r.seconds_mean, static_cast<double>(r.rss_loaded_kib) / 1024,
                  static_cast<double>(r.rss_kib) / 1024, static_cast<double>(r.rss_peak_kib) / 1024);
    }
  } else if (format == "csv") {
    std::printf(
        "projector_filename,projector_type,projector_size,projector_n_params,n_threads,image,n_patches,n_tokens,"
        "avg_seconds,stddev_seconds,rss_loaded_kib,rss_kib,rss_peak_kib\n");
    for (const ImageResult& r : results) {
      std::printf("%s,%s,%llu,%llu,%d,%s,%u,%u,%.4f,%.4f,%ld,%ld,%ld\n", r.projector.c_str(), r.type.c_str(),
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.params), r.threads,
                  r.image.c_str(), r.patches, r.tokens, r.seconds_mean, r.seconds_sd, r.rss_loaded_kib, r.rss_kib,
                  r.rss_peak_kib);
    }
  } else {
    std::printf("[\n");
    for (size_t i = 0; i < results.size(); ++i) {
      const ImageResult& r = results[i];
      std::printf(
          "  {\"projector_filename\": %s, \"projector_type\": %s, \"projector_size\": %llu, "
          "\"projector_n_params\": %llu, \"n_threads\": %d, \"image\": %s, \"n_patches\": %u, \"n_tokens\": %u, "
          "\"avg_seconds\": %.4f, \"stddev_seconds\": %.4f, \"rss_loaded_kib\": %ld, \"rss_kib\": %ld, "
          "\"rss_peak_kib\": %ld}%s\n",
          json_string(r.projector).c_str(), json_string(r.type).c_str(), static_cast<unsigned long long>(r.size),
          static_cast<unsigned long long>(r.params), r.threads, json_string(r.image).c_str(), r.patches, r.tokens,
          r.seconds_mean, r.seconds_sd, r.rss_loaded_kib, r.rss_kib, r.rss_peak_kib, i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
  }
}

}  // namespace

int run_image_bench(int argc, char** argv) {
  bool help = false;
  const ImageBenchOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  std::vector<ImageResult> results;
  for (const std::string& path : o.projectors) {
    peak_projector* loaded = nullptr;
    check_status(peak_projector_load(path.c_str(), nullptr, &loaded));
    const std::unique_ptr<peak_projector, ProjectorDeleter> projector(loaded);
    const long rss_loaded_kib = process_status_kib("VmRSS:");
    peak_projector_info info{};
    info.struct_size = sizeof info;
    check_status(peak_projector_get_info(projector.get(), &info));
    for (int t : o.threads) results.push_back(run_test(path, projector.get(), info, o, t, rss_loaded_kib));
  }
  print_results(results, o.output);
  return 0;
}
