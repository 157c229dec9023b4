/*
 * peak: a small, dependency-free inference engine for GGUF language models.
 *
 * This is the whole public C API. Conventions:
 *  - Handles are opaque; every handle has a matching *_free function that
 *    accepts NULL.
 *  - Functions that can fail return a peak_status. On failure, peak_last_error()
 *    returns a readable message for the calling thread (thread-local; valid until
 *    the next failing call on that thread). No C++ exception ever crosses this API.
 *  - Parameter structs are named peak_<thing>_params and start with `struct_size`:
 *    fill them from peak_<thing>_default_params(), which sets it, then change what
 *    you need. A struct_size the library does not know is refused, so binaries
 *    built against other versions of this header fail cleanly instead of
 *    misreading memory.
 *  - Thread safety: functions on different handles may run concurrently.
 *    peak_gguf and peak_model handles are immutable once opened: any number of
 *    threads may use them at once, and one model may be shared by many contexts.
 *    A peak_grammar is immutable too. A peak_context, peak_sampler or peak_session
 *    is used by one thread at a time.
 *  - Sizes and counts are checked: a buffer too small for a result gives
 *    PEAK_ERR_BUFFER_TOO_SMALL with the result's count or length in the output
 *    that reports it (text needs one byte more, see Strings).
 *  - Strings: every string the library returns is NUL-terminated. Text written
 *    into a caller's buffer (buf, capacity, *length) is followed by a NUL, and
 *    *length is the text's length without it, on success and on
 *    PEAK_ERR_BUFFER_TOO_SMALL alike: the buffer needs *length + 1 bytes, as with
 *    snprintf. A buffer too small is left untouched; buf may be NULL when capacity
 *    is 0, to ask for the length. Text may hold NUL bytes of its own (byte
 *    tokens, GGUF strings), so where a length comes with it, use the length.
 *  - Integers: counts, lengths, indices and sizes of things in memory are size_t
 *    (a thread count of 0 means automatic). Token ids are int32_t (-1: none), and
 *    so are positions and position deltas; hence no count of tokens or cells may
 *    exceed INT32_MAX. File offsets and byte sizes of a file's contents are
 *    uint64_t. Fields that mirror a GGUF field keep the file's type (version,
 *    alignment, n_dims, int64_t ne[4]).
 *  - Versions: PEAK_VERSION_MAJOR/MINOR/PATCH are this header's version and
 *    peak_version() the library's. While MAJOR is 0, every minor release may
 *    change the API and the ABI (the shared library's soname is
 *    libpeak.so.0.MINOR); a patch release changes neither.
 *  - Deprecation: a renamed function or type keeps its old spelling for one minor
 *    release, declared at the end of this header with a compiler warning that
 *    names the replacement, then it is removed. Define PEAK_NO_DEPRECATED before
 *    including this header to hide the old spellings.
 */
#ifndef PEAK_PEAK_H
#define PEAK_PEAK_H

#include <stddef.h>
#include <stdint.h>

#if defined(PEAK_SHARED) && defined(_WIN32)
#  if defined(PEAK_BUILDING_LIBRARY)
#    define PEAK_API __declspec(dllexport)
#  else
#    define PEAK_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define PEAK_API __attribute__((visibility("default")))
#else
#  define PEAK_API
#endif

/* Marks an old spelling; `message` names the replacement. */
#if defined(__GNUC__) || defined(__clang__)
#  define PEAK_DEPRECATED(message) __attribute__((deprecated(message)))
#elif defined(_MSC_VER)
#  define PEAK_DEPRECATED(message) __declspec(deprecated(message))
#else
#  define PEAK_DEPRECATED(message)
#endif

/* The version of this header; the build reads it from here. */
#define PEAK_VERSION_MAJOR 0
#define PEAK_VERSION_MINOR 11
#define PEAK_VERSION_PATCH 0
#define PEAK_VERSION_STRING "0.11.0"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------ */

typedef enum peak_status {
  PEAK_OK = 0,
  PEAK_ERR_INVALID_ARGUMENT = 1, /* NULL handle, out-of-range index, bad struct_size ... */
  PEAK_ERR_IO = 2,               /* a file could not be opened, read or written */
  PEAK_ERR_FORMAT = 3,           /* a file is malformed (the message names the field) */
  PEAK_ERR_UNSUPPORTED = 4,      /* valid input that this version cannot handle */
  PEAK_ERR_TYPE_MISMATCH = 5,    /* a metadata value has another type than asked for */
  PEAK_ERR_NOT_FOUND = 6,        /* a key or tensor name does not exist */
  PEAK_ERR_OUT_OF_MEMORY = 7,
  PEAK_ERR_BUFFER_TOO_SMALL = 8, /* the result's count or length is in the output (text: plus its NUL) */
  PEAK_ERR_CONTEXT_FULL = 9,     /* the tokens do not fit in the context's KV cache */
  PEAK_ERR_CANCELLED = 10,       /* a progress callback or an abort flag cancelled the operation */
  PEAK_ERR_TEMPLATE = 11,        /* a chat template cannot be read, or refused the conversation
                                    (the message is then the template's own, e.g. Gemma's
                                    "System role not supported") */
  PEAK_ERR_NON_FINITE = 12,      /* the model produced NaN or infinite logits (its weights are broken);
                                    the evaluation that produced them left the KV cache as before */
  PEAK_ERR_INTERNAL = 99
} peak_status;

/* Message of the last failing call on this thread ("" if none). */
PEAK_API const char* peak_last_error(void);
/* Name of a status code, e.g. "PEAK_ERR_FORMAT". */
PEAK_API const char* peak_status_name(peak_status status);
/* The library's version as "MAJOR.MINOR.PATCH" (PEAK_VERSION_STRING of the
   header it was built with). */
PEAK_API const char* peak_version(void);

/* ---- system ------------------------------------------------------------------- */

/* The kernel paths this CPU can run and the one each tensor type uses, one line
   per item: "cpu paths: scalar avx2 avxvnni avx512", "best path: avx512",
   "active path: avx512 ...", then "Q4_0: avx512" and so on.
   PEAK_ISA=scalar|avx2|avxvnni|avx512|neon|dotprod|i8mm in the environment forces
   a lower path. Valid for the program's lifetime. */
PEAK_API const char* peak_system_info(void);

/* The thread count a context uses when asked for 0: the fast cores this process
   may run on. A forward pass waits for its slowest thread at every step, so a
   phone's little cores would hold its big ones back. Rule (Linux and Android):
   the CPUs of the process's affinity mask (sched_getaffinity), less the slowest
   kind of core when a faster kind exists and the slowest reaches less than 80%
   of the fastest. A core's speed is its
   /sys/devices/system/cpu/cpuN/cpu_capacity or, where a CPU has none, its
   cpufreq/cpuinfo_max_freq; a kind is the cores of equal speed. So 2 big + 6
   little cores give 2, 1 prime + 3 big + 4 little give 4, uniform cores all of
   them. Where no speed is readable for every allowed CPU (or on other systems):
   every allowed CPU. Read anew at each call (the affinity may change). */
PEAK_API size_t peak_default_threads(void);

/* ---- logging ------------------------------------------------------------------ */

/* The library's messages: warnings (a PEAK_ISA request this CPU cannot honour,
   weights that use_mlock could not lock), information (what a model load did,
   a session's summary job that failed) and detail (debug: a background
   repacking's end). Errors of a call are never reported this way: it returns a
   status and peak_last_error() says why. */
typedef enum peak_log_level {
  PEAK_LOG_ERROR = 0,
  PEAK_LOG_WARN = 1,
  PEAK_LOG_INFO = 2,
  PEAK_LOG_DEBUG = 3
} peak_log_level;

/* Receives one message: NUL-terminated, without a trailing newline or a
   "peak: " prefix, valid during the call. */
typedef void (*peak_log_fn)(peak_log_level level, const char* message, void* user_data);

/* Sends every message at the minimum level or above to `callback` instead of
   stderr, where they go by default as "peak: <message>\n"; NULL restores that.
   Process-wide. Messages come from whichever thread writes them: the caller's,
   a session's summary worker, a model's background repacking thread; so the
   callback may run on several threads at once and must be thread-safe. It is
   called with no lock of peak's held, and may call peak_set_log_callback and
   peak_set_log_level itself. A message being written while the callback is
   replaced may still reach the old one after this returns: keep its user_data
   valid, or replace it while no other peak call runs. Any thread, any time. */
PEAK_API void peak_set_log_callback(peak_log_fn callback, void* user_data);
/* Drops messages below `level` (more detailed than it); default PEAK_LOG_WARN.
   Process-wide, any thread, any time. */
PEAK_API peak_status peak_set_log_level(peak_log_level level);

/* ---- tensor types ----------------------------------------------------------- */

/* Tensor element types, numbered as ggml numbers them in GGUF files. The ids
   ggml retired (4, 5, 31..33, 36..38) have no name here: files using them are
   refused. */
typedef enum peak_type {
  PEAK_TYPE_F32 = 0, PEAK_TYPE_F16 = 1, PEAK_TYPE_Q4_0 = 2, PEAK_TYPE_Q4_1 = 3,
  PEAK_TYPE_Q5_0 = 6, PEAK_TYPE_Q5_1 = 7, PEAK_TYPE_Q8_0 = 8, PEAK_TYPE_Q8_1 = 9,
  PEAK_TYPE_Q2_K = 10, PEAK_TYPE_Q3_K = 11, PEAK_TYPE_Q4_K = 12, PEAK_TYPE_Q5_K = 13,
  PEAK_TYPE_Q6_K = 14, PEAK_TYPE_Q8_K = 15,
  PEAK_TYPE_IQ2_XXS = 16, PEAK_TYPE_IQ2_XS = 17, PEAK_TYPE_IQ3_XXS = 18, PEAK_TYPE_IQ1_S = 19,
  PEAK_TYPE_IQ4_NL = 20, PEAK_TYPE_IQ3_S = 21, PEAK_TYPE_IQ2_S = 22, PEAK_TYPE_IQ4_XS = 23,
  PEAK_TYPE_I8 = 24, PEAK_TYPE_I16 = 25, PEAK_TYPE_I32 = 26, PEAK_TYPE_I64 = 27, PEAK_TYPE_F64 = 28,
  PEAK_TYPE_IQ1_M = 29, PEAK_TYPE_BF16 = 30,
  PEAK_TYPE_TQ1_0 = 34, PEAK_TYPE_TQ2_0 = 35,
  PEAK_TYPE_MXFP4 = 39
} peak_type;

/* Name of a tensor type as ggml spells it ("F32", "Q4_K", ...); a retired id
   gives its historic name ("Q4_2"), an id never assigned "unknown". */
PEAK_API const char* peak_type_name(peak_type type);

/* ---- GGUF files: read-only inspection of metadata and tensors ----------------- */

typedef struct peak_gguf peak_gguf;

/* Metadata value types, numbered as in the GGUF format; PEAK_GGUF_TYPE_INVALID
   is what peak_gguf_kv_type gives for no value (a NULL handle, an index out of
   range), never a stored type. */
typedef enum peak_gguf_type {
  PEAK_GGUF_TYPE_INVALID = -1,
  PEAK_GGUF_UINT8 = 0,
  PEAK_GGUF_INT8 = 1,
  PEAK_GGUF_UINT16 = 2,
  PEAK_GGUF_INT16 = 3,
  PEAK_GGUF_UINT32 = 4,
  PEAK_GGUF_INT32 = 5,
  PEAK_GGUF_FLOAT32 = 6,
  PEAK_GGUF_BOOL = 7,
  PEAK_GGUF_STRING = 8,
  PEAK_GGUF_ARRAY = 9,
  PEAK_GGUF_UINT64 = 10,
  PEAK_GGUF_INT64 = 11,
  PEAK_GGUF_FLOAT64 = 12
} peak_gguf_type;

typedef struct peak_gguf_params {
  size_t struct_size; /* sizeof(peak_gguf_params), set by the default function */
  int use_mmap;       /* 1: map the file (default); 0: read it into memory */
} peak_gguf_params;

PEAK_API peak_gguf_params peak_gguf_default_params(void);

/* Opens and fully validates a GGUF file. `params` may be NULL for the defaults.
   On failure *out is set to NULL and the message names the problem, the key or
   tensor and the byte offset. The handle keeps a NUL-terminated copy of every
   string value, made here: one byte more than the string itself each (3.2 MB
   for the 151,936 tokens and 151,387 merges of Qwen3's vocabulary, 2.9 MB of
   text in a 5.9 MB file). */
PEAK_API peak_status peak_gguf_open(const char* path, const peak_gguf_params* params, peak_gguf** out);
PEAK_API void peak_gguf_free(peak_gguf* gguf);

PEAK_API uint32_t peak_gguf_version(const peak_gguf* gguf);
PEAK_API uint32_t peak_gguf_alignment(const peak_gguf* gguf);
PEAK_API uint64_t peak_gguf_data_offset(const peak_gguf* gguf);
PEAK_API uint64_t peak_gguf_file_size(const peak_gguf* gguf);

/* Metadata, by index 0..n_kv-1. Keys are NUL-terminated. String values come as
   pointer + length and are NUL-terminated at data[length]; they may hold any
   bytes, NUL included. Returned pointers stay valid until peak_gguf_free.
   Getters check the stored type: asking for a uint32 stored as a string gives
   PEAK_ERR_TYPE_MISMATCH. */
PEAK_API size_t peak_gguf_n_kv(const peak_gguf* gguf);
PEAK_API const char* peak_gguf_key(const peak_gguf* gguf, size_t index);
/* The index of `key` in *index (O(1)); PEAK_ERR_NOT_FOUND, naming the key, when
   the file has no such key. *index is only written on success. */
PEAK_API peak_status peak_gguf_lookup_key(const peak_gguf* gguf, const char* key, size_t* index);
/* The stored type of value `index`; PEAK_GGUF_TYPE_INVALID (the message says
   why) for a NULL handle or an index out of range. */
PEAK_API peak_gguf_type peak_gguf_kv_type(const peak_gguf* gguf, size_t index);
PEAK_API const char* peak_gguf_type_name(peak_gguf_type type);

