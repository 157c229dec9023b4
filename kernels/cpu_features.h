// Internal: what the running CPU can execute, read once from the hardware
// (cpuid + xgetbv on x86-64, getauxval HWCAP bits on Linux/Android arm64).
#pragma once

namespace peak::kernels {

struct CpuFeatures {
  // x86-64
  bool avx2 = false;      // with FMA and F16C, and the OS saving ymm state
  bool avx_vnni = false;  // VEX-encoded vpdpbusd
  bool avx512 = false;    // F, BW, VL and VNNI, and the OS saving zmm/mask state
  bool avx512_bf16 = false;  // with avx512: vdpbf16ps, vcvtne2ps2bf16
  bool amd = false;          // vendor AuthenticAMD (dispatch.cpp tunes the x86 paths by it: KernelTuning)
  // arm64
  bool neon = false;
  bool dotprod = false;
  bool i8mm = false;
};

const CpuFeatures& cpu_features();

}  // namespace peak::kernels
