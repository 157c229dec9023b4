# Finds what the Java binding (tools/bindings/java) needs and sets PEAK_BUILD_JAVA's
# default: ON where jni.h and javac are found, OFF (saying why) elsewhere.
#  - jni.h: the NDK's sysroot has it; elsewhere the include directories of the
#    JDK whose javac was found, else FindJNI's (JAVA_INCLUDE_PATH: jni.h,
#    JAVA_INCLUDE_PATH2: jni_md.h; set them to choose). A cross build to Linux
#    uses the host JDK's too: jni_md.h is the same on x86-64 and aarch64.
#    libjvm is never linked: the JVM that loads the library provides it.
#  - javac (FindJava): compiles the classes and writes the native methods'
#    header. An NDK build without it builds libpeak_jni alone (the app compiles
#    tools/bindings/java/src/main/java itself).
# Sets PEAK_JNI_INCLUDE_DIRS and _peak_java_default.
find_package(Java 1.8 COMPONENTS Development QUIET)
set(PEAK_JNI_INCLUDE_DIRS "")
set(_peak_have_jni_h OFF)
if(ANDROID)
  set(_peak_have_jni_h ON)
else()
  if(Java_JAVAC_EXECUTABLE)
    get_filename_component(_peak_javac ${Java_JAVAC_EXECUTABLE} REALPATH)
    get_filename_component(_peak_jdk ${_peak_javac}/../.. ABSOLUTE)
    find_path(JAVA_INCLUDE_PATH jni.h HINTS ${_peak_jdk}/include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
    find_path(JAVA_INCLUDE_PATH2 jni_md.h HINTS ${JAVA_INCLUDE_PATH}/linux ${JAVA_INCLUDE_PATH}/darwin
              ${JAVA_INCLUDE_PATH}/win32 NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  endif()
  if(NOT JAVA_INCLUDE_PATH OR NOT JAVA_INCLUDE_PATH2)
    find_package(JNI QUIET)  # only its include paths are used
  endif()
  if(JAVA_INCLUDE_PATH AND JAVA_INCLUDE_PATH2 AND EXISTS ${JAVA_INCLUDE_PATH}/jni.h
     AND EXISTS ${JAVA_INCLUDE_PATH2}/jni_md.h)
    set(_peak_have_jni_h ON)
    set(PEAK_JNI_INCLUDE_DIRS ${JAVA_INCLUDE_PATH} ${JAVA_INCLUDE_PATH2})
  endif()
endif()

if(PEAK_SANITIZE OR PEAK_FUZZ)
  # A JVM loads a sanitized library only with the sanitizer's runtime preloaded.
  set(_peak_java_default OFF)
  set(_peak_java_why "not by default in a sanitizer or fuzzing build")
elseif(NOT _peak_have_jni_h)
  set(_peak_java_default OFF)
  set(_peak_java_why "jni.h not found (install a JDK, e.g. default-jdk-headless, or set JAVA_INCLUDE_PATH and JAVA_INCLUDE_PATH2)")
elseif(NOT Java_JAVAC_EXECUTABLE AND NOT ANDROID)
  set(_peak_java_default OFF)
  set(_peak_java_why "javac not found (install a JDK, e.g. default-jdk-headless)")
else()
  set(_peak_java_default ON)
endif()
