/*
 * dynd.h -- the C ABI of dynd-rs (libdynd_capi.so / libdynd_capi.a).
 *
 * This header is hand-written and normative: the names, struct layouts,
 * type ids and error codes below are fixed (DESIGN.md sections 3-5) and the
 * Rust side asserts every layout and constant at compile time.
 *
 * General rules (docs/capi.md has the long form):
 *
 * - Errors. A function that can fail returns a status (int: 0 = ok,
 *   -1 = error), a -1 offset, or NULL, and records the error -- a
 *   DYND_ERR_* code and a message -- in a thread-local slot, read with
 *   dynd_error_code() and dynd_error_message(). A call that succeeds may
 *   leave an older error in the slot (as errno does): test the return
 *   value, then read the slot. NULL or invalid handles are
 *   DYND_ERR_INVALID_ARGUMENT errors naming the function and the argument,
 *   never a crash; release functions (*_decref, dynd_string_free,
 *   dynd_ckernel_builder_destruct) accept NULL as a no-op and leave the
 *   slot alone, so cleanup code on an error path keeps the error intact.
 *   Nothing unwinds across this ABI.
 *
 * - Ownership. Objects handed out are new references, which the receiver
 *   releases exactly once (dynd_type_decref, dynd_array_decref,
 *   dynd_callable_decref, dynd_string_free), unless documented as
 *   borrowed. A borrowed object is valid while the object it was borrowed
 *   from lives; incref it to keep it longer. Objects passed in are borrowed
 *   for the call, except the deferred ckernel that
 *   dynd_callable_from_deferred takes over.
 *
 * - Threads. Reference counts are atomic; types are immutable; every
 *   function may be called from any thread. An array's data is shared,
 *   mutable memory: writing elements another thread reads or writes at the
 *   same time is a data race (split the work, as dynd's executors do). A
 *   ckernel builder is used by one thread at a time while it is built; a
 *   built ckernel may be called from many threads at once. Callables are
 *   immutable and may be called and instantiated from many threads at
 *   once; dynd_callable_call may itself run a kernel on several threads, so
 *   a third party's instantiate function and kernels must be thread-safe.
 */
#ifndef DYND_H
#define DYND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A dynd_type below this value is a builtin id (DESIGN section 3):
 *    1 bool      2 int8      3 int16     4 int32     5 int64     6 int128
 *    7 uint8     8 uint16    9 uint32   10 uint64   11 uint128
 *   12 float16  13 float32  14 float64  16 complex[float32]
 *   17 complex[float64]     18 void     19 bfloat16
 * 0 (uninitialized), 15 (float128, reserved) and 20..63 are not types. */
#define DYND_BUILTIN_TYPE_ID_LIMIT 64

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

enum { DYND_OK = 0, DYND_ERR_INVALID_ARGUMENT = 1, DYND_ERR_TYPE = 2,
       DYND_ERR_OVERFLOW = 3, DYND_ERR_FRACTIONAL = 4, DYND_ERR_INEXACT = 5,
       DYND_ERR_INDEX = 6, DYND_ERR_BROADCAST = 7, DYND_ERR_PARSE = 8,
       DYND_ERR_ALLOC = 9, DYND_ERR_EXTERNAL = 10 };
/* DYND_ERR_INVALID_ARGUMENT  NULL, an invalid handle, an unknown mode/request
 * DYND_ERR_TYPE              a type that does not fit the operation
 * DYND_ERR_OVERFLOW          a value out of the destination's range
 * DYND_ERR_FRACTIONAL        float -> integer would drop a fractional part
 * DYND_ERR_INEXACT           a conversion would change the value
 * DYND_ERR_INDEX             an index or axis out of range
 * DYND_ERR_BROADCAST         shapes that do not broadcast
 * DYND_ERR_PARSE             malformed datashape, JSON or utf-8
 * DYND_ERR_ALLOC             out of memory
 * DYND_ERR_EXTERNAL          reported by code outside dynd (or an internal
 *                            panic, caught at the ABI)                      */

/* The code of the error in this thread's slot, DYND_OK (0) if it is empty.
 * Never fails. */
int         dynd_error_code(void);

/* The message of the error in this thread's slot, "" if it is empty.
 * Borrowed: valid until the next call into the library on this thread.
 * Never returns NULL. */
