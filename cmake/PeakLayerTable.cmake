# libpeak's layers, lowest first. A layer may include the headers of the layers
# before it in this list and its own, nothing above it:
#
#   log       the library's messages (stderr, or a sink the program sets)
#   kernels   block formats, scalar and SIMD kernels, run-time dispatch
#   core      tensors, graph, allocator, thread pool, ops
#   io        file mapping, memory in whole pages
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
set(PEAK_LAYERS log kernels core io jinja gguf tokenizer sampling model runtime chat capi)

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
