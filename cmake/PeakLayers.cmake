include(${CMAKE_CURRENT_LIST_DIR}/PeakLayerTable.cmake)
set(PEAK_LAYER_VIEWS ${PROJECT_BINARY_DIR}/layers)

# peak_make_view(<folder> <layers...>): creates (or refreshes) an include root
# with a link to each of <layers> and to no other layer.
function(peak_make_view view)
  set(visible ${ARGN})
  file(MAKE_DIRECTORY ${view})
  foreach(other ${PEAK_LAYERS})
    set(link ${view}/${other})
    if(other IN_LIST visible)
      if(NOT IS_SYMLINK ${link})
        peak_layer_source_dir(${other} target)
        file(CREATE_LINK ${target} ${link} SYMBOLIC RESULT result)
        if(NOT result EQUAL 0)
          message(FATAL_ERROR "cannot create the layer link ${link} -> ${target}: ${result} "
                              "(the build needs symbolic links)")
        endif()
      endif()
    elseif(IS_SYMLINK ${link})
      file(REMOVE ${link})  # the link only, never what it points to
    endif()
  endforeach()
endfunction()

# Creates (or refreshes) the include root of every layer, and the tools' one.
function(peak_make_layer_views)
  foreach(layer ${PEAK_LAYERS})
    peak_layers_visible_from(${layer} visible)
    peak_make_view(${PEAK_LAYER_VIEWS}/${layer} ${visible})
  endforeach()
  peak_make_view(${PEAK_LAYER_VIEWS}/tools ${PEAK_TOOL_LAYERS})
endfunction()

# peak_layer_include_dir(<layer> <var>): the include root of a layer.
function(peak_layer_include_dir layer out)
  peak_layers_visible_from(${layer} visible)  # refuses a name that is not a layer
  set(${out} ${PEAK_LAYER_VIEWS}/${layer} PARENT_SCOPE)
endfunction()

# peak_layer_objects(<var>): the objects of every layer, which make up libpeak.
function(peak_layer_objects out)
  set(objects)
  foreach(layer ${PEAK_LAYERS})
    list(APPEND objects $<TARGET_OBJECTS:peak_${layer}>)
  endforeach()
  set(${out} ${objects} PARENT_SCOPE)
endfunction()

# peak_add_layer(<layer> <sources...>): the object library peak_<layer>.
function(peak_add_layer layer)
  peak_layer_include_dir(${layer} include_dir)
  add_library(peak_${layer} OBJECT ${ARGN})
  target_include_directories(peak_${layer} PRIVATE ${include_dir})
  set_target_properties(peak_${layer} PROPERTIES C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden
                                                 VISIBILITY_INLINES_HIDDEN ON)
  peak_set_warnings(peak_${layer})
endfunction()

# peak_use_tool_layers(<target>): the layers a tool may use besides the C API
# (PEAK_TOOL_LAYERS): their include root, which holds no other layer, and, with a
# shared libpeak (whose exports are the C API alone), their objects too; built
# with hidden visibility, they stay the target's own copy.
function(peak_use_tool_layers target)
  target_include_directories(${target} PUBLIC ${PEAK_LAYER_VIEWS}/tools)
  if(PEAK_BUILD_SHARED)
    foreach(layer ${PEAK_TOOL_LAYERS})
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:peak_${layer}>)
    endforeach()
  endif()
endfunction()

peak_make_layer_views()