const char *dynd_error_message(void);

/* Records an error in this thread's slot: how a third-party kernel reports
 * a failure before returning -1 (the code and message then reach whoever
 * called dynd). The message is copied. code DYND_OK clears the slot; a code
 * that is not a DYND_ERR_* value is recorded as DYND_ERR_EXTERNAL with the
 * code in the message; a NULL message is recorded as "(no message)".
 * Never fails. */
void        dynd_error_set(int code, const char *message);

/* Empties this thread's error slot. Never fails. */
void        dynd_error_clear(void);

/* Threads (DESIGN section 13). dynd's callables split large calls across
 * a pool of threads; small calls run on the calling thread.
 * dynd_set_num_threads sets the count for the whole process; 0 goes back
 * to the default (the DYND_NUM_THREADS environment variable, else
 * RAYON_NUM_THREADS, else the number of cores). Returns 0, or -1 with
 * DYND_ERR_INVALID_ARGUMENT for a negative count or one above 4096 (the
 * setting is then unchanged). */
int         dynd_set_num_threads(int n);

/* The number of threads a call made now on this thread would use (at
 * least 1). Never fails. */
int         dynd_get_num_threads(void);

/* Frees a string returned by this library (dynd_type_to_datashape,
 * dynd_array_to_json). Never pass it anything else, and never free those
 * strings with free(). NULL is a no-op. */
void        dynd_string_free(char *s);

/* ------------------------------------------------------------------------
 * Types
 *
 * A dynd_type is either a builtin id cast to a pointer (below
 * DYND_BUILTIN_TYPE_ID_LIMIT: no allocation, incref/decref do nothing), or
 * a pointer to an immutable, reference-counted extended type. Equal handles
 * are equal types; equal types made separately may have different handles.
 * ------------------------------------------------------------------------ */

typedef const struct dynd_type_s *dynd_type;

/* Parses datashape text ("3 * var * {x: int32, name: string}").
 * Returns a new reference (release with dynd_type_decref; builtins such as
 * "int32" come back as their id), or NULL: DYND_ERR_PARSE naming the line,
 * column and what was expected, DYND_ERR_TYPE for an invalid type,
 * DYND_ERR_INVALID_ARGUMENT for NULL. */
dynd_type dynd_type_from_datashape(const char *datashape);

/* The canonical datashape of tp, as a new string (free with
 * dynd_string_free), or NULL: DYND_ERR_INVALID_ARGUMENT for an invalid tp. */
char     *dynd_type_to_datashape(dynd_type tp);

/* Adds a reference to tp (nothing for a builtin).
 * DYND_ERR_INVALID_ARGUMENT (nothing done) for NULL or an invalid id. */
void      dynd_type_incref(dynd_type tp);

/* Releases a reference to tp, freeing it with the last. Any value below
 * DYND_BUILTIN_TYPE_ID_LIMIT (NULL included) is a no-op. */
void      dynd_type_decref(dynd_type tp);

/* Size of one element's data in bytes (DESIGN section 4; 0 for void and
 * symbolic types). Returns 0 with DYND_ERR_INVALID_ARGUMENT for an invalid
 * tp (clear the slot first to tell the cases apart). */
size_t    dynd_type_data_size(dynd_type tp);

/* Alignment of the data in bytes. 0 with DYND_ERR_INVALID_ARGUMENT for an
 * invalid tp. */
size_t    dynd_type_data_alignment(dynd_type tp);

/* Size of the arrmeta in bytes (DESIGN section 4; 0 for scalars). 0 with
 * DYND_ERR_INVALID_ARGUMENT for an invalid tp. */
size_t    dynd_type_arrmeta_size(dynd_type tp);

/* ------------------------------------------------------------------------
 * Memory blocks
 *
 * Every memory block starts with this header. Arrays are memory blocks, and
 * so are the blockrefs in var dim, string, bytes and pointer arrmeta.
 * use_count is atomic: read it only for diagnostics and change it only
 * through incref/decref. kind: 0 array, 1 external, 2 fixed-size POD,
 * 3 POD allocator, 4 object.
 * ------------------------------------------------------------------------ */

typedef struct dynd_memory_block { int32_t use_count; uint32_t kind; } dynd_memory_block;

