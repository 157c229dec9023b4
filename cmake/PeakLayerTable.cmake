# libpeak's layers, lowest first. A layer may include the headers of the layers
# before it in this list and its own, nothing above it:
#
#   log       the library's messages (stderr, or a sink the program sets)
#   kernels   block formats, scalar and SIMD kernels, run-time dispatch
#   core      tensors, graph, allocator, thread pool, ops
#   io        file mapping, memory in whole pages
#   json      the strict, bounded JSON value, parser and writer (standard library only)
#   image     PNG and JPEG decoding into pixels, bounded (standard library only)
#   jinja     the Jinja interpreter that renders chat templates (standard library only)
#   gguf      GGUF reader and writer
#   tokenizer vocabularies, tokenizers, UTF-8
#   sampling  the sampler chain
#   model     hyper-parameters, weights, the decoder graph, quantization
#   runtime   KV cache, Context, generation: running a model
#   chat      chat templates and SSSKV-lite sessions
#   capi      the C API (include/peak/peak.h)
#
# Each layer is an object library that gets one include root: a folder in the
# build tree with a link to each layer it may see (its own and those below), so
# including a higher layer's header is a compile error ("No such file"). The
# objects of all layers make up the one libpeak.
set(PEAK_LAYERS log kernels core io json image jinja gguf tokenizer sampling model runtime chat capi)

# Tools (the CLI and peak serve) use the public C API (include/peak/peak.h) and,
# of the layers, only these: json is a value type that depends on nothing and
# holds no engine state, so peak serve reads and writes its JSON with it rather
# than with a copy of its own. Tools get an include root of their own with only
# these layers in it (peak_use_tool_layers in cmake/PeakLayers.cmake), and with a
# shared libpeak, which exports the C API alone, their objects as well.
set(PEAK_TOOL_LAYERS json)

# peak_layer_source_dir(<layer> <var>): the source folder of a layer, kernels/ at
# the top, the others in src/. Also used by the layer checks in script mode
# (tests/layering), which set PROJECT_SOURCE_DIR themselves.
function(peak_layer_source_dir layer out)
  if(layer STREQUAL "kernels")
    set(${out} ${PROJECT_SOURCE_DIR}/kernels PARENT_SCOPE)
  else()
    set(${out} ${PROJECT_SOURCE_DIR}/src/${layer} PARENT_SCOPE)
  endif()
endfunction()

# peak_layers_visible_from(<layer> <var>): the layers a layer may include, itself
# and every one before it in the table.
function(peak_layers_visible_from layer out)
  list(FIND PEAK_LAYERS ${layer} index)
  if(index LESS 0)
    message(FATAL_ERROR "'${layer}' is not a layer (${PEAK_LAYERS})")
  endif()
  math(EXPR count "${index} + 1")
  list(SUBLIST PEAK_LAYERS 0 ${count} visible)
  set(${out} ${visible} PARENT_SCOPE)
endfunction()