/* Any integer type, range-checked (uint refuses negatives). */
PEAK_API peak_status peak_gguf_get_uint(const peak_gguf* gguf, size_t index, uint64_t* out);
PEAK_API peak_status peak_gguf_get_int(const peak_gguf* gguf, size_t index, int64_t* out);
/* float32 or float64. */
PEAK_API peak_status peak_gguf_get_float(const peak_gguf* gguf, size_t index, double* out);
PEAK_API peak_status peak_gguf_get_bool(const peak_gguf* gguf, size_t index, int* out);
PEAK_API peak_status peak_gguf_get_string(const peak_gguf* gguf, size_t index, const char** data, size_t* length);

/* Arrays: element type and count, then elements by position (a position past
   the end gives PEAK_ERR_INVALID_ARGUMENT, as an index out of range does).
   Nested arrays report PEAK_GGUF_ARRAY as their element type; their elements
   are not reachable through this API. */
PEAK_API peak_status peak_gguf_get_array_info(const peak_gguf* gguf, size_t index, peak_gguf_type* elem_type,
                                              size_t* count);
PEAK_API peak_status peak_gguf_get_array_uint(const peak_gguf* gguf, size_t index, size_t i, uint64_t* out);
PEAK_API peak_status peak_gguf_get_array_int(const peak_gguf* gguf, size_t index, size_t i, int64_t* out);
PEAK_API peak_status peak_gguf_get_array_float(const peak_gguf* gguf, size_t index, size_t i, double* out);
PEAK_API peak_status peak_gguf_get_array_bool(const peak_gguf* gguf, size_t index, size_t i, int* out);
PEAK_API peak_status peak_gguf_get_array_string(const peak_gguf* gguf, size_t index, size_t i, const char** data,
                                                size_t* length);

/* Tensors, by index 0..n_tensors-1. */
typedef struct peak_gguf_tensor_info {
  const char* name;   /* NUL-terminated, valid until peak_gguf_free */
  peak_type type;
  uint32_t n_dims;    /* 1..4 */
  int64_t ne[4];      /* elements per dimension, ne[0] is the row; unused dims are 1 */
  uint64_t offset;    /* byte offset from the start of the data section */
  uint64_t n_bytes;
} peak_gguf_tensor_info;

PEAK_API size_t peak_gguf_n_tensors(const peak_gguf* gguf);
PEAK_API peak_status peak_gguf_get_tensor(const peak_gguf* gguf, size_t index, peak_gguf_tensor_info* out);
/* The index of the tensor called `name` in *index; PEAK_ERR_NOT_FOUND, naming it,
   when the file has none. *index is only written on success. */
PEAK_API peak_status peak_gguf_lookup_tensor(const peak_gguf* gguf, const char* name, size_t* index);

/* ---- models ------------------------------------------------------------------- */

typedef struct peak_model peak_model;

/* Progress of a model load, 0..1; return 0 to cancel (the load then fails with
   PEAK_ERR_CANCELLED). */
typedef int (*peak_progress_fn)(float progress, void* user_data);

/* Whether and when matrices are stored in the CPU kernels' faster layout where
   there is one (Q4_0 on x86-64 with AVX-512; Q4_0 and Q8_0 on arm64). Only for
   mapped, unlocked files; the results are the same bit for bit. Repacking needs
   new memory the size of those matrices (their file pages are dropped as each
   is done), and mapping it in is most of its cost. */
typedef enum peak_repack {
  PEAK_REPACK_NONE = 0,        /* keep the file's layout */
  PEAK_REPACK_BACKGROUND = 1,  /* (default) after peak_model_load returns, on
                                  threads of the lowest priority; until a matrix
                                  is done, contexts read it as stored, at that
                                  layout's speed */
  PEAK_REPACK_AT_LOAD = 2      /* before peak_model_load returns (what a
                                  benchmark of the steady state wants) */
} peak_repack;

typedef struct peak_model_params {
  size_t struct_size;
  int use_mmap;               /* 1 (default): map the file; 0: read it into memory */
  int use_mlock;              /* 1: lock the weights in RAM (best effort) */
  int repack_weights;         /* a peak_repack value; results are the same for all */
  peak_progress_fn progress;  /* may be NULL */
  void* progress_user_data;
  int check_tensors;          /* 1: read every tensor once and refuse the model (PEAK_ERR_FORMAT)
                                 at the first NaN or infinite value, naming the tensor;
                                 vectors (norm weights, biases) are always checked */
} peak_model_params;

PEAK_API peak_model_params peak_model_default_params(void);

/* Loads a GGUF model (architectures llama, qwen2, qwen3, gemma2, gemma3, phi3,
   smollm3, and the encoder bert for peak_embedder). An unknown architecture, a missing tensor or a wrong shape is
   refused with a message naming it. */
PEAK_API peak_status peak_model_load(const char* path, const peak_model_params* params, peak_model** out);
/* Loads the GGUF held in bytes [offset, offset + length) of an open file: a
   model stored inside a larger file, such as an uncompressed asset of an
   Android APK (AssetFileDescriptor's fd, start offset and length) or a content
   URI's ParcelFileDescriptor (offset 0, its size). Every GGUF offset counts from
   `offset`, and every size is checked against `length`. The file must be a
   regular file holding the whole region: a pipe, socket or closed fd gives
   PEAK_ERR_IO; a negative fd, length 0 or a region past the end of the file
   PEAK_ERR_INVALID_ARGUMENT, naming the sizes. With use_mmap the region is mapped
   where it lies, so `offset` must be a multiple of 4, as zipalign aligns
   uncompressed entries (else PEAK_ERR_INVALID_ARGUMENT; use_mmap 0 reads it at
   any offset). peak reads the fd with pread, so its file position is neither
   used nor changed, and keeps no reference to it: close it when this returns. */
PEAK_API peak_status peak_model_load_fd(int fd, uint64_t offset, uint64_t length, const peak_model_params* params,
                                        peak_model** out);
/* Frees a model. Every context created from it must be freed first. */
PEAK_API void peak_model_free(peak_model* model);

/* n_params and the byte counts measure the file's tensor data, so they are
   uint64_t like the file's sizes. */
typedef struct peak_model_info {
  /* sizeof(peak_model_info), set before the call, or the size of an earlier
     version: the first ends at decode_bytes_per_token (offsetof(peak_model_info,
     name_length)), the second at name_length (offsetof(peak_model_info,
     is_encoder)). Only the fields that version has are written. */
  size_t struct_size;
  const char* architecture;    /* "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "smollm3", "bert" */
  const char* name;            /* general.name, "" if absent; may hold a NUL: see name_length */
  const char* chat_template;   /* "jinja" (the model's own template) or the built-in family, e.g. "chatml" */
  const char* chat_template_source; /* "embedded": the model's tokenizer.chat_template, rendered by
                                       peak's Jinja interpreter; "built-in": a family recognised in a
                                       template the interpreter cannot read; "fallback": ChatML, the
                                       model has no template peak can use */
  const char* chat_template_warning; /* "" for an embedded or recognised template; else why not */
  uint64_t n_params;
  uint64_t weight_bytes;
  size_t n_vocab;
  size_t n_ctx_train;          /* context length the model was trained with */
  size_t n_embd;
  size_t n_layer;
  size_t n_head;
  size_t n_head_kv;
  size_t head_dim;
  size_t n_ff;
  int32_t bos_token;           /* -1 when the model has none */
  int32_t eos_token;
  /* Weight bytes one decoded token reads: every tensor, less the token embedding
     when the model has a separate output matrix (only one embedding row is read). */
  uint64_t decode_bytes_per_token;
  size_t name_length; /* bytes of name, which the first NUL would cut short */
  /* New in the third version (a struct_size of offsetof(peak_model_info,
     is_encoder) is the second, which ends at name_length): */
  /* 1: an embedding model for peak_embedder (bert, nomic-bert, gemma-embedding, or a decoder
     whose file gives <arch>.pooling_type, such as Qwen3-Embedding, which contexts
     also take); 0: a decoder for contexts only */
  int is_encoder;
  int pooling; /* an encoder's own peak_pooling (never PEAK_POOLING_MODEL); PEAK_POOLING_NONE otherwise */
} peak_model_info;

/* Strings stay valid until peak_model_free. */
PEAK_API peak_status peak_model_get_info(const peak_model* model, peak_model_info* info);

/* ---- tokens ------------------------------------------------------------------- */

/* Text (any bytes, `length` of them) to token ids. add_special: add BOS/EOS as the
   model asks. parse_special: recognise control tokens written in the text, such as
   "<|im_end|>" (only when the text is trusted). On PEAK_ERR_BUFFER_TOO_SMALL
   *n_tokens holds the count needed. Text that is not empty but of which the
   vocabulary can spell no character (peak_text_unspelled) gives
   PEAK_ERR_INVALID_ARGUMENT, naming the characters, and *n_tokens 0. */
PEAK_API peak_status peak_tokenize(const peak_model* model, const char* text, size_t length, int add_special,
                                   int parse_special, int32_t* tokens, size_t capacity, size_t* n_tokens);
/* The characters of `text` the model's vocabulary has no token for, each once, in
   the order they first appear, then a NUL ("" when it can spell all of it);
   *characters_length as *length elsewhere. A byte-level BPE vocabulary without
   some of its 256 byte tokens drops them and a SentencePiece one without byte tokens
   makes them its unknown token, as llama.cpp does: peak_tokenize, peak_generate
   and a session's messages tokenize such text the same way, so ask this to tell
   the user what the model will not see. parse_special as for peak_tokenize. */
PEAK_API peak_status peak_text_unspelled(const peak_model* model, const char* text, size_t length, int parse_special,
                                         char* buf, size_t capacity, size_t* characters_length);
/* The bytes of one token (possibly part of a UTF-8 character), then a NUL. Control
   tokens give no bytes unless render_special. */
PEAK_API peak_status peak_token_to_piece(const peak_model* model, int32_t token, int render_special, char* buf,
                                         size_t capacity, size_t* length);
/* The text of a token sequence, then a NUL; remove_special drops the BOS/EOS
   tokenize added. */
PEAK_API peak_status peak_detokenize(const peak_model* model, const int32_t* tokens, size_t n_tokens,
                                     int remove_special, int render_special, char* buf, size_t capacity,
                                     size_t* length);
/* 1 if the token ends a generation (EOS, end of turn ...), else 0. */
PEAK_API int peak_token_is_eog(const peak_model* model, int32_t token);

/* Opens only the tokenizer of a GGUF file: a vocabulary-only file (such as
   llama.cpp's ggml-vocab-*.gguf, which has no tensors) or a whole model, whose
   tensor data is then never read; the file is closed before this returns. The
   handle serves the token functions above and peak_model_get_info (architecture
   and name from general.*, n_vocab, bos_token and eos_token; everything else 0
   or ""). peak_context_create, peak_context_memory_needed, peak_sampler_create,
   peak_session_create and peak_chat_apply_template refuse it with
   PEAK_ERR_INVALID_ARGUMENT. Free it with peak_model_free; it is immutable, like
   a model. */
PEAK_API peak_status peak_model_load_vocab(const char* path, peak_model** out);
/* The same from bytes [offset, offset + length) of an open file, as
   peak_model_load_fd reads them (any offset: nothing stays mapped). */
PEAK_API peak_status peak_model_load_vocab_fd(int fd, uint64_t offset, uint64_t length, peak_model** out);

/* ---- contexts ------------------------------------------------------------------- */

typedef struct peak_context peak_context;
typedef struct peak_pass_group peak_pass_group; /* see "pass groups" below */

typedef struct peak_context_params {
  size_t struct_size;
  size_t n_ctx;        /* KV cache cells, 1..INT32_MAX (default 4096) */
  size_t n_batch;      /* tokens per forward pass when prefilling (default 512) */
  size_t n_threads;    /* 0 (default): peak_default_threads(), the fast cores */
  peak_type type_k;    /* KV cache types: PEAK_TYPE_F16 (default), _F32, _Q8_0 or _Q4_0 */
  peak_type type_v;
  int logits_all;      /* 1: allow peak_context_eval_all_logits (reserves n_batch x n_vocab floats) */
  /* Since 0.6.0. Rows of logits one forward pass may hand out, 1 (default) or
     more (n_batch at most; larger is taken as n_batch): peak_generate's
     prompt lookup verifies a token and draft_max drafted tokens in one pass,
     and needs draft_max + 1. Each row reserves n_vocab floats. */
  size_t max_logit_rows;
  /* Since 0.7.0: evaluate in forward passes shared with the group's other
     contexts and sessions (peak_pass_group_create); NULL (default): alone. */
  peak_pass_group* pass_group;
} peak_context_params;

PEAK_API peak_context_params peak_context_default_params(void);

/* Creates a context on a model; everything it needs is allocated here, so
   evaluating tokens later allocates nothing. */
PEAK_API peak_status peak_context_create(const peak_model* model, const peak_context_params* params,
                                         peak_context** out);
PEAK_API void peak_context_free(peak_context* ctx);
/* The memory (bytes) peak_context_create would take with these parameters: the
   KV cache, computed without allocating it, plus the compute and logits
   buffers. Lets a program refuse a context that cannot fit before creating it. */
PEAK_API peak_status peak_context_memory_needed(const peak_model* model, const peak_context_params* params,
                                                size_t* bytes);

/* What loading a model and creating a context on it would take, in bytes. */
typedef struct peak_memory_estimate {
  size_t struct_size;       /* set to sizeof(peak_memory_estimate) before the call */
  /* The weights: the file's tensor bytes when mapped (pages the system may
     drop and read again, counted in the process's resident size once read);
     the whole file or region when use_mmap is 0 (heap memory). */
  uint64_t weight_bytes;
  /* New memory for matrices repacked to the kernels' layout (mapped, unlocked,
     repack_weights not PEAK_REPACK_NONE; see peak_repack). Each matrix's file
     pages are dropped once it is repacked, so a settled model holds about
     weight_bytes in all; while it repacks, up to both. */
  uint64_t repacked_bytes;
  size_t kv_bytes;          /* the context's KV cache */
  size_t compute_bytes;     /* its compute, work and logits buffers */
  /* The sum: an upper bound on what the model and the context hold, but for
     the tokenizer's tables (a few MB for a 150k-token vocabulary). */
  uint64_t total_bytes;
} peak_memory_estimate;