/* Adds a reference to mb (a block from this library).
 * DYND_ERR_INVALID_ARGUMENT (nothing done) for NULL. */
void dynd_memory_block_incref(dynd_memory_block *mb);

/* Releases a reference to mb, freeing it with the last (and releasing what
 * it holds). NULL is a no-op. */
void dynd_memory_block_decref(dynd_memory_block *mb);

/* The allocator of a POD allocator block: variable-sized data (var dim
 * elements, string bytes) for the arrays whose arrmeta holds that block.
 * Allocations are zero-filled and live as long as the block; only resize
 * moves data, and only the latest allocation's. All three functions
 * are thread-safe (the block locks its state), but "the latest allocation"
 * is per block: grow one output at a time per block. */
typedef struct dynd_pod_allocator_api {
  /* Allocates size_bytes at alignment (a power of two up to 4096), zero
   * filled; writes [*out_begin, *out_end). Call once per output element.
   * Returns 0, or -1 with the error recorded (DYND_ERR_INVALID_ARGUMENT for
   * a bad size or alignment or a finalized block, DYND_ERR_ALLOC). */
  int  (*allocate)(dynd_memory_block *self, intptr_t size_bytes, intptr_t alignment,
                   char **out_begin, char **out_end);
  /* Resizes the block's most recent allocation, whose begin is
   * *inout_begin, to size_bytes (growth is zero-filled; it may move, keeping
   * the contents); updates both pointers. Use it to grow an output of
   * unknown size and then trim it. Returns 0, or -1 with the error recorded
   * (DYND_ERR_INVALID_ARGUMENT when *inout_begin is not the latest
   * allocation, DYND_ERR_ALLOC). */
  int  (*resize)(dynd_memory_block *self, intptr_t size_bytes,
                 char **inout_begin, char **inout_end);
  /* Marks the block finished: later allocate/resize calls fail. Data
   * already allocated stays where it is. */
  void (*finalize)(dynd_memory_block *self);
} dynd_pod_allocator_api;

/* The allocator API of a POD allocator block (static: never freed), or
 * NULL with DYND_ERR_INVALID_ARGUMENT for NULL or another kind of block. */
const dynd_pod_allocator_api *dynd_memory_block_pod_allocator_api(dynd_memory_block *mb);

/* ------------------------------------------------------------------------
 * Arrays
 *
 * An array is its memory block: a dynd_array may be cast to
 * (dynd_memory_block *) and increfed/decrefed as one. Its data is laid out
 * as DESIGN section 4 says for its type, described by its arrmeta.
 * ------------------------------------------------------------------------ */

typedef struct dynd_array_s *dynd_array;

/* A new array of type tp with the default layout (C order; a fresh POD
 * allocator block in each var dim, string and bytes arrmeta), zero-filled:
 * numbers 0, strings and var dims empty, pointers NULL. Returns a new
 * reference, or NULL: DYND_ERR_TYPE for a symbolic type, DYND_ERR_ALLOC,
 * DYND_ERR_INVALID_ARGUMENT for an invalid tp. */
dynd_array  dynd_array_empty(dynd_type tp);

/* Parses len bytes of utf-8 JSON (no NUL terminator needed) as an array of
 * type tp. Returns a new reference, or NULL: DYND_ERR_PARSE (syntax, shape,
 * utf-8), DYND_ERR_OVERFLOW (a number out of range), DYND_ERR_FRACTIONAL
 * (1.5 into an integer), ...; messages name the line, column and element
 * path. DYND_ERR_INVALID_ARGUMENT for an invalid tp or a NULL json. */
dynd_array  dynd_array_from_json(dynd_type tp, const char *json, size_t len);

/* The array as compact JSON (floats in shortest round-trip form; NaN and
 * infinities as NaN, Infinity, -Infinity), as a new string (free with
 * dynd_string_free), or NULL with DYND_ERR_INVALID_ARGUMENT for NULL. */
char       *dynd_array_to_json(dynd_array a);

/* The array's type. Borrowed: valid while the array lives. An array made
 * from a type handle returns that same handle. NULL with
 * DYND_ERR_INVALID_ARGUMENT for NULL. */
dynd_type   dynd_array_type(dynd_array a);

