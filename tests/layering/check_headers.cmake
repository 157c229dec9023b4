# Compiles every header and fragment of one layer on its own, with the include
# root that layer's sources get (cmake/PeakLayers.cmake): a header that relies on
# what its includer included before it, or on a layer above its own, fails here.
# x86/ and arm/ fragments get their path's instruction-set flags and are checked
# only when building for that architecture.
#   cmake -DCXX=<compiler> -DLAYER=<name> -DLAYER_DIR=<folder> -DINCLUDE_DIR=<root>
#         -DPUBLIC_INCLUDE_DIR=<checkout>/include -DPROCESSOR=<CMAKE_SYSTEM_PROCESSOR>
#         -DWORK_DIR=<scratch> -P check_headers.cmake
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE headers RELATIVE ${LAYER_DIR} ${LAYER_DIR}/*.h ${LAYER_DIR}/*.inc)
list(SORT headers)
file(MAKE_DIRECTORY ${WORK_DIR})
set(failed "")
set(checked 0)
foreach(header ${headers})
  set(flags "")
  if(header MATCHES "^x86/")
    if(NOT PROCESSOR MATCHES "x86_64|AMD64|amd64")
      continue()
    endif()
    set(flags -mavx2 -mfma -mf16c -mavxvnni -mavx512f -mavx512bw -mavx512vl -mavx512vnni)
  elseif(header MATCHES "^arm/")
    if(NOT PROCESSOR MATCHES "aarch64|arm64|ARM64")
      continue()
    endif()
    set(flags -march=armv8.2-a+dotprod+i8mm)
  endif()
  string(MAKE_C_IDENTIFIER ${header} stem)
  set(source ${WORK_DIR}/${stem}.cpp)
  file(WRITE ${source} "#include \"${LAYER}/${header}\"\n")
  execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only ${flags} -I${INCLUDE_DIR} -I${PUBLIC_INCLUDE_DIR} ${source}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    string(APPEND failed "\n--- ${LAYER}/${header}\n${output}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(failed)
  message(FATAL_ERROR "headers of '${LAYER}' that do not compile on their own:${failed}")
endif()
message(STATUS "${LAYER}: ${checked} headers compile on their own in the layer's view")