/* Computes, before loading, what peak_model_load(path, model_params) and then
   peak_context_create(model, context_params) would take, from the file's
   metadata: the file is mapped and its header read, its tensor data never (it
   is not checked either: a load may still refuse the model for its values).
   Either params may be NULL for the defaults. Refuses what the load and
   peak_context_memory_needed refuse for the metadata and the parameters. A
   requested use_mlock is taken to succeed. So an app can refuse a model too
   large for the device gracefully, e.g. when total_bytes exceeds what its
   ActivityManager.MemoryInfo leaves. */
PEAK_API peak_status peak_model_estimate_memory(const char* path, const peak_model_params* model_params,
                                                const peak_context_params* context_params,
                                                peak_memory_estimate* estimate);
/* The same for a GGUF in bytes [offset, offset + length) of an open file, as
   peak_model_load_fd reads it. */
PEAK_API peak_status peak_model_estimate_memory_fd(int fd, uint64_t offset, uint64_t length,
                                                   const peak_model_params* model_params,
                                                   const peak_context_params* context_params,
                                                   peak_memory_estimate* estimate);

PEAK_API size_t peak_context_n_ctx(const peak_context* ctx);
/* Tokens in the KV cache. */
PEAK_API size_t peak_context_n_used(const peak_context* ctx);
/* Threads for the next evaluations (0: peak_default_threads()), at most as many
   as the context was created with. */
PEAK_API peak_status peak_context_set_threads(peak_context* ctx, size_t n_threads);

/* Appends tokens to the context's sequence and runs the model over them; then
   peak_context_get_logits returns the last token's logits. PEAK_ERR_CONTEXT_FULL
   when they do not fit (nothing is evaluated then). */
PEAK_API peak_status peak_context_eval(peak_context* ctx, const int32_t* tokens, size_t n_tokens);
/* Like peak_context_eval, also writing every token's logits (n_tokens x n_vocab
   floats) to `logits`; needs a context created with logits_all. */
PEAK_API peak_status peak_context_eval_all_logits(peak_context* ctx, const int32_t* tokens, size_t n_tokens,
                                                  float* logits);
/* Appends n_rows embedding rows (n_rows x peak_model_info.n_embd floats, row by
   row) to the context's sequence, as peak_context_eval appends tokens: an
   image's tokens from peak_image_encode, taking the place of token embeddings
   (they enter the layers as they are). With `bidirectional` 1 the rows also
   attend to each other both ways (Gemma 3's image tokens:
   peak_projector_info.bidirectional), which needs them in one batch (n_rows
   at most the context's n_batch). Then peak_context_get_logits returns the
   last row's logits. A value that is not finite is PEAK_ERR_INVALID_ARGUMENT
   naming its row; PEAK_ERR_CONTEXT_FULL when the rows do not fit (nothing is
   evaluated then). */
PEAK_API peak_status peak_context_eval_embeddings(peak_context* ctx, const float* rows, size_t n_rows,
                                                  int bidirectional);
/* Since 0.11.0: appends a picture's frame of n_rows image tokens
   (peak_picture_layout.tokens_per_frame), token_cols across, row by row
   (peak_picture_layout.token_cols, at least 1; n_rows a whole number of
   rows), as the language model places them: a model with multimodal rotary
   positions (llama.cpp's qwen2vl: Qwen2-VL and Qwen2.5-VL) gives them all
   one position, each turned by its row and column, and the token after them
   comes one past the frame's larger side (as Hugging Face's get_rope_index);
   other models take them one after another, as peak_context_eval_embeddings
   with bidirectional 0. Fails as peak_context_eval_embeddings does. */
PEAK_API peak_status peak_context_eval_picture(peak_context* ctx, const float* rows, size_t n_rows,
                                               uint32_t token_cols);
/* The last evaluated token's logits (n_vocab floats), valid until the next eval. */
PEAK_API const float* peak_context_get_logits(const peak_context* ctx);

/* KV cache editing: forget everything; remove cells [first, first+n) (later cells
   move down, keeping their positions); move cells [first, first+n) by `delta`
   positions, re-rotating their keys. */
PEAK_API peak_status peak_context_kv_clear(peak_context* ctx);
PEAK_API peak_status peak_context_kv_remove(peak_context* ctx, size_t first, size_t n);
PEAK_API peak_status peak_context_kv_shift(peak_context* ctx, size_t first, size_t n, int32_t delta);

/* ---- pass groups: several sequences in one forward pass --------------------------- */

/* Decode reads every weight once per step, whether the step computes one
   token or several: contexts (and sessions) that step at the same time, such
   as a server's slots, gain by stepping in one pass. A group runs the passes
   of its members: each member's thread hands its tokens to the group and
   waits; one pass then takes the waiting members' tokens together, each
   sequence attending to its own KV cache. A pass starts once the members of
   the last pass are all back (so streams step in lockstep), when it is full,
   or when the oldest waited gather_wait_us. A member's prompt goes through
   in chunks of prefill_chunk tokens, one per pass, beside the others' steps,
   so a long prompt delays the others' next tokens by one chunk's time at
   most. A member alone never waits.

   What goes through the group: peak_context_eval (not peak_context_eval_all_
   logits), generation, and the verification of drafts (prompt lookup's or a
   draft model's; draft_max + 1 <= max_logit_rows), while the member's
   adapters are the group's; anything else evaluates on the member's own
   graph. A draft model's context may be a member of a group of the draft
   model (peak_context_params.pass_group of peak_draft_model_create).

   Thread-safety: members may evaluate from any threads at the same time (that
   is the point); peak_pass_group_get_stats from any thread. Free every member
   before the group. */
typedef struct peak_pass_group_params {
  size_t struct_size;
  size_t n_ctx;         /* KV cells of the largest member (default 4096); a larger member grows the plan as it joins */
  size_t max_sequences; /* sequences in one pass, 1..64 (default 4) */
  size_t prefill_chunk; /* prompt tokens of one member in one pass (default 128) */
  size_t
      max_logit_rows; /* rows of logits one sequence takes from a pass: 1 (default), draft_max + 1 for prompt lookup */
  size_t n_threads;   /* 0 (default): peak_default_threads() */
  /* The members' KV cache types; default PEAK_TYPE_Q8_0, a session's default
     (F16 where the head size is not a multiple of 32, for both). */
  peak_type type_k, type_v;
  size_t gather_wait_us; /* default 3000 */
  /* The adapters of the members that share passes (NULL: none); a member
     with others evaluates alone. The group keeps its own reference. */
  const struct peak_adapter_set_params* adapters;
} peak_pass_group_params;

PEAK_API peak_pass_group_params peak_pass_group_default_params(void);
PEAK_API peak_status peak_pass_group_create(const peak_model* model, const peak_pass_group_params* params,
                                            peak_pass_group** out);
PEAK_API void peak_pass_group_free(peak_pass_group* group);

#define PEAK_PASS_GROUP_MAX_SEQUENCES 64

typedef struct peak_pass_group_stats {
  size_t struct_size; /* set to sizeof(peak_pass_group_stats) before the call */
  uint64_t passes;    /* forward passes run for the members */
  uint64_t sequences; /* summed over the passes: passes / sequences is the mean batch */
  uint64_t tokens;    /* evaluated in the passes */
  /* passes_by_sequences[k - 1]: passes that took k sequences. */
  uint64_t passes_by_sequences[PEAK_PASS_GROUP_MAX_SEQUENCES];
} peak_pass_group_stats;

PEAK_API peak_status peak_pass_group_get_stats(const peak_pass_group* group, peak_pass_group_stats* stats);

/* ---- draft models ---------------------------------------------------------------- */

/* Since 0.8.0: a draft model for speculative decoding. A smaller model of the
   target's vocabulary (the same tokens with the same texts: Qwen3 0.6B for
   Qwen3 4B, for example) proposes the next tokens, and the target verifies a
   token and the draft in one pass (peak_generate_params.draft_model). The
   draft model has a context of its own, created here with `params` (NULL:
   the defaults; its n_ctx need not be the target's: a longer text is followed
   by a window of its end), and remembers the tokens it holds, so each
   generation evaluates there only what is new since the last one (the
   longest common prefix is kept).

   Thread-safety: one generation uses a draft model at a time; different draft
   models are independent. `model` must outlive it. */
typedef struct peak_draft_model peak_draft_model;

PEAK_API peak_status peak_draft_model_create(const peak_model* model, const peak_context_params* params,
                                             peak_draft_model** out);
PEAK_API void peak_draft_model_free(peak_draft_model* draft);

/* ---- sampling ------------------------------------------------------------------- */

typedef struct peak_sampler peak_sampler;

/* A chain: repetition penalties, top-k, top-p, min-p, temperature, then a seeded
   draw (greedy when temperature is 0). Same seed and inputs give the same tokens
   on every platform.

   With a grammar (GBNF, the syntax of llama.cpp's GBNF Guide), a grammar stage
   runs first: a token is chosen only when its bytes continue the text generated
   so far toward a string of the grammar (tokens may cut through rules and UTF-8
   characters), an end-of-generation token only where the text is a whole string
   of it, a control token never (GBNF has no syntax to name one). The grammar
   reads the tokens peak_sampler_accept records, not those of
   peak_sampler_accept_prompt; peak_generate hands it the generated tokens only,
   and stops with PEAK_STOP_EOG once the text is a whole string of the grammar
   that nothing can follow. The grammar's state lasts until peak_sampler_reset
   (a new text starts there). */
typedef struct peak_sampler_params {
  size_t struct_size;
  float temperature;        /* >= 0; 0 = greedy. Default 0.8 */
  size_t top_k;             /* 0 = off. Default 40 */
  float top_p;              /* (0, 1]; 1 = off. Default 0.95 */
  float min_p;              /* [0, 1]; 0 = off. Default 0.05 */
  size_t penalty_last_n;    /* tokens the penalties look back over. Default 64 */
  float repeat_penalty;     /* 1 = off (default) */
  float frequency_penalty;  /* 0 = off (default) */
  float presence_penalty;   /* 0 = off (default) */
  uint64_t seed;
  /* GBNF text, NUL-terminated; NULL (default): no grammar. Copied at creation. A
     grammar that does not compile makes peak_sampler_create fail with
     PEAK_ERR_INVALID_ARGUMENT, the message naming the line and column. In a
     session it holds each answer (see peak_session_params.sampler). */
  const char* grammar;
  const char* grammar_root; /* the start rule of `grammar`; NULL (default): "root" */
  /* A JSON Schema, NUL-terminated JSON text, instead of `grammar`: the text must
     be JSON that satisfies it, as llama.cpp's --json-schema constrains it (its
     grammar is peak_grammar_from_json_schema's). "{}" allows any JSON value;
     OpenAI's response_format {"type": "json_object"} is the schema
     {"type": "object"}: any JSON object. NULL (default): none. Setting it with
     `grammar` or `grammar_root` is PEAK_ERR_INVALID_ARGUMENT naming both; a schema
     that cannot be converted gives PEAK_ERR_INVALID_ARGUMENT, the message
     "at POINTER: ..." naming the subschema (a JSON pointer, or "the root"). */
  const char* json_schema;
  /* Preserved tokens: control tokens that count as their text, e.g. a model's
     tool-call marker "<|tool_call|>" that it writes as one token. A grammar
     allows one where its text can continue the grammar (other control tokens
     never), and peak_generate streams its text (other control tokens write
     nothing). n_preserved_tokens ids in any order; NULL with 0 (default):
     none. Read during peak_sampler_create only (copied): the array may change
     or go afterwards. A token outside the vocabulary, listed twice, or not a
     control token with text makes it fail with PEAK_ERR_INVALID_ARGUMENT
     naming the token. New in the second version of this struct: a struct_size
     that ends at json_schema is still taken (no preserved tokens). */
  const int32_t* preserved_tokens;
  size_t n_preserved_tokens;
} peak_sampler_params;

PEAK_API peak_sampler_params peak_sampler_default_params(void);
PEAK_API peak_status peak_sampler_create(const peak_model* model, const peak_sampler_params* params,
                                         peak_sampler** out);
PEAK_API void peak_sampler_free(peak_sampler* sampler);
/* Picks a token from the context's last logits (does not accept it). */
PEAK_API peak_status peak_sampler_sample(peak_sampler* sampler, const peak_context* ctx, int32_t* token);
/* Records a generated token: for the penalties, and the grammar reads its bytes.
   PEAK_ERR_INVALID_ARGUMENT, recording nothing, for a token the grammar does not
   allow here. */
PEAK_API peak_status peak_sampler_accept(peak_sampler* sampler, int32_t token);
/* Records a token of the prompt (or of anything else the model reads but the
   grammar does not): for the penalties only. */
PEAK_API peak_status peak_sampler_accept_prompt(peak_sampler* sampler, int32_t token);
/* Forgets accepted tokens, restarts the random sequence from the seed and the
   grammar from its start. */
PEAK_API void peak_sampler_reset(peak_sampler* sampler);

/* ---- grammars ------------------------------------------------------------------- */

/* A compiled grammar an application uses on its own: to tell whether a text
   (a model's output, a test's expectation) is a whole string of it, the start
   of one, or neither. The same grammars and verdicts as sampling with
   peak_sampler_params.grammar or .json_schema. Immutable once created: any
   number of threads may check texts against one grammar at once (each check
   has its own state). */
typedef struct peak_grammar peak_grammar;

typedef enum peak_grammar_verdict {
  PEAK_GRAMMAR_COMPLETE = 0, /* the text is a whole string of the grammar */
  PEAK_GRAMMAR_PREFIX = 1,   /* it is not, but some continuation makes it one */
  PEAK_GRAMMAR_REJECTED = 2  /* no continuation makes it one */
} peak_grammar_verdict;

/* Compiles GBNF text (NUL-terminated; llama.cpp's GBNF Guide) from the rule
   `root` (NULL: "root"). A grammar that does not compile gives
   PEAK_ERR_INVALID_ARGUMENT, the message naming the line and column. On
   failure *out is set to NULL. */
