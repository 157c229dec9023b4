// The native methods of peak/Native.java as javac declares them (javac -h),
// when the build has javac (PEAK_JNI_NATIVE_HEADER): every definition in the
// glue must then match its Java declaration, or it does not compile (two
// extern "C" functions of one name conflict). An NDK build that compiles the
// Java classes with Gradle instead has no header; its definitions stand alone.
// Either way they are defined inside extern "C" { }.
#ifndef PEAK_JNI_EXPORTS_H
#define PEAK_JNI_EXPORTS_H

#ifdef PEAK_JNI_NATIVE_HEADER
#include "peak_Native.h"
#endif

#endif  // PEAK_JNI_EXPORTS_H