/* Pointer to the array's data. Borrowed: valid while the array lives.
 * Arrays made by dynd_array_empty and dynd_array_from_json are writable.
 * NULL with DYND_ERR_INVALID_ARGUMENT for NULL.
 *
 * Option types (?T, DESIGN section 4) are laid out in one of two ways;
 * either way ?T's arrmeta is exactly T's:
 * - T with an NA value (builtin scalars, string, bytes, char, pointer):
 *   ?T's data is T's; a missing value is T's NA (the minimum signed
 *   integer, the maximum unsigned one, the float NaN with R's NA payload
 *   0x7ff00000000007a2 for float64 / 0x7f8007a2 for float32, the byte 2
 *   for bool, a NULL begin for string and bytes, a NULL pointer).
 * - any other T (struct, tuple, fixed and var dims, fixed_string,
 *   fixed_bytes): T's data (dynd_type_data_size(T) bytes, padding
 *   included), then one flag byte -- 1 present, 0 missing -- the whole
 *   padded to T's alignment. ?{a: int32, b: int8} is 12 bytes: the struct's
 *   8, the flag at offset 8, 3 bytes of padding. A missing value's T bytes
 *   are zero (a var element {NULL, 0}); zeroed memory reads as missing. */
char       *dynd_array_data(dynd_array a);

/* Pointer to the array's arrmeta (dynd_type_arrmeta_size(type) bytes,
 * pointer-aligned). Borrowed: valid while the array lives; do not modify
 * it. NULL with DYND_ERR_INVALID_ARGUMENT for NULL. */
const char *dynd_array_arrmeta(dynd_array a);

/* The memory block that owns the array's data. Borrowed: valid while the
 * array lives (incref it to keep it longer). NULL with
 * DYND_ERR_INVALID_ARGUMENT for NULL. */
dynd_memory_block *dynd_array_data_reference(dynd_array a);

/* Assigns src into dst: converts each value under errmode (DYND_ASSIGN_*)
 * and broadcasts src to dst's shape (DESIGN section 6). Returns 0, or -1:
 * DYND_ERR_OVERFLOW / _FRACTIONAL / _INEXACT for a value the mode rejects,
 * DYND_ERR_TYPE for types that cannot be assigned, DYND_ERR_BROADCAST,
 * DYND_ERR_INVALID_ARGUMENT for NULL, a read-only dst or an unknown
 * errmode. On error dst may be partly written (elements before the failing
 * one). */
int         dynd_array_assign(dynd_array dst, dynd_array src, int errmode);

/* Adds a reference to a. DYND_ERR_INVALID_ARGUMENT (nothing done) for NULL
 * or a memory block that is not an array. */
void        dynd_array_incref(dynd_array a);

/* Releases a reference to a, freeing it with the last (with the references
 * it holds: its type, its data block, its arrmeta's blockrefs). NULL is a
 * no-op; a memory block that is not an array is DYND_ERR_INVALID_ARGUMENT
 * and nothing is released. */
void        dynd_array_decref(dynd_array a);

/* Assignment error modes (DESIGN section 6). */
enum { DYND_ASSIGN_NOCHECK = 0, DYND_ASSIGN_OVERFLOW = 1,
       DYND_ASSIGN_FRACTIONAL = 2, DYND_ASSIGN_INEXACT = 3, DYND_ASSIGN_DEFAULT = 4 };
/* NOCHECK     plain conversion, as C would (wrapping integers)
 * OVERFLOW    error when a value is out of the destination's range
 * FRACTIONAL  also error when float -> integer drops a fractional part
 * INEXACT     also error when any value would change (float64 -> float32
 *             rounding)
 * DEFAULT     FRACTIONAL
 * NaN or infinity to an integer is an overflow error in every checked mode. */

/* ------------------------------------------------------------------------
 * CKernels
 *
 * A ckernel is pointer-aligned memory that starts with a prefix, followed
 * by the kernel's data and then its children. It is relocatable by memcpy:
 * it never holds a pointer into its own memory (children are reached by
 * offset). Its functions return 0, or -1 after dynd_error_set. They take
 * the kernel by shared reference: a built kernel may be called from many
 * threads at once, and must not write to its own memory.
 * ------------------------------------------------------------------------ */