PEAK_API peak_status peak_grammar_create(const char* gbnf, const char* root, peak_grammar** out);
/* The grammar of a JSON Schema (NUL-terminated JSON text), as for
   peak_sampler_params.json_schema: a schema that cannot be converted gives
   PEAK_ERR_INVALID_ARGUMENT with "at POINTER: ..." naming the subschema. */
PEAK_API peak_status peak_grammar_from_json_schema(const char* json_schema, peak_grammar** out);
PEAK_API void peak_grammar_free(peak_grammar* grammar);
/* The verdict on `length` bytes of `text` (UTF-8; bytes that are not strict
   UTF-8 are rejected), read from the grammar's start. text may be NULL when
   length is 0. A grammar so ambiguous that the matcher's bounds are reached
   before it can tell gives PEAK_ERR_UNSUPPORTED; *verdict is only written on
   success. */
PEAK_API peak_status peak_grammar_check(const peak_grammar* grammar, const char* text, size_t length,
                                        peak_grammar_verdict* verdict);

/* ---- generation ----------------------------------------------------------------- */

/* Receives generated text: `length` bytes of whole UTF-8 characters, with a NUL
   at text[length]; valid during the call. Return 0 to stop generating. */
typedef int (*peak_text_fn)(const char* text, size_t length, void* user_data);

/* What a piece of generated text is. */
typedef enum peak_text_kind {
  PEAK_TEXT_ANSWER = 0,    /* the answer (all of a plain completion) */
  PEAK_TEXT_REASONING = 1  /* a thinking model's reasoning, without its <think> markers (sessions) */
} peak_text_kind;

/* As peak_text_fn, with the piece's kind. */
typedef int (*peak_kinded_text_fn)(const char* text, size_t length, peak_text_kind kind, void* user_data);

typedef enum peak_stop_reason {
  PEAK_STOP_EOG = 0,          /* end-of-generation token */
  PEAK_STOP_MAX_TOKENS = 1,
  PEAK_STOP_CONTEXT_FULL = 2,
  PEAK_STOP_CALLBACK = 3,     /* on_text returned 0 */
  PEAK_STOP_ABORTED = 4       /* *abort_flag became non-zero */
} peak_stop_reason;

typedef struct peak_generate_params {
  size_t struct_size;
  size_t max_tokens;          /* SIZE_MAX (or anything above INT32_MAX): no limit. Default 256 */
  int add_special;            /* start the sequence with BOS (and EOS ...) as the model asks, when the
                                 context holds no tokens yet; a continuation never gets them. Default 1 */
  int parse_special;          /* recognise control tokens ("<|im_end|>") in the prompt, for text you
                                 trust, e.g. from peak_chat_apply_template; set 0 for a user's text,
                                 which then cannot forge a control token. Default 1 */
  peak_text_fn on_text;       /* may be NULL */
  /* When not NULL, receives every piece with its kind, instead of on_text. With
     on_text alone a session passes on only the answer. */
  peak_kinded_text_fn on_kinded_text;
  void* user_data;
  /* When not NULL, read with an atomic load (relaxed) while the prompt is
     evaluated (before each batch of n_batch tokens and between the steps of
     each: a stop takes effect within a small part of a batch) and before every
     token generated. Once it is non-zero (any non-zero value): during the
     prompt, the call fails with PEAK_ERR_CANCELLED and leaves the context and
     the sampler as they were before it (peak_session_chat: the session, as for
     any failed turn); after it, generation stops with PEAK_STOP_ABORTED and
     PEAK_OK, keeping the prompt and what was generated. A flag already set
     when the call starts cancels it before anything is evaluated (an empty
     prompt, with nothing to evaluate, stops at PEAK_STOP_ABORTED). Another
     thread sets it with an atomic store on the int, e.g. C11
     atomic_store_explicit((_Atomic int*)flag, 1, memory_order_relaxed) or GCC's
     __atomic_store_n(flag, 1, __ATOMIC_RELAXED): a plain store from another
     thread is a data race. A signal handler running on the generating thread
     may use a plain store. The library never writes it: clear it before reusing
     it for the next call. */
  const volatile int* abort_flag;
  /* Since 0.6.0: speculative decoding by prompt lookup (peak_generate, and
     the turns of a session created with max_logit_rows >= 2, which also
     search the conversation the model reads). 0 (default): off. N > 0: after each token, the
     longest n-gram of N down to 2 tokens that ends the text (the context's
     prompt and what was generated) and occurred in it before proposes the
     tokens that followed it there, at most draft_max (default 4); one pass
     evaluates the token with them, and each token of the draft is kept while
     the sampler draws it. The text is the one generated without drafts, at
     any temperature: every token is drawn by the same sampler call from the
     same logits (computed in a batch instead of alone: equal up to the order
     of float sums). Faster where the output repeats its input (summaries,
     edits, quotes); the context needs max_logit_rows >= 2. */
  int lookup_ngram;
  int draft_max;
  /* Since 0.8.0: speculative decoding with a draft model (peak_draft_model_
     create; NULL, the default: none; not with lookup_ngram > 0). After each
     token the draft model, following the text (peak_generate: the context's
     prompts and what was generated since it was last empty; a session: the
     conversation the model reads), drafts up to draft_max tokens, sampling
     with a copy of the sampler (its penalties and grammar, a random sequence
     of its own) while its probability of its choice is at least draft_p_min
     (default 0.75; 0 drafts draft_max always). At temperature 0 the text is the
     one generated without drafts, as with prompt lookup. At temperature > 0
     each drafted token is kept or refused by speculative sampling (kept with
     probability min(1, p/q) for the target's p and the draft's q, else a
     token drawn from the residual max(0, p - q)): the text has the
     distribution it has without a draft, drawn with other random numbers.
     The context needs max_logit_rows >= 2 (draft_max + 1 for whole drafts);
     a draft model of another vocabulary is refused, naming the first token
     that differs. */
  peak_draft_model* draft_model;
  float draft_p_min;
} peak_generate_params;

typedef struct peak_generate_result {
  size_t struct_size;         /* set to sizeof(peak_generate_result) before the call */
  size_t n_prompt_tokens;
  size_t n_generated_tokens;
  peak_stop_reason stop_reason;
  double prompt_seconds;
  double generate_seconds;
  /* Since 0.6.0 (a struct_size of the earlier version gets the fields above
     only): the tokens drafted (prompt lookup or a draft model), and of them
     those kept (the acceptance rate is their ratio). */
  size_t n_drafted_tokens;
  size_t n_accepted_tokens;
} peak_generate_result;

PEAK_API peak_generate_params peak_generate_default_params(void);

/* Tokenizes `prompt`, appends it to the context, then generates, streaming text to
   on_text. The prompt and the generated tokens stay in the context, so the next call
   continues the sequence; the last generated token is not evaluated when generation
   stopped with PEAK_STOP_EOG, _CALLBACK or _CONTEXT_FULL. BOS: with add_special, only a
   context that holds no tokens (new, or after peak_context_kv_clear) starts with BOS
   where the model adds one (tokenizer.ggml.add_bos_token); a prompt appended to
   tokens already there never gets BOS. An empty prompt continues the context as it
   is (from its last logits); on an empty context it is BOS alone (generation from
   nothing, as llama.cpp does), or
   PEAK_ERR_INVALID_ARGUMENT when no BOS is added. A prompt of which the vocabulary
   can spell no character is not empty: PEAK_ERR_INVALID_ARGUMENT, naming the
   characters (peak_text_unspelled). `result` may be NULL. */
PEAK_API peak_status peak_generate(peak_context* ctx, peak_sampler* sampler, const char* prompt, size_t length,
                                   const peak_generate_params* params, peak_generate_result* result);

/* ---- embeddings ------------------------------------------------------------------ */

/* Turns texts into vectors with an embedding model (peak_model_info.is_encoder:
   bert, such as BGE or all-MiniLM; nomic-embed-text; EmbeddingGemma; Qwen3-Embedding), for search
   and retrieval. Many short texts
   share each forward pass; there is no KV cache. A peak_embedder is used by one
   thread at a time; several embedders may share one model, each on its own
   thread. */
typedef struct peak_embedder peak_embedder;

/* How a text's last hidden states become its output, numbered as llama.cpp
   numbers `<arch>.pooling_type`. */
typedef enum peak_pooling {
  PEAK_POOLING_MODEL = -1, /* the model's own (peak_model_info.pooling) */
  PEAK_POOLING_NONE = 0,   /* no pooling: one vector per token */
  PEAK_POOLING_MEAN = 1,   /* the mean of the tokens' vectors */
  PEAK_POOLING_CLS = 2,    /* the first token's ([CLS]) */
  PEAK_POOLING_LAST = 3,   /* the last token's */
  PEAK_POOLING_RANK = 4    /* a reranker's: the classification head's score, for peak_rerank (peak_embed refuses it) */
} peak_pooling;

typedef struct peak_embedder_params {
  size_t struct_size;
  size_t n_batch;   /* tokens per forward pass, hence the longest text in tokens; 0 (default): the
                       model's training context (peak_model_info.n_ctx_train), its most */
  size_t n_threads; /* 0 (default): peak_default_threads(), the fast cores */
} peak_embedder_params;

PEAK_API peak_embedder_params peak_embedder_default_params(void);

/* Creates an embedder on a model (params NULL: the defaults); the compute
   buffers for a full batch are allocated here. A decoder model (a chat model)
   is refused with PEAK_ERR_INVALID_ARGUMENT, naming its architecture. Free the
   embedder before its model. */
PEAK_API peak_status peak_embedder_create(const peak_model* model, const peak_embedder_params* params,
                                          peak_embedder** out);
PEAK_API void peak_embedder_free(peak_embedder* embedder);
/* Floats per vector (the model's n_embd); 0 for NULL. */
PEAK_API size_t peak_embedder_n_embd(const peak_embedder* embedder);

typedef struct peak_embed_params {
  /* sizeof(peak_embed_params), or the first version's size (offsetof(peak_embed_params,
     dimensions), ending at normalize): its callers get the defaults of the fields after. */
  size_t struct_size;
  int pooling;   /* a peak_pooling; default PEAK_POOLING_MODEL */
  int normalize; /* 1 (default): scale each vector to Euclidean length 1 (a zero vector stays zero) */
  /* New in the second version: */
  /* Matryoshka embeddings (OpenAI's `dimensions`): each vector keeps its first
     `dimensions` floats, then is normalised when `normalize`, so the output has
     `dimensions` floats per vector. 0 (default): all n_embd. More than n_embd is
     PEAK_ERR_INVALID_ARGUMENT naming the value and n_embd. */
  size_t dimensions;
  /* 0 (default): a text longer than the embedder's n_batch tokens is refused.
     1: it is cut to its first n_batch tokens; when it ends with the token the
     tokenizer appends ([SEP] for a WordPiece vocabulary, else EOS when the
     model adds one), that token stays last, after the first n_batch - 1 (as
     sentence-transformers truncates). */
  int truncate;
} peak_embed_params;

PEAK_API peak_embed_params peak_embed_default_params(void);

/* Embeds n_texts texts (texts[i], lengths[i] bytes, any bytes), each tokenized
   with the model's tokenizer as peak_tokenize does with add_special (a BERT
   vocabulary adds [CLS] and [SEP]) and without parse_special. Writes the
   vectors one after another to `out` (capacity floats) and their float count
   to *n_floats: n_texts x n_embd when pooled; with PEAK_POOLING_NONE each
   text's tokens' vectors, so n_vectors (NULL, or n_texts entries) tells how
   many vectors each text got (1 when pooled). params NULL: the defaults.
   Each vector has params->dimensions floats when set, else n_embd.
   Everything is checked before anything runs: an empty text, a NULL text, one
   of which the vocabulary can spell no character, or (unless params->truncate)
   one of more tokens than the embedder's n_batch is refused with
   PEAK_ERR_INVALID_ARGUMENT naming the text's index (the first such text); a
   buffer too small gives
   PEAK_ERR_BUFFER_TOO_SMALL with the floats needed in *n_floats (out may then
   be NULL with capacity 0, to ask for it; n_vectors is filled either way).
   n_texts 0 writes nothing. A reranker (rank pooling) gives scores, not
   vectors: peak_embed refuses it, see peak_rerank. */
PEAK_API peak_status peak_embed(peak_embedder* embedder, const char* const* texts, const size_t* lengths,
                                size_t n_texts, const peak_embed_params* params, float* out, size_t capacity,
                                size_t* n_floats, size_t* n_vectors);

/* As peak_embed, for texts already tokenized (OpenAI's token-id input):
   sequence i is n_tokens[i] ids at tokens[i], embedded as they are (nothing
   added: give [CLS] ... [SEP] as peak_tokenize with add_special makes them).
   With PEAK_POOLING_NONE a truncated sequence gets n_batch vectors. Checked
   before anything runs, naming the sequence's index (the first such): a NULL
   or empty sequence, an id outside the vocabulary (and its position), and
   (unless params->truncate) more ids than the embedder's n_batch are
   PEAK_ERR_INVALID_ARGUMENT. A reranker is refused, as by peak_embed. */
PEAK_API peak_status peak_embed_tokens(peak_embedder* embedder, const int32_t* const* tokens, const size_t* n_tokens,
                                       size_t n_sequences, const peak_embed_params* params, float* out, size_t capacity,
                                       size_t* n_floats, size_t* n_vectors);

/* ---- images: pictures and image encoders ----------------------------------------- */

/* A picture in memory: 8-bit RGB, or RGBA when it carries transparency. Made
   from a PNG or JPEG file's bytes (peak decodes them itself: PNG of every
   colour type and depth, interlaced or not; baseline and progressive JPEG,
   turned upright by its EXIF orientation) or from pixels (an Android Bitmap's
   ARGB_8888 buffer is RGBA). Immutable once made: any thread may read it. */
typedef struct peak_image peak_image;

/* Decodes a PNG or JPEG file's `size` bytes (which peak does not keep). A file
   it cannot read gives PEAK_ERR_FORMAT naming the format and the reason ("PNG:
   bad CRC in chunk IHDR", "JPEG: truncated file (in scan 2)"), as does another
   format; pictures past 16384 pixels a side or 64 Mi pixels are refused
   before anything is allocated. */
