# How peak's shared libraries (libpeak.so with PEAK_BUILD_SHARED, libpeak_jni.so)
# are linked on ELF systems:
#  - a version script exports only their interface (template instantiations of
#    the C++ standard library keep default visibility even in code compiled with
#    -fvisibility=hidden, so hiding has to happen at the link);
#  - PEAK_MAX_PAGE_SIZE aligns their LOAD segments: 16384 by default for Android,
#    whose devices may run 16 KB pages (Android 15 on), where a library aligned
#    to 4 KB does not load. Elsewhere the linker's default (GNU ld: 64 KB on
#    aarch64, 4 KB on x86-64) unless set.
if(ANDROID)
  set(_peak_max_page_size_default 16384)
else()
  set(_peak_max_page_size_default "")
endif()
set(PEAK_MAX_PAGE_SIZE "${_peak_max_page_size_default}" CACHE STRING
    "Alignment of shared libraries' LOAD segments in bytes (-z max-page-size); empty: the linker's default")

# peak_shared_library_link_options(<target> <version script>)
function(peak_shared_library_link_options target version_script)
  if(APPLE OR WIN32)
    return()
  endif()
  target_link_options(${target} PRIVATE "LINKER:--version-script=${version_script}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${version_script})
  if(PEAK_MAX_PAGE_SIZE)
    target_link_options(${target} PRIVATE "LINKER:-z,max-page-size=${PEAK_MAX_PAGE_SIZE}")
  endif()
endfunction()
