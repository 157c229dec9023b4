// Pictures, projectors and image encoders (peak.Image, peak.Projector,
// peak.ImageEncoder): a picture from a file's bytes or from pixels, in a Java
// array or a direct buffer; a projector by path or from a region of an open
// file; a picture's embeddings.
#include <jni.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <peak/peak.h>

#include "file_load.h"
#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

namespace {

peak_image* image_of(jlong handle) { return from_handle<peak_image>(handle); }
peak_projector* projector_of(jlong handle) { return from_handle<peak_projector>(handle); }
peak_image_encoder* encoder_of(jlong handle) { return from_handle<peak_image_encoder>(handle); }

// A picture's width or height from Java; PeakException (INVALID_ARGUMENT) naming it when negative.
bool picture_side(JNIEnv* env, jint value, const char* what, uint32_t* side) {
  if (value >= 0) {
    *side = static_cast<uint32_t>(value);
    return true;
  }
  throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, std::string("the picture's ") + what + " is " + std::to_string(value));
  return false;
}

// [offset, offset + length) inside `capacity` bytes of `what`; else throws
// IndexOutOfBoundsException saying so.
bool in_bounds(JNIEnv* env, jlong capacity, jint offset, jint length, const char* what) {
  if (offset >= 0 && length >= 0 && jlong{offset} + length <= capacity) return true;
  jclass cls = env->FindClass("java/lang/IndexOutOfBoundsException");
  if (!cls) return false;
  const std::string message = std::string(what) + ": offset " + std::to_string(offset) + " and length " +
                              std::to_string(length) + " are not a range of its " + std::to_string(capacity) + " bytes";
  env->ThrowNew(cls, message.c_str());  // ASCII: modified UTF-8 is plain UTF-8 here
  env->DeleteLocalRef(cls);
  return false;
}

// The bytes [offset, offset + length) of a Java byte[] (pinned or copied
// while this lives, never written back) or of a direct ByteBuffer (read in
// place), for a C API call that only reads them. A picture's file or pixels:
// megabytes, which a copy of our own would double.
class Bytes {
 public:
  explicit Bytes(JNIEnv* env) : env_(env) {}
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() {
    if (elements_) env_->ReleaseByteArrayElements(array_, elements_, JNI_ABORT);
  }

  // False with an exception pending: a null array (NullPointerException
  // naming `what`) or a range outside it.
  bool open_array(jbyteArray array, jint offset, jint length, const char* what) {
    if (!array) {
      throw_null(env_, what);
      return false;
    }
    if (!in_bounds(env_, env_->GetArrayLength(array), offset, length, what)) return false;
    if (length == 0) return true;
    elements_ = env_->GetByteArrayElements(array, nullptr);
    if (!elements_) return false;  // OutOfMemoryError pending
    array_ = array;
    data_ = reinterpret_cast<const uint8_t*>(elements_) + offset;
    size_ = static_cast<size_t>(length);
    return true;
  }

  bool open_direct(jobject buffer, jint offset, jint length, const char* what) {
    if (!buffer) {
      throw_null(env_, what);
      return false;
    }
    const auto* address = static_cast<const uint8_t*>(env_->GetDirectBufferAddress(buffer));
    const jlong capacity = env_->GetDirectBufferCapacity(buffer);
    if (!address || capacity < 0) {
      throw_peak(env_, PEAK_ERR_INVALID_ARGUMENT, std::string(what) + " is not a direct buffer this runtime can read");
      return false;
    }
    if (!in_bounds(env_, capacity, offset, length, what)) return false;
    if (length == 0) return true;
    data_ = address + offset;
    size_ = static_cast<size_t>(length);
    return true;
  }

  // Never NULL (peak refuses a NULL pointer before it looks at the size).
  const uint8_t* data() const { return size_ > 0 ? data_ : &kNone; }
  size_t size() const { return size_; }