PEAK_API peak_status peak_image_decode(const uint8_t* data, size_t size, peak_image** out);
/* Copies `height` rows of `width` pixels of `channels` bytes (3: RGB, 4: RGBA,
   straight alpha), each row `stride` bytes after the one before (0: width x
   channels). Sizes past the decoder's limits, a stride shorter than a row or
   another channel count are PEAK_ERR_INVALID_ARGUMENT. */
PEAK_API peak_status peak_image_from_pixels(const uint8_t* pixels, uint32_t width, uint32_t height, uint32_t channels,
                                            size_t stride, peak_image** out);
PEAK_API void peak_image_free(peak_image* image);
/* The picture's size and channels (3 or 4); any output may be NULL. */
PEAK_API peak_status peak_image_get_size(const peak_image* image, uint32_t* width, uint32_t* height,
                                         uint32_t* channels);

/* An image encoder: the vision tower and projector of a vision-language model,
   from its projector file (llama.cpp's mmproj-*.gguf, general.architecture
   "clip"; projector types: gemma3, idefics3 (SmolVLM: a picture cut into
   tiles and an overview), qwen2.5vl_merger (Qwen2.5-VL: a picture kept near
   its own size; peak runs its image encoder, not yet its language model,
   whose positions are two-dimensional)). It turns a picture into the
   embeddings of its image tokens in the language model's width. Immutable once loaded:
   several encoders, on several threads, may share one. */
typedef struct peak_projector peak_projector;

/* Loads a projector file; of the params, use_mmap, use_mlock and
   check_tensors apply (NULL: the defaults). A language model's file, an
   unknown projector type, a missing tensor or a wrong shape is refused with a
   message naming it. */
PEAK_API peak_status peak_projector_load(const char* path, const peak_model_params* params, peak_projector** out);
/* As peak_model_load_fd, for a projector file inside a larger one. */
PEAK_API peak_status peak_projector_load_fd(int fd, uint64_t offset, uint64_t length, const peak_model_params* params,
                                            peak_projector** out);
/* Frees a projector. Every image encoder created from it must be freed first. */
PEAK_API void peak_projector_free(peak_projector* projector);

typedef struct peak_projector_info {
  size_t struct_size;
  const char* projector_type; /* "gemma3" (clip.projector_type), valid while the projector lives */
  uint32_t image_size;        /* pictures are resized to image_size x image_size pixels */
  uint32_t patch_size;        /* cut into patches of patch_size a side */
  uint32_t n_image_tokens;    /* embeddings per frame of an image_size x image_size picture: a
                                 picture is one frame or several, Qwen2.5-VL's of its own size
                                 (peak_projector_picture_layout) */
  uint32_t n_embd;            /* floats per embedding: the language model's width */
  uint64_t n_params;
  uint64_t size_bytes; /* the file's tensor data */
  /* How the language model takes a picture of one frame (the model's
     processor): the text before its tokens and after them (Gemma 3:
     "\n\n<start_of_image>" and "<end_of_image>\n\n"; tokenize them with
     parse_special), and whether a frame's tokens attend to each other both
     ways (peak_context_eval_embeddings). */
  const char* image_prefix;
  const char* image_suffix;
  int bidirectional;
} peak_projector_info;

/* Fills *info (set info->struct_size first). */
PEAK_API peak_status peak_projector_get_info(const peak_projector* projector, peak_projector_info* info);

/* Since 0.10.0: how a picture of width x height pixels enters the language
   model, as the model's processor frames it: n_frames runs of
   tokens_per_frame image tokens (peak_image_encode writes them all, frame
   after frame), with a text before each and one after the last
   (peak_projector_frame_text). Gemma 3: one frame. SmolVLM: the picture
   resized so its longest edge is the processor's (2048 pixels for
   SmolVLM-256M), cut into grid_rows x grid_cols tiles of image_size, row by
   row, then an overview of the whole; a picture that makes one tile is not
   cut (grid_rows = grid_cols = 0, one frame). Qwen2.5-VL: one frame of the
   picture's own size (Hugging Face's smart_resize), token_cols x
   (tokens_per_frame / token_cols) tokens, which its language model places by
   row and column (peak_context_eval_picture). */
typedef struct peak_picture_layout {
  size_t struct_size;
  uint32_t n_frames;
  uint32_t tokens_per_frame;
  uint32_t grid_rows; /* tiles down, 0: not cut */
  uint32_t grid_cols; /* tiles across */
  /* Since 0.11.0: a frame's tokens across for a projector that sizes each
     picture (Qwen2.5-VL's), whose language model places them by row and
     column; 0 for the others, whose tokens follow one another. */
  uint32_t token_cols;
} peak_picture_layout;

/* Fills *layout (set layout->struct_size first; the size of 0.10.0's
   struct, without token_cols, is taken too) for a picture of width x height
   pixels (each at least 1). */
PEAK_API peak_status peak_projector_picture_layout(const peak_projector* projector, uint32_t width, uint32_t height,
                                                   peak_picture_layout* layout);
/* Since 0.10.0: the text before frame `index` of a picture of width x height
   pixels (index n_frames: the text after the last), to tokenize with
   parse_special, as UTF-8 with a terminating NUL in `out` (SmolVLM's first
   tile: "<fake_token_around_image><row_1_col_1>"); *length is its length
   without the NUL. A buffer too small gives PEAK_ERR_BUFFER_TOO_SMALL,
   writing nothing (out may be NULL with capacity 0, to ask). */
PEAK_API peak_status peak_projector_frame_text(const peak_projector* projector, uint32_t width, uint32_t height,
                                               uint32_t index, char* out, size_t capacity, size_t* length);

typedef struct peak_image_encoder peak_image_encoder;

typedef struct peak_image_encoder_params {
  size_t struct_size;
  size_t n_threads; /* 0 (default): peak_default_threads(), the fast cores */
} peak_image_encoder_params;

PEAK_API peak_image_encoder_params peak_image_encoder_default_params(void);
/* Creates an encoder (params NULL: the defaults); its compute buffers are
   allocated here. Used by one thread at a time. Free it before its projector. */
PEAK_API peak_status peak_image_encoder_create(const peak_projector* projector, const peak_image_encoder_params* params,
                                               peak_image_encoder** out);
PEAK_API void peak_image_encoder_free(peak_image_encoder* encoder);
/* Encodes a picture of any size (resized as the model's own processor does:
   Gemma 3's bilinear to 896 x 896, SmolVLM's Lanczos and tiles; transparency
   dropped) into the embeddings of its image tokens, n_embd floats each, token
   by token and frame after frame (peak_projector_picture_layout: n_frames x
   tokens_per_frame tokens), written to `out` (capacity floats). A buffer too small gives PEAK_ERR_BUFFER_TOO_SMALL with
   the floats needed in *n_floats (out may be NULL with capacity 0, to ask). */
PEAK_API peak_status peak_image_encode(peak_image_encoder* encoder, const peak_image* image, float* out,
                                       size_t capacity, size_t* n_floats);

/* Since 0.9.0: what peak_projector_load(path, params) and then
   peak_image_encoder_create(projector, encoder_params) would take, from the
   file's metadata alone (its tensor data is never read), as
   peak_model_estimate_memory for a model: weight_bytes the file's tensors (or
   the whole file without use_mmap), repacked_bytes the projector matrix made
   a product's layout (its own memory), kv_bytes 0, compute_bytes the
   encoder's buffers and the image tokens of a picture of the most frames
   (which a session attached to keeps per picture), total_bytes their
   sum. Either params may be NULL for the defaults. */
PEAK_API peak_status peak_projector_estimate_memory(const char* path, const peak_model_params* params,
                                                    const peak_image_encoder_params* encoder_params,
                                                    peak_memory_estimate* estimate);
/* The same for a projector file in bytes [offset, offset + length) of an open file. */
PEAK_API peak_status peak_projector_estimate_memory_fd(int fd, uint64_t offset, uint64_t length,
                                                       const peak_model_params* params,
                                                       const peak_image_encoder_params* encoder_params,
                                                       peak_memory_estimate* estimate);
/* Since 0.9.0: the bytes of the encoder's compute and work buffers (0 for NULL). */
PEAK_API size_t peak_image_encoder_compute_bytes(const peak_image_encoder* encoder);

/* ---- reranking ------------------------------------------------------------------- */

/* Scores documents against a query with a reranker: an embedder on a model
   whose pooling is PEAK_POOLING_RANK. Either a cross-encoder (a bert reranker
   with its classification head, such as ms-marco-MiniLM or ms-marco-TinyBERT),
   whose score is a logit, or a decoder that answers whether the document
   meets the query (Qwen3-Reranker), whose score is the probability of "yes",
   in [0, 1]. */
typedef struct peak_rerank_params {
  size_t struct_size;
  int sigmoid; /* 0 (default): each score as the model gives it, as llama.cpp's /rerank does;
                  1: a cross-encoder's logit becomes 1 / (1 + e^-logit), in (0, 1) (a
                  probability stays as it is) */
} peak_rerank_params;

PEAK_API peak_rerank_params peak_rerank_default_params(void);

/* Writes n_documents scores to `scores`, one per document in the given order
   (higher is more relevant). For a cross-encoder the query and each document
   (any bytes) are tokenized without special tokens and joined as the model's
   tokenizer joins a text pair, [CLS] query [SEP] document [SEP], the document
   as token type 1 (llama.cpp gives it type 0; the models were trained with 1).
   A decoder reranker reads its prompt (`tokenizer.chat_template.rerank`, as
   llama.cpp's converter writes it) with {query} and {document} filled in; the
   prompt's control tokens are recognised, a text's spelling of one stays text
   (llama.cpp parses those as control tokens too). Many pairs share each
   forward pass. params NULL: the defaults. Everything is checked before
   anything runs: an embedder whose model is not a reranker, an empty or NULL
   query, or a document that is NULL, empty, of which the vocabulary can spell
   no character, or too long with the query for the embedder's n_batch is
   refused with PEAK_ERR_INVALID_ARGUMENT naming the document's index (the first
   such). n_documents 0 writes nothing. The embedder is used by one thread at a
   time, as with peak_embed. */
PEAK_API peak_status peak_rerank(peak_embedder* embedder, const char* query, size_t query_length,
                                 const char* const* documents, const size_t* lengths, size_t n_documents,
                                 const peak_rerank_params* params, float* scores);

/* Writes to n_tokens[i] how many tokens document i's pair with the query is
   as peak_rerank reads it (the joined pair, or the filled prompt): what a
   server counts as usage, and what must fit the embedder's n_batch. Checks
   the texts as peak_rerank does, n_batch aside. */
PEAK_API peak_status peak_rerank_pair_tokens(peak_embedder* embedder, const char* query, size_t query_length,
                                             const char* const* documents, const size_t* lengths, size_t n_documents,
                                             size_t* n_tokens);

/* ---- profiling ------------------------------------------------------------------- */

/* Per-op timing of a context's forward passes (off by default: timing costs a
   clock read per graph node). */
PEAK_API peak_status peak_context_set_profiling(peak_context* ctx, int enabled);

typedef struct peak_op_profile {
  const char* op;      /* "mul_mat", "attention", "rms_norm", ... (static strings) */
  size_t calls;        /* graph nodes of this op run since the last reset */
  double seconds;      /* wall time spent in them */
} peak_op_profile;

/* One entry per op type that ran, most time first. On PEAK_ERR_BUFFER_TOO_SMALL
   *n_entries holds the count needed. */
PEAK_API peak_status peak_context_get_profile(const peak_context* ctx, peak_op_profile* entries, size_t capacity,
                                              size_t* n_entries);
PEAK_API void peak_context_reset_profile(peak_context* ctx);

/* ---- quantization and synthetic models ------------------------------------------ */

/* Output types: a single ggml type name ("F32", "F16", "BF16", "Q4_0", "Q4_1",
   "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL",
   "IQ4_XS") or a mixed preset ("Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S", "Q6_K_M"
   ...) with llama.cpp's per-tensor rules: 1-D tensors stay F32, some matrices
   (attn_v, some ffn_down, the output matrix) get more bits. */
typedef struct peak_quantize_params {
  size_t struct_size;
  const char* type;           /* see above; default "Q4_K_M" */
  int pure;                   /* 1: every matrix in the base type (then any type name works) */
  size_t n_threads;           /* 0: one per hardware thread */
  peak_progress_fn progress;  /* may be NULL; return 0 to cancel */
  void* progress_user_data;
} peak_quantize_params;

PEAK_API peak_quantize_params peak_quantize_default_params(void);
/* Quantizes an F32/F16/BF16 model to a new GGUF file (general.file_type set).
   Refuses to write over its input; writes through a temporary file (see
   peak_remove_temporary_files). */
PEAK_API peak_status peak_quantize(const char* input_path, const char* output_path, const peak_quantize_params* params);

typedef struct peak_synth_params {
  size_t struct_size;
  const char* preset;         /* e.g. "qwen3-0.6b"; see peak_synth_presets */
  const char* type;           /* as peak_quantize_params.type; default "Q4_0" */
  const char* vocab_from;     /* NULL, or a GGUF whose tokenizer.* keys are copied */
  uint64_t seed;
  peak_progress_fn progress;  /* may be NULL; return 0 to cancel */
  void* progress_user_data;
} peak_synth_params;

PEAK_API peak_synth_params peak_synth_default_params(void);
/* Writes a random-weight model (N(0, 0.02) matrices, unit norms) with the exact
   shapes, tensor names and metadata of a real one, streaming tensor by tensor. */
PEAK_API peak_status peak_synth(const char* output_path, const peak_synth_params* params);
/* The preset names, comma-separated. */
PEAK_API const char* peak_synth_presets(void);

/* Every file peak writes (peak_quantize, peak_synth, peak_session_save) goes to a
   temporary file "OUTPUT.partial-..." beside it, renamed over OUTPUT once complete;
   a symbolic link is written through to its target, and an OUTPUT that is not a
   regular file (directory, device, FIFO, socket) is refused. An error or a
   cancel removes the temporary file. A process that ends on a signal does not
   run that cleanup: its handler of the signals that end it (SIGINT, SIGTERM,
   SIGHUP, SIGQUIT) calls this to remove the
   temporary files being written, then ends the process (e.g. restores the
   default action and raises the signal again) without returning into peak.
   Async-signal-safe. */