typedef struct dynd_ckernel_prefix dynd_ckernel_prefix;
struct dynd_ckernel_prefix {
  /* A dynd_expr_single_t or dynd_expr_strided_t, as the kernel was
   * requested; cast it before calling. NULL: not built. */
  void *function;
  /* Destroys the kernel's data and its children; NULL when there is
   * nothing to destroy. Called once, by the kernel's owner (its parent, or
   * the builder for the root). */
  void (*destructor)(dynd_ckernel_prefix *self);
};

enum { DYND_KERNEL_REQUEST_SINGLE = 0, DYND_KERNEL_REQUEST_STRIDED = 1 };

/* One prototype family: n sources, one destination; unary is n = 1. src
 * points at n source pointers (and src_stride at n strides); self is the
 * kernel's own prefix. Return 0, or -1 with the error in the slot. */
typedef int (*dynd_expr_single_t)(char *dst, const char *const *src,
                                  dynd_ckernel_prefix *self);
typedef int (*dynd_expr_strided_t)(char *dst, intptr_t dst_stride,
                                   const char *const *src, const intptr_t *src_stride,
                                   size_t count, dynd_ckernel_prefix *self);

/* The memory a ckernel tree lives in: 16 words inline, then the heap. The
 * root kernel's prefix is at data (offset 0); a kernel at offset k is at
 * (char *)data + k. Growth moves the whole tree (relocation by memcpy), so
 * addresses into data are only valid until the next ensure_capacity*. */
typedef struct dynd_ckernel_builder {
  intptr_t *data;            /* pointer-aligned; points at static_data until it grows */
  intptr_t  capacity;        /* bytes */
  intptr_t  static_data[16];
} dynd_ckernel_builder;      /* 18 words; not relocatable once constructed */

/* Constructs an empty builder in the caller's memory (stack or heap): data
 * = static_data, capacity = 128 bytes, all zero. It must not move until
 * destructed. DYND_ERR_INVALID_ARGUMENT for NULL or a misaligned ckb. */
void dynd_ckernel_builder_construct(dynd_ckernel_builder *ckb);

/* Runs the root kernel's destructor (which destroys its children) and frees
 * the heap buffer. The memory may then be constructed again. NULL is a
 * no-op. */
void dynd_ckernel_builder_destruct(dynd_ckernel_builder *ckb);

/* Destroys the kernel tree and returns the builder to the constructed
 * state (inline, 128 bytes, all zero). DYND_ERR_INVALID_ARGUMENT for
 * NULL. */
void dynd_ckernel_builder_reset(dynd_ckernel_builder *ckb);

/* Makes capacity >= requested bytes. Growth moves the buffer to the heap
 * (data changes) and zero-fills the new memory; existing kernels move with
 * it. Returns 0, or -1: DYND_ERR_INVALID_ARGUMENT for NULL or a negative
 * request, DYND_ERR_ALLOC. For leaf kernels (no children). */
int  dynd_ckernel_builder_ensure_capacity_leaf(dynd_ckernel_builder *ckb, intptr_t requested);

/* As dynd_ckernel_builder_ensure_capacity_leaf, for requested bytes plus
 * one dynd_ckernel_prefix: room for the kernel and its first child's
 * prefix. */
int  dynd_ckernel_builder_ensure_capacity(dynd_ckernel_builder *ckb, intptr_t requested);

/* Builds the assignment kernel dst <- src at offset of ckb (0 for the root,
 * or the child slot of a kernel being built), for kernreq
 * (DYND_KERNEL_REQUEST_*) under errmode (DYND_ASSIGN_*). The arrmeta may be
 * NULL for a type without arrmeta; the kernel copies what it needs from
 * it. Returns the offset just past the kernel (where a sibling could go),
 * or -1: DYND_ERR_TYPE (a pair that cannot be assigned, a symbolic type),
 * DYND_ERR_BROADCAST, DYND_ERR_INVALID_ARGUMENT (NULL, a bad handle, a
 * negative offset, an unknown kernreq or errmode), DYND_ERR_ALLOC. What was
 * built before a failure is destroyed with the builder. The kernel is then
 * called through ((dynd_ckernel_prefix *)ckb->data)->function with the
 * prefix as self, and reports value errors as the modes say. */