 private:
  static constexpr uint8_t kNone = 0;
  JNIEnv* env_;
  jbyteArray array_ = nullptr;
  jbyte* elements_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

jlong decoded(JNIEnv* env, const Bytes& bytes) {
  peak_image* image = nullptr;
  if (!check(env, peak_image_decode(bytes.data(), bytes.size(), &image))) return 0;
  return to_handle(image);
}

// peak reads `height` rows of width x channels bytes, `stride` apart: the
// bytes must hold them. Arguments peak refuses (a channel count, a size, a
// stride shorter than a row) reach no pixel; peak names them.
jlong from_pixels(JNIEnv* env, const Bytes& pixels, jint width, jint height, jint channels, jint stride) {
  size_t w = 0, h = 0, c = 0, s = 0;
  if (!size_from_java(env, width, "width", &w) || !size_from_java(env, height, "height", &h) ||
      !size_from_java(env, channels, "channels", &c) || !size_from_java(env, stride, "stride", &s)) {
    return 0;
  }
  // Each below 2^31 (channels, 4, aside): no product overflows 64 bits.
  const uint64_t row = uint64_t{w} * c;
  const uint64_t apart = s == 0 ? row : uint64_t{s};
  if ((c == 3 || c == 4) && w > 0 && h > 0 && apart >= row) {
    const uint64_t needed = (uint64_t{h} - 1) * apart + row;
    if (needed > pixels.size()) {
      throw_peak(env, PEAK_ERR_INVALID_ARGUMENT,
                 "pixels holds " + std::to_string(pixels.size()) + " bytes; " + std::to_string(h) + " rows of " +
                     std::to_string(w) + " x " + std::to_string(c) + " bytes, " + std::to_string(apart) +
                     " bytes apart, need " + std::to_string(needed));
      return 0;
    }
  }
  peak_image* image = nullptr;
  if (!check(env, peak_image_from_pixels(pixels.data(), static_cast<uint32_t>(w), static_cast<uint32_t>(h),
                                         static_cast<uint32_t>(c), s, &image))) {
    return 0;
  }
  return to_handle(image);
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_imageDecode(JNIEnv* env, jclass, jbyteArray bytes, jint offset, jint length) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    Bytes file(env);
    if (!file.open_array(bytes, offset, length, "bytes")) return 0;
    return decoded(env, file);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_imageDecodeDirect(JNIEnv* env, jclass, jobject bytes, jint offset,
                                                           jint length) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    Bytes file(env);
    if (!file.open_direct(bytes, offset, length, "bytes")) return 0;
    return decoded(env, file);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_imageFromPixels(JNIEnv* env, jclass, jbyteArray pixels, jint offset,
                                                         jint length, jint width, jint height, jint channels,
                                                         jint stride) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    Bytes bytes(env);
    if (!bytes.open_array(pixels, offset, length, "pixels")) return 0;
    return from_pixels(env, bytes, width, height, channels, stride);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_imageFromPixelsDirect(JNIEnv* env, jclass, jobject pixels, jint offset,
                                                               jint length, jint width, jint height, jint channels,
                                                               jint stride) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    Bytes bytes(env);
    if (!bytes.open_direct(pixels, offset, length, "pixels")) return 0;
    return from_pixels(env, bytes, width, height, channels, stride);
  });
}

JNIEXPORT jintArray JNICALL Java_peak_Native_imageSize(JNIEnv* env, jclass, jlong image) {
  return guarded(env, jintArray{}, [&]() -> jintArray {
    uint32_t size[3] = {0, 0, 0};
    if (!check(env, peak_image_get_size(image_of(image), &size[0], &size[1], &size[2]))) return nullptr;
    // At most 16384 a side, 3 or 4 channels.
    const jint values[3] = {static_cast<jint>(size[0]), static_cast<jint>(size[1]), static_cast<jint>(size[2])};
    jintArray out = env->NewIntArray(3);
    if (out) env->SetIntArrayRegion(out, 0, 3, values);
    return out;
  });
}

JNIEXPORT void JNICALL Java_peak_Native_imageFree(JNIEnv*, jclass, jlong image) { peak_image_free(image_of(image)); }

JNIEXPORT jlong JNICALL Java_peak_Native_projectorLoad(JNIEnv* env, jclass, jstring path, jobject params) {
  return guarded(env, jlong{0}, [&] { return load_path<peak_projector>(env, path, params, peak_projector_load); });
}

JNIEXPORT jlong JNICALL Java_peak_Native_projectorLoadFd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length,
                                                         jobject params) {
  return guarded(env, jlong{0},
                 [&] { return load_fd<peak_projector>(env, fd, offset, length, params, peak_projector_load_fd); });
}

