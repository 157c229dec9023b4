# Strict warnings for peak's own targets; third-party code (GoogleTest built from
# source) never gets these flags because they are attached per target.
function(peak_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
      -Wcast-qual -Wformat=2 -Wundef -Wnull-dereference -Wimplicit-fallthrough
      $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
    if(PEAK_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${PEAK_WERROR}>:/WX>)
  endif()
endfunction()