intptr_t dynd_make_assignment_kernel(dynd_ckernel_builder *ckb, intptr_t offset,
                                     dynd_type dst_tp, const char *dst_arrmeta,
                                     dynd_type src_tp, const char *src_arrmeta,
                                     uint32_t kernreq, int errmode);

/* ------------------------------------------------------------------------
 * Deferred ckernels: how a third party hands a kernel family to dynd
 *
 * A deferred ckernel names concrete types (the destination, then the
 * sources), owns an opaque data_ptr, and builds kernels on request: dynd
 * calls instantiate_func with a builder, an offset and the arrmeta of the
 * concrete arrays, and gets back a kernel whose prefix is at that offset.
 * ------------------------------------------------------------------------ */

/* Builds one kernel of the family into ckb at ckb_offset, for the arrmeta
 * of the operands (arrmeta[0] the destination's, then one per source; NULL
 * for a type without arrmeta) and kernreq (DYND_KERNEL_REQUEST_SINGLE or
 * _STRIDED: set the prefix's function to a dynd_expr_single_t or a
 * dynd_expr_strided_t accordingly; refuse anything else).
 *
 * It must first make room -- dynd_ckernel_builder_ensure_capacity_leaf(ckb,
 * end) for a kernel without children -- and only then write the kernel at
 * (char *)ckb->data + ckb_offset (memory it gets zero-filled). The kernel
 * starts with a dynd_ckernel_prefix; its destructor may be NULL when it owns
 * nothing. It must be relocatable by memcpy (no pointers into itself), and
 * should copy what it needs from self_data and the arrmeta.
 *
 * Returns the offset just past the kernel (greater than ckb_offset;
 * pointer-size multiples are customary), or -1 after dynd_error_set (the
 * code and message reach whoever asked dynd for the kernel).
 *
 * Threads: it may be called from several threads at once (each with its own
 * builder), and the kernels it builds may be called from several threads at
 * once (each on its own output elements): keep them free of shared mutable
 * state. */
typedef intptr_t (*dynd_instantiate_fn)(void *self_data, dynd_ckernel_builder *ckb,
                                        intptr_t ckb_offset,
                                        const char *const *arrmeta, /* dst, then srcs */
                                        uint32_t kernreq);

/* Six words. Given to dynd_callable_from_deferred, which takes it over. */
typedef struct dynd_deferred_ckernel {
  size_t ckernel_funcproto;        /* 0: expr (the only one today) */
  size_t data_types_size;          /* 1 + number of sources */
  const dynd_type *data_dynd_types; /* dst type, then source types */
  void *data_ptr;                  /* the family's data, passed to the functions */
  dynd_instantiate_fn instantiate_func;
  void (*free_func)(void *data_ptr); /* frees data_ptr; may be NULL */
} dynd_deferred_ckernel;

/* ------------------------------------------------------------------------
 * Callables
 *
 * A dynd_callable is an immutable, reference-counted function: dynd's own
 * (looked up by name) or a third party's (from a deferred ckernel). Handles
 * may be shared between threads and called from several at once.
 * ------------------------------------------------------------------------ */

typedef struct dynd_callable_s *dynd_callable;

/* Makes a callable from a deferred ckernel, taking ownership of it: on
 * return *dck is all zero whatever happened (so the caller cannot free it
 * twice), and dck->free_func(dck->data_ptr) is called exactly once -- when
 * the callable's last reference is released on success, before this
 * function returns on failure. The types are copied: dynd takes its own
 * references, and the array data_dynd_types points to (and the references
 * in it) stay the caller's, free to release after the call (or in
 * free_func).
 *
 * The callable is scalar: dynd_callable_call lifts it over every dim of its
 * arguments (fixed and var, with broadcasting) and may run the kernels on
 * several threads at once.
 *
 * Returns a new reference (dynd_callable_decref), or NULL with
 * DYND_ERR_INVALID_ARGUMENT for a NULL dck, a ckernel_funcproto other than
 * 0, fewer than 2 or more than 5 data types, a NULL data_dynd_types or
 * instantiate_func, or an invalid type handle; DYND_ERR_TYPE for a symbolic
 * type (the types must be concrete). */
dynd_callable dynd_callable_from_deferred(dynd_deferred_ckernel *dck);