JNIEXPORT jobject JNICALL Java_peak_Native_projectorEstimateMemory(JNIEnv* env, jclass, jstring path,
                                                                   jobject model_params, jobject encoder_params) {
  return guarded(env, jobject{}, [&]() -> jobject {
    std::string c_path;
    peak_model_params mp = peak_model_default_params();
    peak_image_encoder_params ep = peak_image_encoder_default_params();
    if (!c_string_from_java(env, path, "path", &c_path) ||
        !model_params_fields.read(env, model_params, "model", &mp, nullptr) ||
        !image_encoder_params_fields.read(env, encoder_params, "encoder", &ep, nullptr)) {
      return nullptr;
    }
    peak_memory_estimate estimate = empty_estimate();
    return estimate_result(env, peak_projector_estimate_memory(c_path.c_str(), &mp, &ep, &estimate), estimate);
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_projectorEstimateMemoryFd(JNIEnv* env, jclass, jint fd, jlong offset,
                                                                     jlong length, jobject model_params,
                                                                     jobject encoder_params) {
  return guarded(env, jobject{}, [&]() -> jobject {
    uint64_t c_offset = 0, c_length = 0;
    peak_model_params mp = peak_model_default_params();
    peak_image_encoder_params ep = peak_image_encoder_default_params();
    if (!region(env, offset, length, &c_offset, &c_length) ||
        !model_params_fields.read(env, model_params, "model", &mp, nullptr) ||
        !image_encoder_params_fields.read(env, encoder_params, "encoder", &ep, nullptr)) {
      return nullptr;
    }
    peak_memory_estimate estimate = empty_estimate();
    return estimate_result(env, peak_projector_estimate_memory_fd(fd, c_offset, c_length, &mp, &ep, &estimate),
                           estimate);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_imageEncoderComputeBytes(JNIEnv*, jclass, jlong encoder) {
  return static_cast<jlong>(peak_image_encoder_compute_bytes(from_handle<peak_image_encoder>(encoder)));
}

JNIEXPORT void JNICALL Java_peak_Native_projectorFree(JNIEnv*, jclass, jlong projector) {
  peak_projector_free(projector_of(projector));
}

JNIEXPORT jobject JNICALL Java_peak_Native_projectorInfo(JNIEnv* env, jclass, jlong projector) {
  return guarded(env, jobject{}, [&]() -> jobject {
    peak_projector_info info{};
    info.struct_size = sizeof info;
    if (!check(env, peak_projector_get_info(projector_of(projector), &info))) return nullptr;
    return projector_info_fields.make(env, &info);
  });
}

JNIEXPORT jintArray JNICALL Java_peak_Native_projectorPictureLayout(JNIEnv* env, jclass, jlong projector, jint width,
                                                                    jint height) {
  return guarded(env, jintArray{}, [&]() -> jintArray {
    uint32_t w = 0, h = 0;
    if (!picture_side(env, width, "width", &w) || !picture_side(env, height, "height", &h)) return nullptr;
    peak_picture_layout layout{};
    layout.struct_size = sizeof layout;
    if (!check(env, peak_projector_picture_layout(projector_of(projector), w, h, &layout))) return nullptr;
    // Bounded by the projector: at most 32768 tokens a picture.
    const jint values[5] = {static_cast<jint>(layout.n_frames), static_cast<jint>(layout.tokens_per_frame),
                            static_cast<jint>(layout.grid_rows), static_cast<jint>(layout.grid_cols),
                            static_cast<jint>(layout.token_cols)};
    jintArray out = env->NewIntArray(5);
    if (out) env->SetIntArrayRegion(out, 0, 5, values);
    return out;
  });
}

JNIEXPORT jstring JNICALL Java_peak_Native_projectorFrameText(JNIEnv* env, jclass, jlong projector, jint width,
                                                              jint height, jint index) {
  return guarded(env, jstring{}, [&]() -> jstring {
    uint32_t w = 0, h = 0;
    if (!picture_side(env, width, "width", &w) || !picture_side(env, height, "height", &h)) return nullptr;
    if (index < 0) {
      throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, "index is " + std::to_string(index));
      return nullptr;
    }
    const auto i = static_cast<uint32_t>(index);
    return fetch_text(env, [&](char* buf, size_t capacity, size_t* length) {
      return peak_projector_frame_text(projector_of(projector), w, h, i, buf, capacity, length);
    });
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_imageEncoderCreate(JNIEnv* env, jclass, jlong projector, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_image_encoder_params ep = peak_image_encoder_default_params();
    if (!image_encoder_params_fields.read(env, params, "params", &ep, nullptr)) return 0;
    peak_image_encoder* encoder = nullptr;
    if (!check(env, peak_image_encoder_create(projector_of(projector), &ep, &encoder))) return 0;
    return to_handle(encoder);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_imageEncoderFree(JNIEnv*, jclass, jlong encoder) {
  peak_image_encoder_free(encoder_of(encoder));
}

JNIEXPORT jfloatArray JNICALL Java_peak_Native_imageEncode(JNIEnv* env, jclass, jlong encoder, jlong image,
                                                           jlong n_floats) {
  return guarded(env, jfloatArray{}, [&]() -> jfloatArray {
    size_t expected = 0;
    if (!size_from_java(env, n_floats, "n_floats", &expected)) return nullptr;
    // The projector's n_image_tokens x n_embd; a picture of several frames
    // needs more, and the encoder says how many.
    std::vector<float> floats(expected);
    size_t n = 0;
    auto encode = [&] {
      return peak_image_encode(encoder_of(encoder), image_of(image), floats.data(), floats.size(), &n);
    };
    peak_status status = encode();
    if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
      floats.resize(n);
      status = encode();
    }
    if (!check(env, status)) return nullptr;
    if (n > static_cast<size_t>(std::numeric_limits<jsize>::max())) {
      throw_peak(env, PEAK_ERR_OUT_OF_MEMORY, "embeddings of " + std::to_string(n) + " floats are too long for Java");
      return nullptr;
    }
    const auto length = static_cast<jsize>(n);
    jfloatArray out = env->NewFloatArray(length);
    if (out) env->SetFloatArrayRegion(out, 0, length, floats.data());
    return out;
  });
}

}  // extern "C"
