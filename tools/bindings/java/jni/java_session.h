// The native side of a peak.Session, which its handle points to: the C session,
// the tool call listener (a global reference, or null), and the turn running
// now, which passes the calls peak reports to the listener.
#ifndef PEAK_JNI_JAVA_SESSION_H
#define PEAK_JNI_JAVA_SESSION_H

#include <jni.h>

#include <peak/peak.h>

#include "jni_support.h"

namespace peak_jni {

class Generation;

struct JavaSession {
  peak_session* session = nullptr;
  jobject listener = nullptr;
  Generation* turn = nullptr;
};

inline JavaSession* java_session(jlong handle) { return from_handle<JavaSession>(handle); }

inline peak_session* session_of(jlong handle) { return java_session(handle)->session; }

}  // namespace peak_jni

#endif  // PEAK_JNI_JAVA_SESSION_H
