#include "image/jpeg_idct.h"

#include <cstring>

namespace peak::image::jpeg {
namespace {

// The separable 8-point inverse DCT in fixed point, as the reference decoder
// computes it ("accurate integer" IDCT) so that pixels match exactly: the
// factorization of Loeffler, Ligtenberg and Moschytz (12 multiplications),
// constants scaled by 2^13, columns first with 2 extra bits kept between the
// passes.
//
// The arithmetic is modulo 2^32 (unsigned Word): a hostile coefficient times a
// 16-bit quantization value can overflow 32 bits within the transform, which
// must not be undefined behaviour. The outputs of each pass for real files fit
// in 32 bits, so for them the modular results are the exact ones.
using Word = uint32_t;
constexpr int kConstBits = 13;
constexpr int kPass1Bits = 2;

constexpr Word fixed(double x) { return static_cast<Word>(x * (1 << kConstBits) + 0.5); }

// c(k) = cos(k pi / 16). Each constant is the magnitude of sqrt(2) times the
// sum beside it; the code subtracts where that sum is negative.
constexpr Word k0_298631336 = fixed(0.298631336);  // sqrt2 (-c1 + c3 + c5 - c7)
constexpr Word k0_390180644 = fixed(0.390180644);  // sqrt2 (c5 - c3)
constexpr Word k0_541196100 = fixed(0.541196100);  // sqrt2 c6
constexpr Word k0_765366865 = fixed(0.765366865);  // sqrt2 (c2 - c6)
constexpr Word k0_899976223 = fixed(0.899976223);  // sqrt2 (c7 - c3)
constexpr Word k1_175875602 = fixed(1.175875602);  // sqrt2 c3
constexpr Word k1_501321110 = fixed(1.501321110);  // sqrt2 (c1 + c3 - c5 - c7)
constexpr Word k1_847759065 = fixed(1.847759065);  // sqrt2 (-c2 - c6)
constexpr Word k1_961570560 = fixed(1.961570560);  // sqrt2 (-c3 - c5)
constexpr Word k2_053119869 = fixed(2.053119869);  // sqrt2 (c1 + c3 - c5 + c7)
constexpr Word k2_562915447 = fixed(2.562915447);  // sqrt2 (-c1 - c3)
constexpr Word k3_072711026 = fixed(3.072711026);  // sqrt2 (c1 + c3 + c5 - c7)
static_assert(k0_298631336 == 2446 && k1_847759065 == 15137 && k3_072711026 == 25172);

// Right shift by n with rounding to nearest, of a signed value held in a Word.
constexpr int32_t descale(Word x, int n) { return static_cast<int32_t>(x + (Word{1} << (n - 1))) >> n; }

// The 8-point inverse DCT of x, times 2^kConstBits.
inline void idct_1d(const Word x[8], Word y[8]) {
  // Even part: x0 and x4 pass through; x2 and x6 rotate by 6 pi / 16.
  const Word rotated = (x[2] + x[6]) * k0_541196100;
  const Word even2 = rotated + x[2] * k0_765366865;
  const Word even6 = rotated - x[6] * k1_847759065;
  const Word sum04 = (x[0] + x[4]) << kConstBits;
  const Word difference04 = (x[0] - x[4]) << kConstBits;
  const Word e0 = sum04 + even2, e3 = sum04 - even2;
  const Word e1 = difference04 + even6, e2 = difference04 - even6;

  // Odd part: x1, x3, x5, x7 through the shared rotation by 3 pi / 16.
  const Word shared = (x[7] + x[3] + x[5] + x[1]) * k1_175875602;
  const Word z71 = (x[7] + x[1]) * -k0_899976223;
  const Word z53 = (x[5] + x[3]) * -k2_562915447;
  const Word z73 = (x[7] + x[3]) * -k1_961570560 + shared;
  const Word z51 = (x[5] + x[1]) * -k0_390180644 + shared;
  const Word o7 = x[7] * k0_298631336 + z71 + z73;
  const Word o5 = x[5] * k2_053119869 + z53 + z51;
  const Word o3 = x[3] * k3_072711026 + z53 + z73;
  const Word o1 = x[1] * k1_501321110 + z71 + z51;

  y[0] = e0 + o1;
  y[7] = e0 - o1;
  y[1] = e1 + o3;
  y[6] = e1 - o3;
  y[2] = e2 + o5;
  y[5] = e2 - o5;
  y[3] = e3 + o7;
  y[4] = e3 - o7;
}

inline uint8_t clamp_sample(int32_t level_shifted) {
  const int32_t value = level_shifted + 128;
  return static_cast<uint8_t>(value < 0 ? 0 : value > 255 ? 255 : value);
}

}  // namespace

void idct_8x8(const int16_t coefficients[64], const uint16_t quant[64], uint8_t* out, ptrdiff_t stride) {
  // A coefficient (16 bits) times a quantization value (16 bits, unsigned) fits
  // an int32; the Word holds it modulo 2^32.
  const auto dequantized = [&](int i) { return static_cast<Word>(coefficients[i] * quant[i]); };
  int ac = 0;
  for (int i = 1; i < 64; ++i) ac |= coefficients[i];
  if (ac == 0) {  // a flat block, as both passes below would compute it
    const uint8_t flat = clamp_sample(descale(dequantized(0) << kPass1Bits, kPass1Bits + 3));
    for (int row = 0; row < 8; ++row, out += stride) std::memset(out, flat, 8);
    return;
  }
  int32_t workspace[64];  // (row, column), scaled by 2^kPass1Bits
  Word x[8], y[8];
  for (int column = 0; column < 8; ++column) {
    bool ac_zero = true;
    for (int row = 1; row < 8; ++row) ac_zero &= coefficients[row * 8 + column] == 0;
    if (ac_zero) {  // the transform of a lone DC term is that term, flat
      const auto dc = static_cast<int32_t>(dequantized(column) << kPass1Bits);
      for (int row = 0; row < 8; ++row) workspace[row * 8 + column] = dc;
      continue;
    }
    for (int row = 0; row < 8; ++row) x[row] = dequantized(row * 8 + column);
    idct_1d(x, y);
    for (int row = 0; row < 8; ++row) workspace[row * 8 + column] = descale(y[row], kConstBits - kPass1Bits);
  }
  // The rows also take out the 2^kPass1Bits and the DCT's factor of 8.
  for (int row = 0; row < 8; ++row, out += stride) {
    const int32_t* w = workspace + row * 8;
    if (w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0 && w[6] == 0 && w[7] == 0) {
      std::memset(out, clamp_sample(descale(static_cast<Word>(w[0]), kPass1Bits + 3)), 8);
      continue;
    }
    for (int i = 0; i < 8; ++i) x[i] = static_cast<Word>(w[i]);
    idct_1d(x, y);
    for (int i = 0; i < 8; ++i) out[i] = clamp_sample(descale(y[i], kConstBits + kPass1Bits + 3));
  }
}

}  // namespace peak::image::jpeg
