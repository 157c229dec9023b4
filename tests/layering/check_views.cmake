# Proves the build refuses a back-edge: with the include root of each layer, a
# header of every layer at or below it is found, and a header of every layer
# above it is not ("No such file"); with the tools' include root, only the
# layers tools may use (PEAK_TOOL_LAYERS) are found. Together with
# check_includes.cmake this is the layer check CI runs.
#   cmake -DCXX=<compiler> -DVIEWS=<build>/layers -DSOURCE_DIR=<checkout>
#         -DWORK_DIR=<scratch> -P check_views.cmake
cmake_minimum_required(VERSION 3.20)
set(PROJECT_SOURCE_DIR ${SOURCE_DIR})
include(${SOURCE_DIR}/cmake/PeakLayerTable.cmake)
set(layers ${PEAK_LAYERS})
file(MAKE_DIRECTORY ${WORK_DIR})
set(problems "")
# One header of each layer, the first by name.
foreach(layer ${layers})
  peak_layer_source_dir(${layer} dir)
  file(GLOB headers RELATIVE ${dir} ${dir}/*.h)
  list(SORT headers)
  list(GET headers 0 first)
  set(sample_${layer} "${layer}/${first}")
endforeach()
set(n_checks 0)
foreach(view ${layers} tools)
  if(view STREQUAL "tools")
    set(visible_layers ${PEAK_TOOL_LAYERS})
  else()
    peak_layers_visible_from(${view} visible_layers)
  endif()
  foreach(other ${layers})
    if(other IN_LIST visible_layers)
      set(visible TRUE)
    else()
      set(visible FALSE)
    endif()
    set(source ${WORK_DIR}/${view}_sees_${other}.cpp)
    file(WRITE ${source} "#include \"${sample_${other}}\"\n")
    # Preprocessing alone finds every file the header includes, or names the one
    # it cannot find; compiling them is check_headers.cmake's part.
    execute_process(COMMAND ${CXX} -std=c++17 -E -o /dev/null -I${VIEWS}/${view} -I${SOURCE_DIR}/include ${source}
                    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
    if(visible AND NOT result EQUAL 0)
      string(APPEND problems "'${view}' cannot include \"${sample_${other}}\" of a layer it may see:\n${output}\n")
    elseif(NOT visible AND result EQUAL 0)
      string(APPEND problems "'${view}' can include \"${sample_${other}}\" of '${other}', which it may not see\n")
    elseif(NOT visible AND NOT output MATCHES "No such file")
      string(APPEND problems "'${view}' including \"${sample_${other}}\" failed for another reason:\n${output}\n")
    endif()
    math(EXPR n_checks "${n_checks} + 1")
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "layer views:\n${problems}")
endif()
message(STATUS "layer views: ${n_checks} includes found or refused as the layer table says")
