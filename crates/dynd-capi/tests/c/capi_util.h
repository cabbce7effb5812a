/*
 * capi_util.h -- what the C tests of dynd.h share: builtin type ids, the
 * fixed dim arrmeta layout, parsing a type, an array from JSON (arr) and the
 * check of an array's type and JSON (check_array),
 * the checks of a failing call (EXPECT_INVALID, EXPECT_NULL_WITH), the leaf
 * step of an instantiate (add_leaf_kernel) and an instantiate for kernels
 * with no data (leaf_instantiate); one strided kernel called from several
 * threads at once (run_strided_in_threads). Include it after dynd.h and
 * minitest.h.
 */
#ifndef DYND_CAPI_UTIL_H
#define DYND_CAPI_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* Builtin ids (DESIGN section 3). */
#define TP(id) ((dynd_type)(uintptr_t)(id))
#define T_BOOL TP(1)
#define T_INT8 TP(2)
#define T_INT16 TP(3)
#define T_INT32 TP(4)
#define T_INT64 TP(5)
#define T_UINT16 TP(8)
#define T_FLOAT32 TP(13)
#define T_FLOAT64 TP(14)

/* The arrmeta of a fixed dim (DESIGN section 4). */
typedef struct { intptr_t dim_size; intptr_t stride; } fixed_dim_meta;

/* A type from datashape text; a failed check (and NULL) when it does not parse. */
static inline dynd_type parse_type(const char *ds) {
  dynd_type tp = dynd_type_from_datashape(ds);
  if (tp == NULL) MT_FAIL("cannot parse %s: %s", ds, dynd_error_message());
  return tp;
}

/* An array of datashape `ds` from `json`. */
static inline dynd_array arr(const char *ds, const char *json) {
  dynd_type tp = parse_type(ds);
  if (tp == NULL) return NULL;
  dynd_array a = dynd_array_from_json(tp, json, strlen(json));
  if (a == NULL) MT_FAIL("cannot parse %s as %s: %s", json, ds, dynd_error_message());
  dynd_type_decref(tp);
  return a;
}

/* The array as JSON compared with `json`, and its type with `ds`. */
static inline void check_array(dynd_array a, const char *ds, const char *json) {
  if (a == NULL) {
    MT_FAIL("expected %s : %s, got NULL (error %d: %s)", json, ds, dynd_error_code(),
            dynd_error_message());
    return;
  }
  char *text = dynd_array_to_json(a);
  char *type = dynd_type_to_datashape(dynd_array_type(a));
  CHECK_EQ_STR(text, json);
  CHECK_EQ_STR(type, ds);
  dynd_string_free(text);
  dynd_string_free(type);
}

/* f over `nargs` arguments, the result checked against `ds` and `json`
 * (check_array), then released; the call must leave the error slot clear. */
static inline void check_call(dynd_callable f, size_t nargs, const dynd_array *args,
                              const char *ds, const char *json) {
  dynd_error_clear();
  dynd_array r = dynd_callable_call(f, nargs, args);
  check_array(r, ds, json);
  CHECK_EQ_INT(dynd_error_code(), DYND_OK);
  if (r != NULL) dynd_array_decref(r);
}

/* f(a), checked as check_call checks. */
static inline void check_call1(dynd_callable f, dynd_array a, const char *ds, const char *json) {
  check_call(f, 1, &a, ds, json);
}

/* f(a, b), checked as check_call checks. */
static inline void check_call2(dynd_callable f, dynd_array a, dynd_array b, const char *ds,
                               const char *json) {
  dynd_array args[2] = {a, b};
  check_call(f, 2, args, ds, json);
}

/* f over `nargs` arguments fails: no result, the error `code`, and a
 * message containing `text`. */
static inline void check_call_fails(dynd_callable f, size_t nargs, const dynd_array *args,
                                    int code, const char *text) {
  dynd_error_clear();
  CHECK(dynd_callable_call(f, nargs, args) == NULL);
  CHECK_EQ_INT(dynd_error_code(), code);
  CHECK_CONTAINS(dynd_error_message(), text);
}

/* f(a, b) fails, as check_call_fails checks. */
static inline void check_call2_fails(dynd_callable f, dynd_array a, dynd_array b, int code,
                                     const char *text) {
  dynd_array args[2] = {a, b};
  check_call_fails(f, 2, args, code, text);
}

/* Runs `call` with a clear error slot; the slot must then hold
 * DYND_ERR_INVALID_ARGUMENT. */