/* The callable registered under name ("add", "multiply", "sum", ...), as a
 * new reference, or NULL: DYND_ERR_INVALID_ARGUMENT for an unknown name
 * (the message lists the known ones) or NULL, DYND_ERR_PARSE for a name that
 * is not utf-8. */
dynd_callable dynd_callable_lookup(const char *name);

/* Calls f on nargs arrays (args may be NULL when nargs is 0; the arrays are
 * borrowed). The result type is resolved from the arguments' types -- for a
 * scalar callable, the broadcast of their dims (DESIGN section 6) over the
 * element result -- and a new array of it is returned (a new reference).
 * Large calls run the outer loop on several threads.
 *
 * Returns NULL with the error recorded: DYND_ERR_TYPE (arguments f does not
 * accept), DYND_ERR_BROADCAST, DYND_ERR_INVALID_ARGUMENT (NULL, an invalid
 * handle), DYND_ERR_ALLOC, or whatever a kernel reported: an error a
 * third-party kernel records with dynd_error_set comes back here with its
 * code and message, also when the kernel ran on another thread. */
dynd_array    dynd_callable_call(dynd_callable f, size_t nargs, const dynd_array *args);

/* Builds f's kernel for concrete types and arrmeta into ckb at offset (0 for
 * the root, or the child slot of a kernel the caller is building), for
 * kernreq (DYND_KERNEL_REQUEST_*): the kernel computing dst from the nsrc
 * sources. A scalar callable's kernel is lifted over the dims (dst_tp must
 * be the type the call would produce, or one it broadcasts into). Arrmeta
 * may be NULL for a type without arrmeta, and src_arrmeta may be NULL when
 * no source has any.
 *
 * Returns the offset just past the kernel, or -1: DYND_ERR_TYPE (types f
 * does not accept), DYND_ERR_BROADCAST, DYND_ERR_INVALID_ARGUMENT (NULL, a
 * bad handle, a negative offset, an unknown kernreq), or what a deferred
 * ckernel's instantiate_func reported. What was built before a failure is
 * destroyed with the builder. The kernel is then called through
 * ((dynd_ckernel_prefix *)((char *)ckb->data + offset))->function.
 *
 * The kernel may use f's data (a deferred ckernel's data_ptr): keep a
 * reference to f until the builder is destructed or reset. The builder is
 * used by one thread during the call; f may be instantiated on several
 * threads at once (each with its own builder). */
intptr_t      dynd_callable_instantiate(dynd_callable f, dynd_ckernel_builder *ckb, intptr_t offset,
                                        dynd_type dst_tp, const char *dst_arrmeta,
                                        size_t nsrc, const dynd_type *src_tp,
                                        const char *const *src_arrmeta, uint32_t kernreq);

/* Adds a reference to f. DYND_ERR_INVALID_ARGUMENT (nothing done) for NULL
 * or a handle that is not a callable. */
void          dynd_callable_incref(dynd_callable f);

/* Releases a reference to f, freeing it with the last (a deferred ckernel's
 * free_func runs then, on the releasing thread). NULL is a no-op. */
void          dynd_callable_decref(dynd_callable f);

/* ------------------------------------------------------------------------
 * Interop (wave 2): memory someone else owns, and DLPack 1.x tensors.
 * Ownership handed over is taken at once: release(owner) and a tensor's
 * deleter run exactly once, also when the call fails (then before it
 * returns NULL), so a caller never releases anything on the error path.
 * ------------------------------------------------------------------------ */

/* An array of ndim fixed dims over tp elements at data, without copying:
 * the type is shape[0] * ... * shape[ndim-1] * tp. shape and strides hold
 * ndim values each (either may be NULL when ndim is 0); strides are in bytes
 * and may be negative or zero; data is the address of element [0, ..., 0].
 * release(owner) runs once, when the last array or view over the data is
 * gone -- or before this call returns NULL; release may be NULL for memory
 * that outlives every array. When writable is 0 the array and its views
 * refuse assignment.
 *
 * Returns a new reference, or NULL: DYND_ERR_TYPE for an element type that
 * is symbolic, a dim, void, or holds references (string, bytes, var dims,
 * pointers); DYND_ERR_INVALID_ARGUMENT for a NULL shape or strides, a
 * negative dim size, a data pointer or stride not aligned for tp, or a
 * layout that does not fit the address space. */