PEAK_API void peak_remove_temporary_files(void);

/* An app's (or a tool's) own output file, written the same way: to a temporary
   file beside `path`, renamed over it by peak_file_writer_commit, so that a
   reader sees the old content or the whole new one, never a part; a symbolic
   link is written through to its target; a path that is not a regular file
   (directory, device, FIFO, socket) is refused by peak_file_writer_open before
   anything is written (PEAK_ERR_IO naming the path), as is a directory that
   does not exist. An error, peak_file_writer_free before the commit, and
   peak_remove_temporary_files remove the temporary file. One writer is used by
   one thread at a time; writers of different files are independent. */
typedef struct peak_file_writer peak_file_writer;

PEAK_API peak_status peak_file_writer_open(const char* path, peak_file_writer** out);
/* Appends `n` bytes (data may be NULL when n is 0). PEAK_ERR_IO naming the path
   (a full disk ...): the writer then only refuses, and the target is unchanged. */
PEAK_API peak_status peak_file_writer_write(peak_file_writer* writer, const void* data, size_t n);
/* Syncs the data, gives it the old file's permission bits and renames it over
   the target. PEAK_ERR_IO: the target is unchanged. Writing or committing
   again afterwards gives PEAK_ERR_INVALID_ARGUMENT. */
PEAK_API peak_status peak_file_writer_commit(peak_file_writer* writer);
/* Frees the writer, removing what it wrote unless committed. NULL: nothing. */
PEAK_API void peak_file_writer_free(peak_file_writer* writer);

/* ---- chat sessions (SSSKV-lite) --------------------------------------------------- */

/* A conversation in a fixed-size KV cache: Prefix (system prompt, never dropped)
   + Summary (of dropped history, at most summary_max tokens) + Recent (the latest
   messages, at most recent_max tokens, dropped from the left at message
   boundaries). Once trigger_discard tokens were dropped, a separate small
   summary context on the same model writes a new summary on a background worker
   between turns: its forward passes (and a background rebuild's) wait while the
   session's own passes run and for 0.1 s after the last, so a turn's tokens go
   at full speed and the worker uses the time the user reads and types; the
   worker of a session in a pass group waits for the turns of all its sessions.
   The session keeps the text of every message, dropped or not
   (peak_session_get_message). A session is used by one thread at a time: no two
   calls on one session may overlap, and the functions taking a const
   peak_session* never wait for the summary worker (it reads none of what they
   return). */
typedef struct peak_session peak_session;

typedef enum peak_memory_mode {
  PEAK_MEMORY_SSSKV = 0,   /* Prefix + Summary + Recent (default) */
  PEAK_MEMORY_WINDOW = 1,  /* Prefix + Recent: a sliding window, no summaries */
  PEAK_MEMORY_NONE = 2     /* grow until full, then PEAK_ERR_CONTEXT_FULL */
} peak_memory_mode;

/* How a new summary is put in place. */
typedef enum peak_rebuild_strategy {
  PEAK_REBUILD_SHIFT = 0,      /* keep Prefix and Recent, prefill the new Summary, re-rotate Recent (approximate) */
  PEAK_REBUILD_REPREFILL = 1,  /* clear and prefill Prefix + Summary + Recent (exact, on the next turn) */
  /* The summary worker prefills Prefix + new Summary + Recent in a second,
     staging cache of the main one's size (exact; the memory of a second main
     cache while it runs); the next turn brings it up to date with the
     messages since and swaps it in. */
  PEAK_REBUILD_BACKGROUND = 2
} peak_rebuild_strategy;

/* OpenAI's tool_choice for a session's answers (peak_session_params.tools_json). */
typedef enum peak_tool_choice {
  PEAK_TOOL_CHOICE_NONE = 0,     /* the tools are left out of the prompt, calls are not read: answers are text */
  PEAK_TOOL_CHOICE_AUTO = 1,     /* text, calls, or text then calls (default) */
  PEAK_TOOL_CHOICE_REQUIRED = 2, /* one call or more from the answer's start */
  PEAK_TOOL_CHOICE_FUNCTION = 3  /* calls of peak_session_params.tool_function only, from the answer's start */
} peak_tool_choice;

typedef struct peak_session_params {
  /* sizeof(peak_session_params); a caller built against the header before the
     tool fields and sampler.preserved_tokens declares the size of that first
     version (offsetof(peak_session_params, sampler) plus the first version's
     sampler, which ends at json_schema), one built before verify_kv_cells the
     size of the second (offsetof(peak_session_params, verify_kv_cells)), one
     built before max_logit_rows that of the third, and the later fields keep
     their defaults. */
  size_t struct_size;
  peak_memory_mode mode;
  const char* system_prompt;       /* may be NULL */
  const char* chat_template;       /* NULL: the model's; a name ("chatml" ...); or "raw" (no template) */
  /* Thinking models (Qwen3, SmolLM3, ...): 1 lets the model reason before it
     answers; 0 (default) asks it not to, where its template can. Either way the
     reasoning is streamed apart (PEAK_TEXT_REASONING) and never kept in the
     conversation, and summaries are written without thinking. */
  int enable_thinking;
  size_t recent_max;               /* default 4096 */
  size_t summary_max;              /* default 256 */
  size_t trigger_discard;          /* default 2048 */
  size_t headroom;                 /* overflow room for the answer, its length limit; default 512 */
  peak_type type_k, type_v;        /* main KV cache; default PEAK_TYPE_Q8_0 (F16 when the head size is not a multiple of 32) */
  peak_type summary_type_kv;       /* summary context KV cache; default PEAK_TYPE_Q4_0 (likewise) */
  size_t summary_n_ctx;            /* summary context size; default 2048 */
  size_t summary_max_new_tokens;   /* summary generation length; default 256 */
  peak_rebuild_strategy rebuild;   /* default PEAK_REBUILD_BACKGROUND */
  int wait_for_summary;            /* 1: a turn arriving during a summary (or its rebuild) waits; 0 (default): uses the old one */
  int background_summary;          /* 1 (default): summarize on a worker thread; 0: before the turn returns */
  size_t n_threads;                /* 0: peak_default_threads(), the fast cores */
  size_t n_batch;                  /* default 512 */
  /* The answers' sampling. A grammar starts again with each answer and ends it
     once whole (PEAK_STOP_EOG). With enable_thinking (or a template whose prompt
     opens the reasoning) the reasoning is free: the grammar starts after its
     closing marker, the blank lines there read as its text though the answer
     drops them. Answer text the model wrote before the grammar could hold it
     (with the end of its reasoning, or where it could still have opened one)
     that the grammar refuses fails the turn with PEAK_ERR_INVALID_ARGUMENT. */
  peak_sampler_params sampler;
  /* Tools: OpenAI's tools array as JSON text ([{"type": "function", "function":
     {"name": string, "description"?: string, "parameters"?: JSON Schema}}]),
     written into the Prefix by the model's own chat template, so fixed for the
     session's life; NULL (default): none. Under a tool_choice other than NONE an
     answer may call them: its text streams through on_text without the calls'
     markup, and peak_session_get_tool_call gives the calls, held by a grammar
     to the tools' schemas (which excludes sampler.grammar and
     sampler.json_schema: PEAK_ERR_INVALID_ARGUMENT naming both). With AUTO the
     grammar starts where the format's opening marker appears in the answer
     (after any reasoning); REQUIRED and FUNCTION hold the whole answer, after
     the reasoning as a grammar does. Invalid JSON or tools not of that shape
     give PEAK_ERR_INVALID_ARGUMENT naming the JSON path ("tools[0].function.name:
     ..."), as does chat_template "raw". A template with no place for tools
     (Gemma's, the built-in families) gets them as an instruction after the
     system prompt, in the "generic" format: the answer is the JSON object
     {"tool_calls": [...]} or {"response": "..."}, an answer's calls are
     written back as that object and tool results as a user message of
     {"tool_response": {"name", "content"}} lines. A template that puts tools
     elsewhere than before the conversation (into the first user message), or
     one without a place for them under another tool_call_format, gives
     PEAK_ERR_INVALID_ARGUMENT. */
  const char* tools_json;
  peak_tool_choice tool_choice; /* default PEAK_TOOL_CHOICE_AUTO */
  const char* tool_function;    /* PEAK_TOOL_CHOICE_FUNCTION: the function's name; else NULL */
  int parallel_tool_calls;      /* 1 (default): an answer may make several calls; 0: one */
  /* The format calls are written in (the names at peak_tool_parse_params); NULL
     (default): the one the model's template renders past calls in, or "generic"
     for a named built-in template. */
  const char* tool_call_format;
  /* peak_session_restore of a file with KV cells: how many of the first cells
     to compute again (a prefill of their tokens) and compare with the saved
     ones before using them; 0 (default): they are used as read. The file's
     checks catch sizes and non-finite values, not finite but wrong ones. Only
     cells a prefill gives again are checked: the system prompt's and the
     summary's, and the recent messages' while none was ever dropped (a drop
     moves the rest over it). Costs a prefill of that many tokens; later cells
     are used unchecked. Cells differing by more than their KV type's storage
     step plus 1/32 of their row's scale (other batch sizes and thread counts
     sum in other orders) are not used: the session prefills the conversation
     instead, losing nothing of it, and logs a warning (peak_set_log_callback)
     naming the file and the first differing layer, K or V, cell and head;
     peak_session_restore still returns PEAK_OK. */
  size_t verify_kv_cells;
  /* Since 0.6.0: rows of logits the session's context hands out in one pass,
     1 (default) or more; prompt lookup in a turn (peak_generate_params.
     lookup_ngram, which then also searches the conversation the model reads)
     needs draft_max + 1. */
  size_t max_logit_rows;
  /* Since 0.7.0: the conversation's context evaluates in forward passes
     shared with the group's other members (peak_pass_group_create); its cache
     types must be the group's. The summary's context evaluates alone. NULL
     (default): alone. */
  peak_pass_group* pass_group;
  /* Since 0.9.0: the model's vision projector (peak_projector_load): the
     session then takes pictures (peak_session_attach_image), framed as the
     model's processor frames them. Its embeddings must have the model's
     width (PEAK_ERR_INVALID_ARGUMENT naming both). It must outlive the
     session. NULL (default): text only. */
  const peak_projector* projector;
} peak_session_params;

PEAK_API peak_session_params peak_session_default_params(void);
PEAK_API peak_status peak_session_create(const peak_model* model, const peak_session_params* params,
                                         peak_session** out);
/* Cancels a running summary (or rebuild) and frees the session. */
PEAK_API void peak_session_free(peak_session* session);

/* One user turn: streams the answer through params->on_text (max_tokens is capped
   by the headroom; add_special and parse_special are ignored: the session frames
   the message itself and never parses control tokens in the user's text). A
   turn that fails (an error status) leaves the session as it was before it.
   PEAK_ERR_INVALID_ARGUMENT while the conversation ends with a user message
   appended without an answer (answer it with peak_session_regenerate), and for
   a message, not empty, of which the vocabulary can spell no character
   (peak_text_unspelled): the model would answer nothing. */
PEAK_API peak_status peak_session_chat(peak_session* session, const char* user_text, size_t length,
                                       const peak_generate_params* params, peak_generate_result* result);

/* Since 0.9.0: attaches a picture to the next user message (peak_session_chat,
   peak_session_append of a user message, peak_session_edit_last), which takes
   every image attached, in order. `embeddings` are its image tokens as
   peak_image_encode wrote them: n_floats = tokens x the model's width,
   copied. The message's text shows where each image goes by
   PEAK_IMAGE_MARKER, one per image in the order attached; a text without the
   marker gets them all at its start (another number of markers fails the
   turn with PEAK_ERR_INVALID_ARGUMENT, leaving them attached). A message
   that fails leaves them attached; peak_session_clear_images and
   peak_session_reset drop them. The same picture attached again, or sent in
   an earlier message, is one image: its embeddings are kept once. The
   conversation keeps the marker in the message's text
   (peak_session_get_message), and a message dropped into the summary is
   read by the summarizer with "[an image]" in its place: the summary keeps
   what the answers said about the picture. PEAK_ERR_INVALID_ARGUMENT,
   attaching nothing, for a session without a projector, n_floats that is not
   a whole number of rows, values that are not finite, or an image longer
   than recent_max or (its tokens attending to each other) n_batch, and (since
   0.10.0) rows of a picture the projector cut into tiles, which
   peak_session_attach_picture takes. */
#define PEAK_IMAGE_MARKER "<__media__>"
PEAK_API peak_status peak_session_attach_image(peak_session* session, const float* embeddings, size_t n_floats);
/* Since 0.10.0: attaches a picture of width x height pixels whose embeddings
   peak_image_encode wrote, as peak_session_attach_image does, framing each of
   its frames as the projector's processor does (peak_projector_picture_layout:
   SmolVLM's tiles, each after its row and column, then the overview). Needed
   for projectors that cut pictures into tiles; any projector takes it.
   PEAK_ERR_INVALID_ARGUMENT, attaching nothing, as peak_session_attach_image,
   and when n_floats is not what a picture of that size encodes to. */
PEAK_API peak_status peak_session_attach_picture(peak_session* session, const float* embeddings, size_t n_floats,
                                                 uint32_t width, uint32_t height);
/* Since 0.9.0: how many pictures wait for the next user message (0 for NULL). */
PEAK_API size_t peak_session_n_attached_images(const peak_session* session);
/* Since 0.9.0: drops the pictures attached. */
PEAK_API peak_status peak_session_clear_images(peak_session* session);

/* Who wrote a message. */
typedef enum peak_role {
  PEAK_ROLE_SYSTEM = 0, /* the system prompt (a session parameter) */
  PEAK_ROLE_USER = 1,
  PEAK_ROLE_ASSISTANT = 2,
  PEAK_ROLE_TOOL = 3 /* a tool's result (peak_session_add_tool_result) */
} peak_role;