#define EXPECT_INVALID(call)                                                  \
  do {                                                                        \
    dynd_error_clear();                                                       \
    call;                                                                     \
    if (dynd_error_code() != DYND_ERR_INVALID_ARGUMENT)                       \
      MT_FAIL("%s: code %d, expected DYND_ERR_INVALID_ARGUMENT", #call,       \
              dynd_error_code());                                             \
  } while (0)

/* `call`, made with a clear error slot, must return NULL and leave `code` in
 * the slot. */
#define EXPECT_NULL_WITH(call, code)                                          \
  do {                                                                        \
    dynd_error_clear();                                                       \
    CHECK((call) == NULL);                                                    \
    CHECK_EQ_INT(dynd_error_code(), (code));                                  \
  } while (0)

/* The leaf step of an instantiate: makes room for a `size`-byte kernel at
 * ckb_offset and sets its function, `single` for DYND_KERNEL_REQUEST_SINGLE
 * and `strided` otherwise. Returns the offset past the kernel, or -1 when
 * the builder cannot grow; the kernel is at ckb->data + ckb_offset. */
static inline intptr_t add_leaf_kernel(dynd_ckernel_builder *ckb, intptr_t ckb_offset,
                                       size_t size, uint32_t kernreq, void *single,
                                       void *strided) {
  intptr_t end = ckb_offset + (intptr_t)size;
  if (dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0) return -1;
  dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)((char *)ckb->data + ckb_offset);
  k->function = kernreq == DYND_KERNEL_REQUEST_SINGLE ? single : strided;
  return end;
}

/* What leaf_instantiate builds: a kernel of `size` bytes (at least a
 * dynd_ckernel_prefix) whose functions are `single` and `strided`. */
typedef struct {
  size_t size;
  void *single;
  void *strided;
} leaf_kernel_fns;

/* An instantiate_func for a kernel that needs no data from its family and
 * no arrmeta: the deferred ckernel's data_ptr is a leaf_kernel_fns, which
 * outlives the callable. */
static inline intptr_t leaf_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                        intptr_t ckb_offset, const char *const *arrmeta,
                                        uint32_t kernreq) {
  (void)arrmeta;
  const leaf_kernel_fns *fns = (const leaf_kernel_fns *)self_data;
  return add_leaf_kernel(ckb, ckb_offset, fns->size, kernreq, fns->single, fns->strided);
}

/* One thread's share of run_strided_in_threads. */
typedef struct {
  dynd_ckernel_prefix *kernel;
  char *dst;
  const char *src;
  intptr_t dst_size, src_size;
  int n, chunk, rounds;
  int status;
} strided_share;

static inline void *strided_share_run(void *arg) {
  strided_share *s = (strided_share *)arg;
  dynd_expr_strided_t run = (dynd_expr_strided_t)s->kernel->function;
  intptr_t src_stride[1] = {s->src_size};
  s->status = 0;
  for (int r = 0; r < s->rounds && s->status == 0; r++) {
    /* In chunks, as an executor would call it. */
    for (int at = 0; at < s->n && s->status == 0; at += s->chunk) {
      size_t count = s->n - at < s->chunk ? (size_t)(s->n - at) : (size_t)s->chunk;
      const char *src[1] = {s->src + at * s->src_size};
      s->status = run(s->dst + at * s->dst_size, s->dst_size, src, src_stride, count, s->kernel);
    }
  }
  return NULL;
}

enum { STRIDED_MAX_THREADS = 8 };

/* Calls the one-source strided kernel `kernel` from `threads` threads at
 * once (at most STRIDED_MAX_THREADS), each over its own `per_thread`
 * elements of `dst` and `src` (`dst_size` and `src_size` bytes each), in
 * chunks of `chunk`, `rounds` times over; checks that every call returned
 * 0. */
static inline void run_strided_in_threads(dynd_ckernel_prefix *kernel, int threads, char *dst,
                                          intptr_t dst_size, const char *src, intptr_t src_size,
                                          int per_thread, int chunk, int rounds) {
  strided_share shares[STRIDED_MAX_THREADS];
  pthread_t ids[STRIDED_MAX_THREADS];
  REQUIRE(threads <= STRIDED_MAX_THREADS);
  for (int t = 0; t < threads; t++) {
    shares[t] = (strided_share){kernel,     dst + (intptr_t)t * per_thread * dst_size,
                                src + (intptr_t)t * per_thread * src_size,
                                dst_size,   src_size,
                                per_thread, chunk,
                                rounds,     -2};
    REQUIRE(pthread_create(&ids[t], NULL, strided_share_run, &shares[t]) == 0);
  }
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    CHECK_EQ_INT(shares[t].status, 0);
  }
}

#endif /* DYND_CAPI_UTIL_H */