dynd_array dynd_array_from_external(dynd_type tp, char *data, size_t ndim,
                                    const intptr_t *shape, const intptr_t *strides,
                                    void *owner, void (*release)(void *owner), int writable);

/* DLPack 1.x: the structs of dlpack.h 1.1, declared here unless dlpack.h
 * was included first (its guard is DLPACK_DLPACK_H_). Include dlpack.h
 * before dynd.h to use a newer dlpack.h's additions. */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLVulkan = 7,
  kDLMetal = 8, kDLVPI = 9, kDLROCM = 10, kDLROCMHost = 11, kDLExtDev = 12,
  kDLCUDAManaged = 13, kDLOneAPI = 14, kDLWebGPU = 15, kDLHexagon = 16,
  kDLMAIA = 17
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLOpaqueHandle = 3U,
  kDLBfloat = 4U, kDLComplex = 5U, kDLBool = 6U
} DLDataTypeCode;

typedef struct {
  uint8_t code;   /* a DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;              /* the first element is at (char *)data + byte_offset */
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;        /* in elements; NULL means C order */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif /* DLPACK_DLPACK_H_ */

/* A DLPack tensor over a's data, without copying: fixed dims of a numeric
 * builtin (bool, int8-int128, uint8-uint128, float16, bfloat16, float32,
 * float64, complex[float32], complex[float64]) on kDLCPU. Strides are in
 * elements and always filled; a read-only array sets
 * DLPACK_FLAG_BITMASK_READ_ONLY. The tensor holds a reference to a: the
 * consumer calls t->deleter(t) once, which releases it.
 *
 * Returns NULL: DYND_ERR_TYPE for a var dim or a non-numeric element type;
 * DYND_ERR_INVALID_ARGUMENT for NULL or a byte stride that is not a whole
 * number of elements (copy the array first). */
struct DLManagedTensorVersioned *dynd_array_to_dlpack(dynd_array a);

/* An array over a DLPack tensor's data, without copying. Takes ownership of
 * t always: its deleter runs once, when the last array or view over the
 * data is gone, or before this returns NULL. A tensor flagged read-only
 * gives a read-only array; byte_offset is honoured; NULL strides mean C
 * order. kDLCUDAHost and kDLROCMHost (pinned host memory) count as CPU.
 *
 * Returns a new reference, or NULL: DYND_ERR_INVALID_ARGUMENT for NULL, a
 * major version other than 1, a device other than the CPU (named in the
 * message), a negative ndim or dim size, or a misaligned pointer;
 * DYND_ERR_TYPE for a data type dynd does not have (its code, bits and
 * lanes in the message). */
dynd_array dynd_array_from_dlpack(struct DLManagedTensorVersioned *t);

/* ---- Arrow C Data Interface (DESIGN section 5, wave 2; section 12) ---- */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  /* Release callback */
  void (*release)(struct ArrowSchema*);
  /* Opaque producer-specific data */
  void* private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  /* Release callback */
  void (*release)(struct ArrowArray*);
  /* Opaque producer-specific data */
  void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

/* Exports a into *schema and *array (overwritten, not read): the outermost
 * dim is the Arrow array's length; the consumer calls both releases.
 * Primitives, and var dims whose rows lie in order, are zero-copy (the
 * exported array keeps a alive). Returns 0, or -1: DYND_ERR_TYPE (no dims,
 * or a type without an Arrow form such as int128 or complex: the message
 * names it), DYND_ERR_INVALID_ARGUMENT (NULL arguments; nothing written). */
int        dynd_array_to_arrow(dynd_array a, struct ArrowSchema *schema, struct ArrowArray *array);

/* Imports *array described by *schema as an `N * T` array (nullable fields
 * become ?T), moving from both: their release is set to NULL, also on
 * error. The producer's array release runs once, when the last dynd array
 * over its buffers is gone (or before an error returns); the schema's
 * before this returns. Returns a new reference, or NULL: DYND_ERR_TYPE (a
 * format dynd does not import, named in the message),
 * DYND_ERR_INVALID_ARGUMENT (NULL arguments -- nothing moved --, released
 * structs, children counts that disagree, invalid offsets or UTF-8). */
dynd_array dynd_array_from_arrow(struct ArrowSchema *schema, struct ArrowArray *array);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DYND_H */