/* Where a message is for the model. */
typedef enum peak_message_state {
  PEAK_MESSAGE_IN_CONTEXT = 0,  /* the model reads it: the system prompt, or a message in Recent
                                   (one cut to fit the window keeps its end there) */
  PEAK_MESSAGE_SUMMARIZED = 1,  /* dropped from Recent; the summary in place covers it */
  PEAK_MESSAGE_DROPPED = 2      /* dropped from Recent and in no summary: waiting for the next
                                   summary job (PEAK_MEMORY_SSSKV), or forgotten (PEAK_MEMORY_WINDOW) */
} peak_message_state;

typedef struct peak_session_message {
  size_t struct_size;        /* set to sizeof(peak_session_message) before the call */
  peak_role role;
  peak_message_state state;
  /* The message's text, NUL-terminated at text[length] (it may hold NUL bytes
     of its own). Owned by the session: valid until the next call that takes a
     non-const peak_session* (chat, append, regenerate, edit, set_sampler, reset,
     wait_summary, save, restore, free); copy it to keep it. */
  const char* text;
  size_t length;
  /* Since 0.9.0: the pictures the message shows, one at each PEAK_IMAGE_MARKER of its text. */
  size_t n_images;
} peak_session_message;

/* The conversation as an app shows it: the system prompt (when the session has
   one) as message 0, then every user, assistant and tool message in order, those
   dropped into the summary included (an answer that only called tools has an
   empty text). 0 for NULL. */
PEAK_API size_t peak_session_n_messages(const peak_session* session);
/* Message `index` (0 .. peak_session_n_messages - 1). */
PEAK_API peak_status peak_session_get_message(const peak_session* session, size_t index,
                                              peak_session_message* message);
/* Adds a message without generating, e.g. a history imported from elsewhere:
   `role` PEAK_ROLE_USER or PEAK_ROLE_ASSISTANT, alternating from a user's
   message (a user message is rendered with the header that opens its answer,
   and some templates refuse other orders): anything else is
   PEAK_ERR_INVALID_ARGUMENT, changing nothing. The message is evaluated into
   the KV cache now and makes room as a turn does (older messages dropped, and
   summarized, as usual); an assistant message completes the user message before
   it as a turn would have, had the model written that answer (one longer than
   the headroom drops more first; one longer than recent_max + headroom keeps
   its end). A user message left without an answer is answered by
   peak_session_regenerate, or given one by appending it. A user message of which
   the vocabulary can spell no character is refused as peak_session_chat refuses
   it. An error status leaves the session as it was. */
PEAK_API peak_status peak_session_append(peak_session* session, peak_role role, const char* text, size_t length);
/* Answers the last user message again (also one appended without an answer),
   with the sampling set now: its answer and everything that turn did are taken
   back, then the turn runs again as peak_session_chat runs it. Right after the
   turn the cache comes back exactly as it was before it: its cells, the
   messages it dropped, the penalty window (the random sequence goes on, so a
   sampled answer differs while a greedy one is the same); a summary job not yet
   in place is cancelled, its text waiting for the next one. Once a summary job
   was taken since (peak_session_wait_summary, or save while one ran) or the
   session changed otherwise (an append, a restore), the messages the turn
   dropped stay dropped and only its own messages are taken back.
   PEAK_ERR_INVALID_ARGUMENT without a user message, or when the last one is no
   longer in Recent. An error status leaves the session as it was. */
PEAK_API peak_status peak_session_regenerate(peak_session* session, const peak_generate_params* params,
                                             peak_generate_result* result);
/* As peak_session_regenerate, with `user_text` in place of the last user message. */
PEAK_API peak_status peak_session_edit_last(peak_session* session, const char* user_text, size_t length,
                                            const peak_generate_params* params, peak_generate_result* result);
/* ---- tools in a session (peak_session_params.tools_json) ----

   A turn whose answer calls tools goes on: user message, the answer with its
   calls, a result for each call (peak_session_add_tool_result), then the next
   answer (peak_session_continue), which may call tools again. While an answer's
   calls wait for their results, or results wait for their answer,
   peak_session_chat and peak_session_append refuse a user message
   (PEAK_ERR_INVALID_ARGUMENT saying what comes first). peak_session_regenerate
   of an answer to tool results answers them again (and answers results
   waiting); peak_session_edit_last refuses both. A saved session keeps its
   calls and results (and results waiting); peak_session_restore takes such a
   conversation only into a session whose template and tools render it as it
   was saved (PEAK_ERR_UNSUPPORTED otherwise). */

/* A tool call of the last answer. The texts are NUL-terminated at their
   lengths and owned by the session: valid until the next call that takes a
   non-const peak_session*. */
typedef struct peak_tool_call {
  size_t struct_size; /* set to sizeof(peak_tool_call) before the call */
  const char* id;     /* unique within the session: "call_t<n>c<i>", the n-th answer read for calls, its
                         i-th call (or the id the model wrote, in formats that have one) */
  size_t id_length;
  const char* name; /* one of the tools */
  size_t name_length;
  const char* arguments; /* the arguments as the text of a JSON object */
  size_t arguments_length;
} peak_tool_call;

/* The calls of the conversation's last answer (the last assistant message,
   results appended after it or not): 0 when it made none, or for NULL. Const:
   safe while no other call on the session runs, as for peak_session_get_message. */
PEAK_API size_t peak_session_n_tool_calls(const peak_session* session);
/* Call `index` (0 .. peak_session_n_tool_calls - 1) of the last answer. */
PEAK_API peak_status peak_session_get_tool_call(const peak_session* session, size_t index, peak_tool_call* call);
/* The result (`length` bytes of UTF-8 text; content may be NULL when length is
   0) of the call `tool_call_id` (NUL-terminated) of the last answer, kept as a
   message of PEAK_ROLE_TOOL and read by peak_session_continue.
   PEAK_ERR_INVALID_ARGUMENT, changing nothing, when the last answer made no
   such call or its result was given already. */
PEAK_API peak_status peak_session_add_tool_result(peak_session* session, const char* tool_call_id, const char* content,
                                                  size_t length);
/* The answer to the tool results added since the last answer (usually once
   every call has its result), streamed and kept as peak_session_chat does with
   a user turn, and taken back the same way when it fails.
   PEAK_ERR_INVALID_ARGUMENT, changing nothing, when no result waits. */
PEAK_API peak_status peak_session_continue(peak_session* session, const peak_generate_params* params,
                                           peak_generate_result* result);
/* Replaying a history with tool calls (e.g. OpenAI's messages) without
   generating: an assistant message with its `content` (`length` bytes; NULL
   when length is 0) and its `n_calls` tool calls (each call's struct_size, id,
   name and arguments set with their lengths; the ids unique, as the results
   that follow name them). After a user message it is appended as
   peak_session_append appends an assistant message, in the same order rules;
   after tool results (peak_session_add_tool_result gives each call's result)
   it is their answer, completing them as peak_session_continue would have had
   the model written it (n_calls 0: an answer of text alone; peak_session_append
   refuses an assistant message there). PEAK_ERR_INVALID_ARGUMENT, changing
   nothing, for a call without an id or a name, a call's struct_size that is
   not sizeof(peak_tool_call), or a message out of order. */
PEAK_API peak_status peak_session_append_tool_calls(peak_session* session, const char* content, size_t length,
                                                    const peak_tool_call* calls, size_t n_calls);
/* Receives a call of the answer being generated as soon as it parsed (a call
   is held until its section of the answer parses, so it comes whole), for
   streaming calls as text streams through on_text: `index` is its place among
   the answer's calls, `call` and its texts valid during the callback. After
   the turn peak_session_get_tool_call gives the same calls; a turn that fails
   takes back the calls it reported. */
typedef void (*peak_tool_call_fn)(const peak_tool_call* call, size_t index, void* user_data);
/* Sets the session's call receiver for the answers from now on (chat,
   continue, regenerate, edit_last); NULL: none (the default). */
PEAK_API peak_status peak_session_set_tool_call_callback(peak_session* session, peak_tool_call_fn on_call,
                                                         void* user_data);
/* tool_choice, tool_function and parallel_tool_calls from the next answer on
   (as in peak_session_params). The tools stay as the prompt holds them: a
   session created with PEAK_TOOL_CHOICE_NONE has none there and refuses
   another choice; one created with another may move to NONE (no grammar, no
   calls read, the tools still in the prompt). PEAK_ERR_INVALID_ARGUMENT,
   changing nothing, for a choice out of range, a function not among the tools,
   or a sampler grammar beside a choice other than NONE. */
PEAK_API peak_status peak_session_set_tool_choice(peak_session* session, peak_tool_choice choice,
                                                  const char* tool_function, int parallel_tool_calls);

/* Sampling from the next answer on (regenerate and edit included): the session's
   `sampler` parameters are replaced. The penalty window keeps what it holds when
   penalty_last_n stays the same, else holds Recent's tokens; the random sequence
   restarts from params->seed. Not saved with the session. Invalid parameters
   give PEAK_ERR_INVALID_ARGUMENT, changing nothing. */
PEAK_API peak_status peak_session_set_sampler(peak_session* session, const peak_sampler_params* params);
/* The text the model would read if `user_text` were the next message, as things
   stand (before the turn makes room): the context's cells (Prefix, Summary,
   Recent) and the message framed by the chat template with the generation
   prompt, control tokens written out. Then a NUL. */
PEAK_API peak_status peak_session_preview_prompt(const peak_session* session, const char* user_text, size_t length,
                                                 char* buf, size_t capacity, size_t* prompt_length);
/* Forgets the conversation (keeps the system prompt); cancels a running summary or rebuild. */
PEAK_API peak_status peak_session_reset(peak_session* session);
/* Blocks until a running summary and its rebuild are done and puts them in
   place (call it while waiting for the user, so the next turn has nothing to
   rebuild). */
PEAK_API peak_status peak_session_wait_summary(peak_session* session);

typedef struct peak_session_stats {
  size_t struct_size;              /* set to sizeof(peak_session_stats) before the call */
  size_t n_ctx;
  size_t prefix_tokens, summary_tokens, recent_tokens, recent_messages;
  size_t dropped_since_summary;    /* dropped tokens not yet in a summary or a running job */
  size_t dropped_total;
  size_t summaries;                /* summaries put in place */
  int summary_running;             /* the worker writes a summary or rebuilds a cache */
  double summary_seconds;          /* total time writing summaries (in the summary context) */
  double rebuild_seconds;          /* total time putting them in place */
  double last_rebuild_seconds;
  double window_shift_seconds;     /* total time moving Recent after drops */
  double worker_rebuild_seconds;   /* total time prefilling rebuilt caches on the summary worker */
  size_t turns;
  size_t kv_bytes;                 /* main + summary KV caches */
  size_t staging_kv_bytes;         /* a cache being rebuilt on the worker, while one exists */
  size_t summary_failures;         /* summary jobs that failed (peak_session_get_summary_error): a failed
                                      summary keeps the old one and its text waits for the next job; a
                                      failed background rebuild puts the new summary in place by a shift */
} peak_session_stats;

PEAK_API peak_status peak_session_get_stats(const peak_session* session, peak_session_stats* stats);

/* Where the last successful turn's time went on the caller's thread, in seconds
   (all zero before the first turn and after a reset). */
typedef struct peak_session_turn_stats {
  size_t struct_size;              /* set to sizeof(peak_session_turn_stats) before the call */
  double rebuild_seconds;          /* putting a new summary in place first, waiting for it included */
  double catch_up_seconds;         /* bringing a cache rebuilt on the worker up to date and swapping it in */
  double window_shift_seconds;     /* dropping messages from Recent, and after the answer moving the rest down */
  double prefill_seconds;          /* evaluating the user's message */
  double generation_seconds;       /* sampling and evaluating the answer */
  double settle_seconds;           /* first, evaluating the previous answer as later prompts show it
                                      (a thinking model's reasoning left out): a turn ends once its
                                      answer is generated, and the next one settles it */
} peak_session_turn_stats;

PEAK_API peak_status peak_session_get_turn_stats(const peak_session* session, peak_session_turn_stats* stats);
/* The current summary text, then a NUL. */
PEAK_API peak_status peak_session_get_summary(const peak_session* session, char* buf, size_t capacity,
                                              size_t* length);
/* Why the last failed summary job failed, then a NUL (empty before any failed).
   A job runs off the turns, so its failure never fails a turn: it is counted in
   peak_session_stats.summary_failures and told here. */
PEAK_API peak_status peak_session_get_summary_error(const peak_session* session, char* buf, size_t capacity,
                                                    size_t* length);
/* Saves settings, segments and messages (and the KV cache when include_kv) to a
   versioned file with a checksum. A running summary is waited for and put in
   place first. A path naming the session's model file (also through a link)
   is refused with PEAK_ERR_INVALID_ARGUMENT, writing nothing. A conversation
   with pictures keeps their embeddings in the file (since 0.9.0; older
   versions cannot read it), so restoring needs no picture file. */
PEAK_API peak_status peak_session_save(peak_session* session, const char* path, int include_kv);
/* Restores a saved session (this version's files and the previous format's)
   into one created with the same model, fitting it to this session's settings:
   - recent_max + headroom smaller than what the saved Recent holds: its oldest
     messages are dropped as a turn drops them (into the summary path in
     PEAK_MEMORY_SSSKV; a session of PEAK_MEMORY_NONE refuses it with
     PEAK_ERR_UNSUPPORTED naming recent_max); larger: everything is kept;
   - summary_max smaller than the saved summary needs: it is cut at its last
     sentence end that fits (the next summary job writes the next one);
   - another system prompt, chat template or enable_thinking: every message is
     rendered again (a conversation with tool calls or results is refused with
     PEAK_ERR_UNSUPPORTED: it is rendered only as it was saved);
   - the saved KV cache is used when its cells are still those the session
     needs (same segments and KV types), else the cells are prefilled; with
     peak_session_params.verify_kv_cells its first cells are checked first,
     and cells that differ are replaced by a prefill.
   Refused with PEAK_ERR_UNSUPPORTED, the message naming the setting and both
   values: another model (architecture, parameters, vocabulary size, layers,
   weight bytes), a conversation with pictures into a session without a
   projector, or a memory mode that cannot continue the file's
   (PEAK_MEMORY_SSSKV into WINDOW or NONE, which keep no summary; WINDOW into
   NONE, which promises every message in context). A truncated, corrupted or
   inconsistent file (positions, sizes, roles and their order, statistics,
   non-finite KV values, tokens in context that are not their message's text
   as the template renders it; checked even when its checksum is right) gives
   PEAK_ERR_FORMAT naming what is wrong. Either way the session is left as it
   was, a running or finished summary included. Restoring drops the pictures
   attached and not yet sent. */
