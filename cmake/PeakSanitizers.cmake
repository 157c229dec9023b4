# PEAK_SANITIZE=address,undefined (or thread) applies to every target in the tree
# (sanitizer runtimes must see the whole program), and makes UBSan reports fatal
# so tests fail; ThreadSanitizer fails a test through its exit code.
if(PEAK_SANITIZE)
  set(_peak_san_flags -fsanitize=${PEAK_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_peak_san_flags})
  add_link_options(${_peak_san_flags})
endif()
