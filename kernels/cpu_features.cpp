#include "kernels/cpu_features.h"

#if defined(__x86_64__) || defined(_M_X64)
#if defined(_MSC_VER)
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

#if defined(__aarch64__) && (defined(__linux__) || defined(__ANDROID__))
#include <sys/auxv.h>
#endif

#include <cstdint>

namespace peak::kernels {
namespace {

#if defined(__x86_64__) || defined(_M_X64)

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
#if defined(_MSC_VER)
  int regs[4];
  __cpuidex(regs, static_cast<int>(leaf), static_cast<int>(subleaf));
  r = {static_cast<uint32_t>(regs[0]), static_cast<uint32_t>(regs[1]), static_cast<uint32_t>(regs[2]),
       static_cast<uint32_t>(regs[3])};
#else
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
#endif
  return r;
}

// XCR0: which register states the OS saves on context switch.
uint64_t read_xcr0() {
#if defined(_MSC_VER)
  return _xgetbv(0);
#else
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return static_cast<uint64_t>(hi) << 32 | lo;
#endif
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

CpuFeatures detect() {
  CpuFeatures f;
  const CpuidRegs l0 = cpuid(0, 0);
  // The vendor string is EBX, EDX, ECX: "Auth" "enti" "cAMD".
  f.amd = l0.ebx == 0x68747541u && l0.edx == 0x69746e65u && l0.ecx == 0x444d4163u;
  const uint32_t max_leaf = l0.eax;
  if (max_leaf < 7) return f;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.ecx, 27);
  if (!osxsave) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;            // SSE + AVX
  const bool zmm_state = ymm_state && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool fma = bit(l1.ecx, 12), f16c = bit(l1.ecx, 29), avx = bit(l1.ecx, 28);
  const CpuidRegs l7 = cpuid(7, 0);
  const CpuidRegs l7s1 = cpuid(7, 1);
  f.avx2 = ymm_state && avx && fma && f16c && bit(l7.ebx, 5);
  f.avx_vnni = f.avx2 && bit(l7s1.eax, 4);
  const bool avx512f = bit(l7.ebx, 16), avx512bw = bit(l7.ebx, 30), avx512vl = bit(l7.ebx, 31);
  const bool avx512vnni = bit(l7.ecx, 11);
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512bw && avx512vl && avx512vnni;
  f.avx512_bf16 = f.avx512 && bit(l7s1.eax, 5);  // CPUID.(7, 1):EAX.AVX512_BF16
  return f;
}

#elif defined(__aarch64__)

CpuFeatures detect() {
  CpuFeatures f;
  f.neon = true;  // Advanced SIMD is mandatory on arm64
#if defined(__linux__) || defined(__ANDROID__)
  // Bit numbers from the kernel's uapi/asm/hwcap.h (not every libc ships them).
  constexpr unsigned long kHwcapAsimdDp = 1ul << 20;
  constexpr unsigned long kHwcap2I8mm = 1ul << 13;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  f.dotprod = (hwcap & kHwcapAsimdDp) != 0;
  f.i8mm = f.dotprod && (hwcap2 & kHwcap2I8mm) != 0;
#endif
  return f;
}

#else

CpuFeatures detect() { return {}; }

#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace peak::kernels