PEAK_API peak_status peak_session_restore(peak_session* session, const char* path);

/* ---- chat templates --------------------------------------------------------------- */

/* A message of role and text. Tool calls and a tool result's tool_call_id need
   peak_chat_template_params.messages_json; a "tool" message of text alone fits here. */
typedef struct peak_chat_message {
  const char* role;     /* "system", "user", "assistant" or "tool" */
  const char* content;  /* NUL-terminated */
} peak_chat_message;

typedef struct peak_chat_template_params {
  /* sizeof(peak_chat_template_params), or the size of its first version, which
     ends at enable_thinking (offsetof(peak_chat_template_params, tools_json)):
     the later fields are then NULL. */
  size_t struct_size;
  /* Which template: template_source when not NULL (Jinja source, e.g. a
     tokenizer.chat_template); else the built-in family template_name when not
     NULL ("chatml", "llama2", "llama3", "mistral-v1", "mistral-v3", "mistral-v7",
     "gemma", "phi3", "zephyr", ...); else the model's own. */
  const char* template_source;
  const char* template_name;
  /* The texts a template given in template_source writes for bos_token and
     eos_token; NULL: the model's ("" without a model). */
  const char* bos_token;
  const char* eos_token;
  int add_generation_prompt;  /* append the header that opens the assistant's turn; default 1 */
  int enable_thinking;        /* 0 (default) or 1: passed to the template; -1: not passed (its default) */
  /* Tools, as Hugging Face's apply_chat_template(tools=...) passes them: OpenAI's
     tools array as JSON text, [{"type": "function", "function": {"name": string,
     "description"?: string, "parameters"?: object}}], given to the template as
     `tools`; NULL (default): `tools` is not defined. Only a model's own (Jinja)
     template renders tools. */
  const char* tools_json;
  /* The conversation as OpenAI's messages array in JSON text, used instead of
     the messages array (which must then be NULL with n_messages 0): [{"role":
     "system"|"user"|"assistant"|"tool", "content": string, "name"?: string}],
     where an assistant's content may be null or absent (None in the template)
     and it may carry "tool_calls": [{"id"?: string, "type"?: "function",
     "function": {"name": string, "arguments": string}}], and a tool message
     "tool_call_id"?: string. Arguments that are a JSON object reach the
     template as that object (templates write `arguments | tojson`), other text
     as the text. At most 65536 messages and 1024 tools or calls of a message.
     NULL (default): the messages array. */
  const char* messages_json;
} peak_chat_template_params;

PEAK_API peak_chat_template_params peak_chat_template_default_params(void);

/* Formats a conversation into the prompt text of a chat template, exactly as
   Hugging Face's apply_chat_template renders a Jinja template (a template that
   writes bos_token starts with it). `model` may be NULL when params give a
   template. A template that refuses the conversation (raise_exception) gives
   PEAK_ERR_TEMPLATE with the template's message. JSON that is not valid, or
   not of the shape described at tools_json and messages_json, gives
   PEAK_ERR_INVALID_ARGUMENT naming the JSON path of what is wrong
   ("messages[2].tool_calls[0].function.name: expected a string, not a number").
   Of the built-in families, only ChatML renders a "tool" message (as
   <|im_start|>tool, as llama.cpp does); tools and tool calls need the model's
   own template: a built-in family refuses them with PEAK_ERR_INVALID_ARGUMENT.
   The prompt is written with a NUL after it. */
PEAK_API peak_status peak_chat_apply_template(const peak_model* model, const peak_chat_template_params* params,
                                              const peak_chat_message* messages, size_t n_messages, char* buf,
                                              size_t capacity, size_t* length);

/* ---- tool calls: parsing an answer ------------------------------------------------ */

/* Which tool-call format a model writes its calls in, by name:
     "hermes"       Qwen2.5, Qwen3, SmolLM3: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
     "llama3-json"  Llama 3.1, 3.2: the answer {"name": ..., "parameters": {...}}, or it after <|python_tag|>
                    (Llama 3.1's built-in calls, <|python_tag|>NAME.call(...), stay content)
     "mistral"      Mistral Nemo, v3: [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}]
     "phi4"         Phi-4-mini: <|tool_call|>[{"name": ..., "arguments": {...}}]<|/tool_call|>
     "granite"      Granite 3.x: <|tool_call|>[{"name": ..., "arguments": {...}}]
     "deepseek-r1"  DeepSeek-R1: its tool-calls-begin marker, then per call its tool-call-begin
                    marker, "function", its tool-sep marker, NAME, a ```json fence holding the
                    arguments and its tool-call-end marker, then its tool-calls-end marker
     "qwen3-xml"    Qwen3.5: <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>...
     "minicpm-xml"  MiniCPM 5: <function name="NAME"><param name="KEY">VALUE</param></function>
     "lfm2"         LFM2, LFM2.5: <|tool_call_start|>[NAME(KEY="VALUE", ...)]<|tool_call_end|>
     "generic"      models without a format of their own: the answer is the JSON object
                    {"tool_calls": [{"name": ..., "arguments": {...}}]} or {"response": "..."} */
typedef struct peak_tool_parse_params {
  size_t struct_size;
  /* The format: format_name when not NULL; else the one the Jinja template
     template_source (e.g. a tokenizer.chat_template) renders past calls in;
     else the one the model's own template renders them in; else "generic". */
  const char* format_name;
  const char* template_source;
  /* The request's tools as JSON text (OpenAI's "tools" array), or NULL: the XML
     formats keep the values of parameters typed "string" as strings, and read
     other values as JSON where they are. */
  const char* tools_json;
  /* Ids of calls whose format has none (all but "mistral") are "call_" +
     id_prefix + the call's index in the answer (0, 1, ...): the same text gives
     the same ids. Give each answer its own prefix of letters and digits to keep
     ids unique in a conversation. NULL: "". */
  const char* id_prefix;
  /* 1 (default): reasoning between reasoning_open and reasoning_close at the
     start of the text goes to reasoning_content; 0: it stays in content. */
  int parse_reasoning;
  /* 1: the prompt already opened the reasoning block, so the text starts inside
     it; default 0. */
  int reasoning_opened;
  const char* reasoning_open;  /* NULL: "<think>" */
  const char* reasoning_close; /* NULL: "</think>" */
} peak_tool_parse_params;

PEAK_API peak_tool_parse_params peak_tool_parse_default_params(void);

/* Parses `text_length` bytes of a generated answer (UTF-8; text may be NULL
   when text_length is 0) into OpenAI's assistant message, written as JSON text:
     {"role": "assistant", "content": "..." or null when empty with calls,
      "reasoning_content": "..." (when there is some),
      "tool_calls": [{"id": ..., "type": "function",
                      "function": {"name": ..., "arguments": "<JSON object text>"}}] (when any)}
   A call whose text does not have its format's shape (JSON that does not
   parse, a missing closing marker, a truncated answer) stays in content as
   written; only the whitespace between a call and the text around it is
   dropped. Calls written inside the reasoning are reasoning. `model` may be
   NULL (the format is then "generic" unless params name one or give a
   template source); a model opened by peak_model_load_vocab has no template
   and is refused unless they do. An unknown format
   name or tools_json that is not a JSON array gives PEAK_ERR_INVALID_ARGUMENT
   naming it. Work is linear in text_length. Any thread, any time: it changes no
   handle. */
PEAK_API peak_status peak_chat_parse_response(const peak_model* model, const peak_tool_parse_params* params,
                                              const char* text, size_t text_length, char* buf, size_t capacity,
                                              size_t* length);

/* ---- adapters: LoRA and control vectors ----------------------------------------- */

/* A LoRA adapter (a GGUF with general.type "adapter", as llama.cpp's
   convert_lora_to_gguf.py writes it) or a control vector (general.architecture
   "controlvector", as llama.cpp's cvector-generator writes it), loaded for one
   model and applied at run time without changing the model: a projection W
   with an adapter computes W·x + s·B·(A·x), s = scale·alpha/rank (scale alone
   when the file's adapter.lora.alpha is 0 or absent); a control vector adds
   strength·direction[l] to the residual stream after each layer l of the
   chosen range. An adapter is immutable: contexts and sessions on any threads
   may share it. */
typedef struct peak_adapter peak_adapter;

typedef enum peak_adapter_kind {
  PEAK_ADAPTER_LORA = 0,
  PEAK_ADAPTER_CONTROL_VECTOR = 1
} peak_adapter_kind;

typedef struct peak_adapter_params {
  size_t struct_size;
  int use_mmap;  /* LoRA: 1 (default) maps the file, 0 reads it into memory */
} peak_adapter_params;

PEAK_API peak_adapter_params peak_adapter_default_params(void);

/* Loads the adapter or control vector at `path` for `model` (which one, the
   file says). It is checked against the model: architecture, every tensor's
   name, shape and type, finite values, alpha; a refusal (PEAK_ERR_FORMAT, or
   PEAK_ERR_UNSUPPORTED for a target peak does not adapt) names the key or
   tensor and leaves the model as it was. */
PEAK_API peak_status peak_adapter_load(const peak_model* model, const char* path, const peak_adapter_params* params,
                                       peak_adapter** out);
/* Releases the handle. Contexts and sessions using the adapter keep it until
   they stop using it (peak_*_set_adapters without it, or their own free), so
   freeing an adapter in use is safe; free adapters before their model. */
PEAK_API void peak_adapter_free(peak_adapter* adapter);

typedef struct peak_adapter_info {
  size_t struct_size;        /* set to sizeof(peak_adapter_info) before the call */
  peak_adapter_kind kind;
  size_t n_targets;          /* LoRA: matrices adapted; control vector: layers with a direction */
  size_t min_rank, max_rank; /* LoRA only */
  float alpha;               /* LoRA: adapter.lora.alpha (0: scales apply as given) */
  size_t first_layer, last_layer; /* control vector: its first and last layer with a direction */
  uint64_t tensor_bytes;     /* LoRA: bytes of its matrices, read once per token besides the model's */
} peak_adapter_info;

PEAK_API peak_status peak_adapter_get_info(const peak_adapter* adapter, peak_adapter_info* info);

/* One adapter in use: its scale (LoRA) or strength (control vector). A scale
   of 0 leaves the model's results exactly as without the adapter. */
typedef struct peak_adapter_use {
  const peak_adapter* adapter;
  float scale;
} peak_adapter_use;

typedef struct peak_adapter_set_params {
  size_t struct_size;
  const peak_adapter_use* adapters;  /* n_adapters of them, LoRA and control vectors mixed, any order */
  size_t n_adapters;                 /* 0: none (the model as it is) */
  /* Control vectors act after layers first..last (0-based, inclusive, as
     llama.cpp's --control-vector-layer-range); a last layer past the model's is
     its last. Default 0 and SIZE_MAX: every layer with a direction. */
  size_t control_first_layer;
  size_t control_last_layer;
} peak_adapter_set_params;

PEAK_API peak_adapter_set_params peak_adapter_set_default_params(void);

/* Runs the context's model with these adapters from its next evaluation on
   (what the cache holds stays as computed). Between evaluations: it plans the
   compute buffers again, so evaluating still allocates nothing. Several LoRA
   adapters add their deltas; several control vectors add up. On failure
   (an adapter loaded for another model, a scale that is not finite, an empty
   layer range) the context keeps its adapters. */
PEAK_API peak_status peak_context_set_adapters(peak_context* ctx, const peak_adapter_set_params* params);
/* The same for every context of a session (the conversation's, the summary's
   and a rebuild's): waits for a running summary and puts it in place, then
   evaluates the cached conversation again with the new adapters, so its cache
   is what they compute. Between turns. */
PEAK_API peak_status peak_session_set_adapters(peak_session* session, const peak_adapter_set_params* params);

typedef struct peak_lora_merge_params {
  size_t struct_size;
  float scale;                /* default 1 */
  const char* type;           /* the merged matrices' type ("F16", "Q8_0" ...); NULL (default): each keeps its own */
  size_t n_threads;           /* 0: one per hardware thread */
  peak_progress_fn progress;  /* may be NULL; return 0 to cancel */
  void* progress_user_data;
} peak_lora_merge_params;

PEAK_API peak_lora_merge_params peak_lora_merge_default_params(void);
/* Writes base + scale·adapter as one plain model: every adapted matrix becomes
   W + s·B·A (dequantized, merged, quantized again to `type`); the other tensors
   and the metadata are copied. Refuses to write over either input; writes
   through a temporary file (see peak_remove_temporary_files). */
PEAK_API peak_status peak_lora_merge(const char* base_path, const char* adapter_path, const char* output_path,
                                     const peak_lora_merge_params* params);

typedef struct peak_lora_synth_params {
  size_t struct_size;
  size_t rank;                /* default 16 */
  float alpha;                /* adapter.lora.alpha; default 0 */
  peak_type type;             /* A and B: PEAK_TYPE_F16 (default), _F32 or _Q8_0 (rank a multiple of 32) */
  const char* targets;        /* comma-separated projections ("attn_q,ffn_down"); NULL (default): all */
  uint64_t seed;
} peak_lora_synth_params;

PEAK_API peak_lora_synth_params peak_lora_synth_default_params(void);
/* Writes a random adapter for the model at base_path: for each adapted
   W [n_in, n_out], A ~ N(0, 1/n_in) and B ~ N(0, 0.02^2). For tests and for
   measuring what an adapter costs. */
PEAK_API peak_status peak_lora_synth(const char* base_path, const char* output_path,
                                     const peak_lora_synth_params* params);

#ifdef __cplusplus
}
#endif

#endif /* PEAK_PEAK_H */
