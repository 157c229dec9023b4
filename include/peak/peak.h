/*
 * peak: a small, dependency-free inference engine for GGUF language models.
 *
 * This is the whole public C API. Conventions:
 *  - Handles are opaque; every handle has a matching *_free function that
 *    accepts NULL.
 *  - Functions that can fail return a peak_status. On failure, peak_last_error()
 *    returns a readable message for the calling thread (thread-local; valid until
 *    the next failing call on that thread). No C++ exception ever crosses this API.
 *  - Parameter structs start with `struct_size`: fill them from the matching
 *    *_default_params() function, which sets it, then change what you need. A
 *    struct_size the library does not know is refused, so binaries built against
 *    other versions of this header fail cleanly instead of misreading memory.
 *  - Thread safety: functions on different handles may run concurrently. A
 *    peak_gguf handle is immutable after opening and may be read from any number
 *    of threads at once.
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
  PEAK_ERR_INTERNAL = 99
} peak_status;

/* Message of the last failing call on this thread ("" if none). */
PEAK_API const char* peak_last_error(void);
/* Name of a status code, e.g. "PEAK_ERR_FORMAT". */
PEAK_API const char* peak_status_name(peak_status status);
/* Library version as "MAJOR.MINOR.PATCH". */
PEAK_API const char* peak_version(void);

/* ---- tensor types ----------------------------------------------------------- */

/* Name of a ggml tensor type id as GGUF files store it ("F32", "Q4_K", ...);
   "unknown" for ids that were never assigned. */
PEAK_API const char* peak_type_name(uint32_t type);

/* ---- GGUF files: read-only inspection of metadata and tensors ----------------- */

typedef struct peak_gguf peak_gguf;

/* Metadata value types, numbered as in the GGUF format. */
typedef enum peak_gguf_type {
  PEAK_GGUF_UINT8 = 0, PEAK_GGUF_INT8 = 1, PEAK_GGUF_UINT16 = 2, PEAK_GGUF_INT16 = 3,
  PEAK_GGUF_UINT32 = 4, PEAK_GGUF_INT32 = 5, PEAK_GGUF_FLOAT32 = 6, PEAK_GGUF_BOOL = 7,
  PEAK_GGUF_STRING = 8, PEAK_GGUF_ARRAY = 9, PEAK_GGUF_UINT64 = 10, PEAK_GGUF_INT64 = 11,
  PEAK_GGUF_FLOAT64 = 12
} peak_gguf_type;

typedef struct peak_gguf_open_params {
  size_t struct_size; /* sizeof(peak_gguf_open_params), set by the default function */
  int use_mmap;       /* 1: map the file (default); 0: read it into memory */
} peak_gguf_open_params;

PEAK_API peak_gguf_open_params peak_gguf_default_open_params(void);

/* Opens and fully validates a GGUF file. `params` may be NULL for the defaults.
   On failure *out is set to NULL and the message names the problem, the key or
   tensor and the byte offset. */
PEAK_API peak_status peak_gguf_open(const char* path, const peak_gguf_open_params* params, peak_gguf** out);
PEAK_API void peak_gguf_free(peak_gguf* gguf);

PEAK_API uint32_t peak_gguf_version(const peak_gguf* gguf);
PEAK_API uint32_t peak_gguf_alignment(const peak_gguf* gguf);
PEAK_API uint64_t peak_gguf_data_offset(const peak_gguf* gguf);
PEAK_API uint64_t peak_gguf_file_size(const peak_gguf* gguf);

/* Metadata, by index 0..n_kv-1. Keys are NUL-terminated. String values are
   returned as pointer + length (not NUL-terminated; they may contain any bytes).
   Returned pointers stay valid until peak_gguf_free. Getters check the stored
   type: asking for a uint32 stored as a string gives PEAK_ERR_TYPE_MISMATCH. */
PEAK_API int64_t peak_gguf_n_kv(const peak_gguf* gguf);
PEAK_API const char* peak_gguf_key(const peak_gguf* gguf, int64_t index);
/* Index of `key`, or -1 when absent (O(1)). */
PEAK_API int64_t peak_gguf_find_key(const peak_gguf* gguf, const char* key);
PEAK_API peak_gguf_type peak_gguf_kv_type(const peak_gguf* gguf, int64_t index);
PEAK_API const char* peak_gguf_type_name(peak_gguf_type type);

/* Any integer type, range-checked (uint refuses negatives). */
PEAK_API peak_status peak_gguf_get_uint(const peak_gguf* gguf, int64_t index, uint64_t* out);
PEAK_API peak_status peak_gguf_get_int(const peak_gguf* gguf, int64_t index, int64_t* out);
/* float32 or float64. */
PEAK_API peak_status peak_gguf_get_float(const peak_gguf* gguf, int64_t index, double* out);
PEAK_API peak_status peak_gguf_get_bool(const peak_gguf* gguf, int64_t index, int* out);
PEAK_API peak_status peak_gguf_get_string(const peak_gguf* gguf, int64_t index, const char** data, size_t* length);

/* Arrays: element type and count, then elements by position. Nested arrays
   report PEAK_GGUF_ARRAY as their element type; their elements are not
   reachable through this API. */
PEAK_API peak_status peak_gguf_get_array_info(const peak_gguf* gguf, int64_t index, peak_gguf_type* elem_type,
                                              uint64_t* count);
PEAK_API peak_status peak_gguf_get_array_uint(const peak_gguf* gguf, int64_t index, uint64_t i, uint64_t* out);
PEAK_API peak_status peak_gguf_get_array_int(const peak_gguf* gguf, int64_t index, uint64_t i, int64_t* out);
PEAK_API peak_status peak_gguf_get_array_float(const peak_gguf* gguf, int64_t index, uint64_t i, double* out);
PEAK_API peak_status peak_gguf_get_array_bool(const peak_gguf* gguf, int64_t index, uint64_t i, int* out);
PEAK_API peak_status peak_gguf_get_array_string(const peak_gguf* gguf, int64_t index, uint64_t i,
                                                const char** data, size_t* length);

/* Tensors, by index 0..n_tensors-1. */
typedef struct peak_gguf_tensor_info {
  const char* name;   /* NUL-terminated, valid until peak_gguf_free */
  uint32_t type;      /* ggml type id; see peak_type_name */
  uint32_t n_dims;    /* 1..4 */
  int64_t ne[4];      /* elements per dimension, ne[0] is the row; unused dims are 1 */
  uint64_t offset;    /* byte offset from the start of the data section */
  uint64_t n_bytes;
} peak_gguf_tensor_info;

PEAK_API int64_t peak_gguf_n_tensors(const peak_gguf* gguf);
PEAK_API peak_status peak_gguf_get_tensor(const peak_gguf* gguf, int64_t index, peak_gguf_tensor_info* out);
/* Index of a tensor by name, or -1 when absent. */
PEAK_API int64_t peak_gguf_find_tensor(const peak_gguf* gguf, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* PEAK_PEAK_H */
