/*
 * test_callables.c -- C tests of the callable part of include/dynd.h:
 * third-party deferred ckernels made into callables, lifted over dims with
 * broadcasting, run in parallel, instantiated from C, and their ownership.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 */
#define _POSIX_C_SOURCE 200809L

#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(dynd_deferred_ckernel) == 6 * sizeof(void *), "deferred ckernel is 6 words");
_Static_assert(offsetof(dynd_deferred_ckernel, ckernel_funcproto) == 0, "funcproto");
_Static_assert(offsetof(dynd_deferred_ckernel, data_types_size) == sizeof(void *), "types size");
_Static_assert(offsetof(dynd_deferred_ckernel, data_dynd_types) == 2 * sizeof(void *), "types");
_Static_assert(offsetof(dynd_deferred_ckernel, data_ptr) == 3 * sizeof(void *), "data_ptr");
_Static_assert(offsetof(dynd_deferred_ckernel, instantiate_func) == 4 * sizeof(void *), "inst");
_Static_assert(offsetof(dynd_deferred_ckernel, free_func) == 5 * sizeof(void *), "free_func");

/* ---------------------------------------- the third party's kernel family */

/* The seeds' constant-multiply example, in C: dst = src * factor on int32,
 * the factor in malloc'd data_ptr, copied into each kernel. An overflowing
 * product is reported with dynd_error_set(DYND_ERR_OVERFLOW, ...). */

static atomic_int frees;              /* free_func calls */
static atomic_int instantiations;     /* instantiate_func calls */
static atomic_int ran_on_other_thread; /* a kernel ran on a thread but main's */
static pthread_t main_thread;

typedef struct { int32_t factor; } multiply_data;

typedef struct {
  dynd_ckernel_prefix base;
  int32_t factor;
} multiply_kernel;

static void note_thread(void) {
  if (!pthread_equal(pthread_self(), main_thread)) atomic_store(&ran_on_other_thread, 1);
}

static int multiply_one(char *dst, const char *src, int32_t factor) {
  int32_t v;
  memcpy(&v, src, sizeof v);
  int64_t r = (int64_t)v * factor;
  if (r < INT32_MIN || r > INT32_MAX) {
    char msg[96];
    snprintf(msg, sizeof msg, "multiply kernel: %d * %d overflows int32", (int)v, (int)factor);
    dynd_error_set(DYND_ERR_OVERFLOW, msg);
    return -1;
  }
  int32_t out = (int32_t)r;
  memcpy(dst, &out, sizeof out);
  return 0;
}

static int multiply_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  note_thread();
  return multiply_one(dst, src[0], ((multiply_kernel *)self)->factor);
}

static int multiply_strided(char *dst, intptr_t dst_stride, const char *const *src,
                            const intptr_t *src_stride, size_t count,
                            dynd_ckernel_prefix *self) {
  note_thread();
  int32_t factor = ((multiply_kernel *)self)->factor; /* the factor, not a literal 2 */
  const char *s = src[0];
  for (size_t i = 0; i < count; i++) {
    if (multiply_one(dst, s, factor) != 0) return -1;
    dst += dst_stride;
    s += src_stride[0];
  }
  return 0;
}

static intptr_t multiply_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                     intptr_t ckb_offset, const char *const *arrmeta,
                                     uint32_t kernreq) {
  (void)arrmeta; /* int32 has none */
  atomic_fetch_add(&instantiations, 1);
  intptr_t end = ckb_offset + (intptr_t)sizeof(multiply_kernel);
  if (dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0) return -1;
  multiply_kernel *k = (multiply_kernel *)((char *)ckb->data + ckb_offset);
  if (kernreq == DYND_KERNEL_REQUEST_SINGLE) {
    k->base.function = (void *)&multiply_single;
  } else if (kernreq == DYND_KERNEL_REQUEST_STRIDED) {
    k->base.function = (void *)&multiply_strided;
  } else {
    dynd_error_set(DYND_ERR_INVALID_ARGUMENT, "multiply kernel: unknown kernreq");
    return -1;
  }
  k->base.destructor = NULL; /* owns nothing */
  k->factor = ((const multiply_data *)self_data)->factor;
  return end;
}

static void counting_free(void *data) {
  atomic_fetch_add(&frees, 1);
  free(data);
}

static const dynd_type int32_to_int32[2] = {T_INT32, T_INT32};

/* Fills *out with the multiply-by-factor deferred ckernel. */
static void make_multiply(dynd_deferred_ckernel *out, int32_t factor) {
  multiply_data *d = malloc(sizeof *d);
  d->factor = factor;
  out->ckernel_funcproto = 0;
  out->data_types_size = 2;
  out->data_dynd_types = int32_to_int32;
  out->data_ptr = d;
  out->instantiate_func = &multiply_instantiate;
  out->free_func = &counting_free;
}

static dynd_callable multiply_callable(int32_t factor) {
  dynd_deferred_ckernel dck;
  make_multiply(&dck, factor);
  dynd_callable f = dynd_callable_from_deferred(&dck);
  if (f == NULL) MT_FAIL("from_deferred: %s", dynd_error_message());
  return f;
}

static int all_zero(const dynd_deferred_ckernel *dck) {
  static const dynd_deferred_ckernel zero;
  return memcmp(dck, &zero, sizeof zero) == 0;
}

/* ------------------------------------------------------------------ tests */

static void test_multiply_lifted_over_var(void) {
  int frees_before = atomic_load(&frees);
  dynd_deferred_ckernel dck;
  make_multiply(&dck, 3);
  dynd_callable f = dynd_callable_from_deferred(&dck);
  REQUIRE(f != NULL);
  CHECK(all_zero(&dck)); /* taken over: nothing left to free twice */

  dynd_array x = arr("3 * var * int32", "[[1, 2, 3], [], [4, 5]]");
  REQUIRE(x != NULL);
  check_call1(f, x, "3 * var * int32", "[[3,6,9],[],[12,15]]");

  /* Every other dim kind, and a scalar. */
  dynd_array y = arr("2 * 3 * int32", "[[1, 2, 3], [-4, -5, -6]]");
  check_call1(f, y, "2 * 3 * int32", "[[3,6,9],[-12,-15,-18]]");
  dynd_array_decref(y);
  y = arr("var * var * int32", "[[7], [], [8, 9]]");
  check_call1(f, y, "var * var * int32", "[[21],[],[24,27]]");
  dynd_array_decref(y);
  y = arr("int32", "-7");
  check_call1(f, y, "int32", "-21");
  dynd_array_decref(y);

  /* Arguments it does not take. */
  dynd_array z = arr("3 * float64", "[1, 2, 3]");
  dynd_error_clear();
  CHECK(dynd_callable_call(f, 1, &z) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  CHECK_CONTAINS(dynd_error_message(), "float64");
  dynd_array two[2] = {x, x};
  CHECK(dynd_callable_call(f, 2, two) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  dynd_array_decref(z);

  /* The data is freed once, with the last reference, not before. */
  dynd_callable_incref(f);
  dynd_callable_decref(f);
  CHECK_EQ_INT(atomic_load(&frees), frees_before);
  dynd_array r = dynd_callable_call(f, 1, &x); /* still alive */
  CHECK(r != NULL);
  dynd_array_decref(r);
  dynd_callable_decref(f);
  CHECK_EQ_INT(atomic_load(&frees), frees_before + 1);
  dynd_array_decref(x);
}

static void test_kernel_error_comes_back(void) {
  dynd_callable f = multiply_callable(3);
  REQUIRE(f != NULL);
  dynd_array x = arr("2 * var * int32", "[[1, 2], [1000000000]]");
  dynd_error_clear();
  CHECK(dynd_callable_call(f, 1, &x) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_OVERFLOW);
  CHECK_EQ_STR(dynd_error_message(), "multiply kernel: 1000000000 * 3 overflows int32");
  dynd_array_decref(x);
  dynd_callable_decref(f);
}

enum { BIG = 300000, POISON_AT = 250001 };

/* A large call runs the outer loop on dynd's worker threads; the error a
 * kernel sets there still reaches this thread with its code and message. */
static void test_kernel_error_from_parallel_call(void) {
  dynd_callable f = multiply_callable(3);
  REQUIRE(f != NULL);
  dynd_type tp = parse_type("300000 * int32");
  dynd_array x = dynd_array_empty(tp);
  dynd_type_decref(tp);
  REQUIRE(x != NULL);
  int32_t *data = (int32_t *)dynd_array_data(x);
  for (int i = 0; i < BIG; i++) data[i] = i;

  atomic_store(&ran_on_other_thread, 0);
  dynd_array r = dynd_callable_call(f, 1, &x);
  REQUIRE(r != NULL);
  const int32_t *out = (const int32_t *)dynd_array_data(r);
  int ok = 1;
  for (int i = 0; i < BIG; i++) ok = ok && out[i] == 3 * i;
  CHECK(ok);
  dynd_array_decref(r);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 1) CHECK(atomic_load(&ran_on_other_thread)); /* the parallel path ran */

  data[POISON_AT] = 1000000000;
  atomic_store(&ran_on_other_thread, 0);
  dynd_error_clear();
  CHECK(dynd_callable_call(f, 1, &x) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_OVERFLOW);
  CHECK_EQ_STR(dynd_error_message(), "multiply kernel: 1000000000 * 3 overflows int32");
  if (cpus > 1) CHECK(atomic_load(&ran_on_other_thread));
  dynd_array_decref(x);
  dynd_callable_decref(f);
}

/* -------------------------------------------- a binary kernel: broadcasting */

typedef struct { dynd_ckernel_prefix base; } product_kernel;

static int product_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  (void)self;
  *(int32_t *)dst = *(const int32_t *)src[0] * *(const int32_t *)src[1];
  return 0;
}

static int product_strided(char *dst, intptr_t dst_stride, const char *const *src,
                           const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self) {
  (void)self;
  const char *a = src[0], *b = src[1];
  for (size_t i = 0; i < count; i++) {
    *(int32_t *)dst = *(const int32_t *)a * *(const int32_t *)b;
    dst += dst_stride;
    a += src_stride[0];
    b += src_stride[1];
  }
  return 0;
}

static leaf_kernel_fns product_fns = {sizeof(product_kernel), (void *)&product_single,
                                      (void *)&product_strided};

static void test_binary_kernel_broadcasts(void) {
  static const dynd_type types[3] = {T_INT32, T_INT32, T_INT32};
  dynd_deferred_ckernel dck = {0, 3, types, &product_fns, &leaf_instantiate, NULL};
  dynd_callable f = dynd_callable_from_deferred(&dck);
  REQUIRE(f != NULL);
  struct {
    const char *t1, *j1, *t2, *j2, *rt, *rj;
  } cases[] = {
      {"3 * var * int32", "[[1,2,3],[],[4,5]]", "int32", "10", "3 * var * int32",
       "[[10,20,30],[],[40,50]]"},
      {"3 * var * int32", "[[1,2,3],[],[4,5]]", "3 * 1 * int32", "[[1],[2],[3]]",
       "3 * var * int32", "[[1,2,3],[],[12,15]]"},
      {"3 * var * int32", "[[1,2,3],[],[4,5]]", "var * int32", "[2]", "3 * var * int32",
       "[[2,4,6],[],[8,10]]"},
      {"2 * var * int32", "[[1,2,3],[4]]", "2 * 3 * int32", "[[1,2,3],[4,5,6]]",
       "2 * 3 * int32", "[[1,4,9],[16,20,24]]"},
      {"var * var * int32", "[[1],[2,3]]", "var * int32", "[5,6]", "var * var * int32",
       "[[5,6],[10,18]]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dynd_array args[2] = {arr(cases[i].t1, cases[i].j1), arr(cases[i].t2, cases[i].j2)};
    dynd_array r = dynd_callable_call(f, 2, args);
    check_array(r, cases[i].rt, cases[i].rj);
    dynd_array_decref(r);
    /* The other way round: the same (the product commutes). */
    dynd_array swapped[2] = {args[1], args[0]};
    r = dynd_callable_call(f, 2, swapped);
    check_array(r, cases[i].rt, cases[i].rj);
    dynd_array_decref(r);
    dynd_array_decref(args[0]);
    dynd_array_decref(args[1]);
  }
  dynd_array bad[2] = {arr("3 * int32", "[1,2,3]"), arr("2 * int32", "[1,2]")};
  dynd_error_clear();
  CHECK(dynd_callable_call(f, 2, bad) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_BROADCAST);
  dynd_array_decref(bad[0]);
  dynd_array_decref(bad[1]);
  dynd_array ragged[2] = {arr("2 * var * int32", "[[1,2],[3]]"),
                          arr("2 * var * int32", "[[1,2,3],[3]]")};
  CHECK(dynd_callable_call(f, 2, ragged) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_BROADCAST);
  dynd_array_decref(ragged[0]);
  dynd_array_decref(ragged[1]);
  dynd_callable_decref(f);
}

/* ------------------------------- a struct source: an extended type handle */

typedef struct { int32_t x, y; } point;

static int dot_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  (void)self;
  const point *p = (const point *)src[0];
  *(int32_t *)dst = p->x * p->y;
  return 0;
}

static int dot_strided(char *dst, intptr_t dst_stride, const char *const *src,
                       const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self) {
  for (size_t i = 0; i < count; i++) {
    const char *s = src[0] + (intptr_t)i * src_stride[0];
    if (dot_single(dst + (intptr_t)i * dst_stride, &s, self) != 0) return -1;
  }
  return 0;
}

static leaf_kernel_fns dot_fns = {sizeof(dynd_ckernel_prefix), (void *)&dot_single,
                                  (void *)&dot_strided};

/* The callable takes its own references to the types: ours go right away. */
static void test_extended_types_are_copied(void) {
  dynd_type types[2] = {T_INT32, parse_type("{x: int32, y: int32}")};
  REQUIRE(types[1] != NULL);
  dynd_deferred_ckernel dck = {0, 2, types, &dot_fns, &leaf_instantiate, NULL};
  dynd_callable f = dynd_callable_from_deferred(&dck);
  dynd_type_decref(types[1]);
  REQUIRE(f != NULL);
  dynd_array x = arr("2 * var * {x: int32, y: int32}",
                     "[[{\"x\": 2, \"y\": 3}], [{\"x\": 4, \"y\": 5}, {\"x\": -1, \"y\": 7}]]");
  check_call1(f, x, "2 * var * int32", "[[6],[20,-7]]");
  dynd_array_decref(x);
  dynd_callable_decref(f);
}

/* ---------------------------------------- instantiate failures and others */

static intptr_t silent_failing_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                           intptr_t ckb_offset, const char *const *arrmeta,
                                           uint32_t kernreq) {
  (void)self_data;
  (void)ckb;
  (void)ckb_offset;
  (void)arrmeta;
  (void)kernreq;
  return -1;
}

/* Fails as silent_failing_instantiate does, having set the error slot. */
static intptr_t failing_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                    intptr_t ckb_offset, const char *const *arrmeta,
                                    uint32_t kernreq) {
  dynd_error_set(DYND_ERR_TYPE, "failing kernel: not today");
  return silent_failing_instantiate(self_data, ckb, ckb_offset, arrmeta, kernreq);
}

static int silent_failing_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  (void)dst;
  (void)src;
  (void)self;
  return -1; /* forgets dynd_error_set */
}

static int silent_failing_strided(char *dst, intptr_t dst_stride, const char *const *src,
                                  const intptr_t *src_stride, size_t count,
                                  dynd_ckernel_prefix *self) {
  (void)dst_stride;
  (void)src_stride;
  (void)count;
  return silent_failing_single(dst, src, self);
}

static leaf_kernel_fns silent_kernel_fns = {sizeof(dynd_ckernel_prefix),
                                            (void *)&silent_failing_single,
                                            (void *)&silent_failing_strided};

static void test_instantiate_and_kernel_failures(void) {
  dynd_array x = arr("2 * int32", "[1, 2]");
  REQUIRE(x != NULL);

  dynd_deferred_ckernel dck = {0, 2, int32_to_int32, NULL, &failing_instantiate, NULL};
  dynd_callable f = dynd_callable_from_deferred(&dck);
  REQUIRE(f != NULL);
  dynd_error_clear();
  CHECK(dynd_callable_call(f, 1, &x) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  CHECK_EQ_STR(dynd_error_message(), "failing kernel: not today");
  dynd_callable_decref(f);

  dynd_deferred_ckernel dck2 = {0, 2, int32_to_int32, NULL, &silent_failing_instantiate, NULL};
  f = dynd_callable_from_deferred(&dck2);
  REQUIRE(f != NULL);
  CHECK(dynd_callable_call(f, 1, &x) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_EXTERNAL);
  CHECK_CONTAINS(dynd_error_message(), "without setting an error");
  dynd_callable_decref(f);

  dynd_deferred_ckernel dck3 = {0, 2, int32_to_int32, &silent_kernel_fns, &leaf_instantiate,
                               NULL};
  f = dynd_callable_from_deferred(&dck3);
  REQUIRE(f != NULL);
  CHECK(dynd_callable_call(f, 1, &x) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_EXTERNAL);
  dynd_callable_decref(f);
  dynd_array_decref(x);
}

/* From C: the single and strided kernels of a callable, on scalars and on a
 * whole fixed-dim array. */
static void test_instantiate_from_c(void) {
  int inst_before = atomic_load(&instantiations);
  dynd_callable f = multiply_callable(5);
  REQUIRE(f != NULL);
  dynd_type src_tp[1] = {T_INT32};

  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  intptr_t end = dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, src_tp, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE);
  CHECK(end >= (intptr_t)sizeof(multiply_kernel));
  CHECK_EQ_INT(atomic_load(&instantiations), inst_before + 1);
  dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
  dynd_expr_single_t single = (dynd_expr_single_t)k->function;
  int32_t in = 7, out = 0;
  const char *src[1] = {(const char *)&in};
  CHECK_EQ_INT(single((char *)&out, src, k), 0);
  CHECK_EQ_INT(out, 35);
  in = INT32_MAX;
  dynd_error_clear();
  CHECK_EQ_INT(single((char *)&out, src, k), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_OVERFLOW);
  dynd_ckernel_builder_reset(&ckb);

  end = dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, src_tp, NULL,
                                  DYND_KERNEL_REQUEST_STRIDED);
  CHECK(end > 0);
  k = (dynd_ckernel_prefix *)ckb.data;
  dynd_expr_strided_t strided = (dynd_expr_strided_t)k->function;
  int32_t xs[6] = {1, 2, 3, 4, 5, 6}, ys[3] = {0, 0, 0};
  const char *s[1] = {(const char *)xs};
  intptr_t stride[1] = {2 * sizeof(int32_t)}; /* every other element */
  CHECK_EQ_INT(strided((char *)ys, sizeof(int32_t), s, stride, 3, k), 0);
  CHECK_EQ_INT(ys[0], 5);
  CHECK_EQ_INT(ys[1], 15);
  CHECK_EQ_INT(ys[2], 25);
  dynd_ckernel_builder_destruct(&ckb);

  /* Lifted: a single call computes a whole 2 * 3 array. */
  dynd_array a = arr("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
  dynd_array b = arr("2 * 3 * int32", "[[0,0,0],[0,0,0]]");
  REQUIRE(a != NULL && b != NULL);
  dynd_type atp = dynd_array_type(a);
  const char *ameta[1] = {dynd_array_arrmeta(a)};
  dynd_ckernel_builder_construct(&ckb);
  end = dynd_callable_instantiate(f, &ckb, 0, dynd_array_type(b), dynd_array_arrmeta(b), 1,
                                  &atp, ameta, DYND_KERNEL_REQUEST_SINGLE);
  CHECK(end > 0);
  k = (dynd_ckernel_prefix *)ckb.data;
  single = (dynd_expr_single_t)k->function;
  const char *asrc[1] = {dynd_array_data(a)};
  CHECK_EQ_INT(single(dynd_array_data(b), asrc, k), 0);
  check_array(b, "2 * 3 * int32", "[[5,10,15],[20,25,30]]");
  dynd_ckernel_builder_destruct(&ckb);

  /* Errors: types it does not take, a NULL arrmeta a type needs. */
  dynd_ckernel_builder_construct(&ckb);
  dynd_type f64[1] = {T_FLOAT64};
  dynd_error_clear();
  CHECK_EQ_INT(dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, f64, NULL,
                                         DYND_KERNEL_REQUEST_SINGLE),
               -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  CHECK_EQ_INT(dynd_callable_instantiate(f, &ckb, 0, dynd_array_type(b), NULL, 1, &atp, ameta,
                                         DYND_KERNEL_REQUEST_SINGLE),
               -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "dst_arrmeta");
  CHECK_EQ_INT(dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, src_tp, NULL, 7), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_callable_instantiate(f, &ckb, -8, T_INT32, NULL, 1, src_tp, NULL,
                                         DYND_KERNEL_REQUEST_SINGLE),
               -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  dynd_ckernel_builder_destruct(&ckb);

  dynd_array_decref(a);
  dynd_array_decref(b);
  dynd_callable_decref(f);
}

/* One strided kernel from dynd_callable_instantiate, called from 4 threads
 * at once; and one callable called from 4 threads at once. */
enum { THREADS = 4, PER_THREAD = 50000 };

typedef struct {
  dynd_callable f;
  int status;
} job;

static void *call_thread(void *arg) {
  job *j = (job *)arg;
  j->status = -1;
  dynd_array x = arr("4 * var * int32", "[[1], [2, 3], [], [4, 5, 6]]");
  for (int round = 0; round < 20 && x != NULL; round++) {
    dynd_array r = dynd_callable_call(j->f, 1, &x);
    char *json = r ? dynd_array_to_json(r) : NULL;
    int ok = json != NULL && strcmp(json, "[[7],[14,21],[],[28,35,42]]") == 0;
    dynd_string_free(json);
    dynd_array_decref(r);
    if (!ok) {
      dynd_array_decref(x);
      return NULL;
    }
  }
  dynd_array_decref(x);
  j->status = 0;
  return NULL;
}

static void test_threads(void) {
  dynd_callable f = multiply_callable(7);
  REQUIRE(f != NULL);
  int32_t *src = malloc(THREADS * PER_THREAD * sizeof(int32_t));
  int32_t *dst = calloc(THREADS * PER_THREAD, sizeof(int32_t));
  REQUIRE(src != NULL && dst != NULL);
  for (int i = 0; i < THREADS * PER_THREAD; i++) src[i] = i - 1000;

  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  dynd_type src_tp[1] = {T_INT32};
  REQUIRE(dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, src_tp, NULL,
                                    DYND_KERNEL_REQUEST_STRIDED) > 0);
  run_strided_in_threads((dynd_ckernel_prefix *)ckb.data, THREADS, (char *)dst, sizeof(int32_t),
                         (const char *)src, sizeof(int32_t), PER_THREAD, 1000, 1);
  int ok = 1;
  for (int i = 0; i < THREADS * PER_THREAD; i++) ok = ok && dst[i] == 7 * (i - 1000);
  CHECK(ok);
  dynd_ckernel_builder_destruct(&ckb);

  job jobs[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    jobs[t] = (job){f, -2};
    REQUIRE(pthread_create(&threads[t], NULL, call_thread, &jobs[t]) == 0);
  }
  for (int t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(jobs[t].status, 0);
  }
  free(src);
  free(dst);
  dynd_callable_decref(f);
}

/* Every refused deferred ckernel is cleared and its data freed exactly once,
 * before dynd_callable_from_deferred returns. */
static void test_from_deferred_failures_free_once(void) {
  dynd_type symbolic = parse_type("Fixed * int32");
  dynd_type six[6] = {T_INT32, T_INT32, T_INT32, T_INT32, T_INT32, T_INT32};
  dynd_type bad_id[2] = {T_INT32, TP(15)};
  dynd_type with_symbolic[2] = {T_INT32, symbolic};
  struct {
    const char *what;
    size_t funcproto, ntypes;
    const dynd_type *types;
    int null_instantiate;
    int code;
    const char *message;
  } cases[] = {
      {"funcproto 1", 1, 2, int32_to_int32, 0, DYND_ERR_INVALID_ARGUMENT, "ckernel_funcproto"},
      {"one type", 0, 1, int32_to_int32, 0, DYND_ERR_INVALID_ARGUMENT, "data_types_size"},
      {"no types", 0, 0, int32_to_int32, 0, DYND_ERR_INVALID_ARGUMENT, "data_types_size"},
      {"NULL types", 0, 2, NULL, 0, DYND_ERR_INVALID_ARGUMENT, "data_dynd_types"},
      {"NULL instantiate", 0, 2, int32_to_int32, 1, DYND_ERR_INVALID_ARGUMENT,
       "instantiate_func"},
      {"type id 15", 0, 2, bad_id, 0, DYND_ERR_INVALID_ARGUMENT, "data_dynd_types[1]"},
      {"symbolic", 0, 2, with_symbolic, 0, DYND_ERR_TYPE, "symbolic"},
      {"5 sources", 0, 6, six, 0, DYND_ERR_INVALID_ARGUMENT, "sources"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int before = atomic_load(&frees);
    dynd_deferred_ckernel dck;
    make_multiply(&dck, 2);
    dck.ckernel_funcproto = cases[i].funcproto;
    dck.data_types_size = cases[i].ntypes;
    dck.data_dynd_types = cases[i].types;
    if (cases[i].null_instantiate) dck.instantiate_func = NULL;
    dynd_error_clear();
    dynd_callable f = dynd_callable_from_deferred(&dck);
    if (f != NULL) {
      MT_FAIL("%s: accepted", cases[i].what);
      dynd_callable_decref(f);
      continue;
    }
    if (dynd_error_code() != cases[i].code)
      MT_FAIL("%s: code %d, expected %d (%s)", cases[i].what, dynd_error_code(), cases[i].code,
              dynd_error_message());
    CHECK_CONTAINS(dynd_error_message(), cases[i].message);
    CHECK_CONTAINS(dynd_error_message(), "dynd_callable_from_deferred");
    if (atomic_load(&frees) != before + 1)
      MT_FAIL("%s: %d frees, expected 1", cases[i].what, atomic_load(&frees) - before);
    CHECK(all_zero(&dck));
    /* Calling from_deferred again on the cleared struct frees nothing. */
    CHECK(dynd_callable_from_deferred(&dck) == NULL);
    CHECK_EQ_INT(atomic_load(&frees), before + 1);
  }
  /* No free_func: nothing to call, still refused and cleared. */
  dynd_deferred_ckernel dck = {3, 2, int32_to_int32, NULL, &multiply_instantiate, NULL};
  CHECK(dynd_callable_from_deferred(&dck) == NULL);
  CHECK(all_zero(&dck));
  dynd_type_decref(symbolic);
}

static void test_lookup(void) {
  EXPECT_NULL_WITH(dynd_callable_lookup("no_such_callable"), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "no callable named 'no_such_callable'");
  EXPECT_NULL_WITH(dynd_callable_lookup("\xff"), DYND_ERR_PARSE);

  /* "add" lands with the arithmetic family; test it once it is there. */
  dynd_callable add = dynd_callable_lookup("add");
  if (add == NULL) {
    printf("     (no callable 'add' registered yet: %s)\n", dynd_error_message());
    return;
  }
  dynd_array args[2] = {arr("3 * var * int32", "[[1,2,3],[],[4,5]]"), arr("int32", "10")};
  dynd_array r = dynd_callable_call(add, 2, args);
  check_array(r, "3 * var * int32", "[[11,12,13],[],[14,15]]");
  dynd_array_decref(r);
  dynd_array_decref(args[0]);
  dynd_array_decref(args[1]);
  dynd_callable_decref(add);
}

static void test_null_arguments(void) {
  dynd_callable f = multiply_callable(2);
  REQUIRE(f != NULL);
  dynd_array x = arr("int32", "4");
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  dynd_type src_tp[1] = {T_INT32};

  EXPECT_INVALID(CHECK(dynd_callable_from_deferred(NULL) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'dck' is NULL");
  EXPECT_INVALID(CHECK(dynd_callable_lookup(NULL) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'name' is NULL");
  EXPECT_INVALID(CHECK(dynd_callable_call(NULL, 1, &x) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'f' is NULL");
  EXPECT_INVALID(CHECK(dynd_callable_call(f, 1, NULL) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'args' is NULL");
  dynd_array with_null[1] = {NULL};
  EXPECT_INVALID(CHECK(dynd_callable_call(f, 1, with_null) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'args[0]' is NULL");
  /* A handle of another kind is refused, not followed. */
  EXPECT_INVALID(CHECK(dynd_callable_call((dynd_callable)x, 1, &x) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "not a valid dynd_callable");
  EXPECT_INVALID(CHECK(dynd_callable_call((dynd_callable)(uintptr_t)4, 1, &x) == NULL));

  EXPECT_INVALID(CHECK(dynd_callable_instantiate(NULL, &ckb, 0, T_INT32, NULL, 1, src_tp, NULL,
                                                 DYND_KERNEL_REQUEST_SINGLE) == -1));
  EXPECT_INVALID(CHECK(dynd_callable_instantiate(f, NULL, 0, T_INT32, NULL, 1, src_tp, NULL,
                                                 DYND_KERNEL_REQUEST_SINGLE) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'ckb' is NULL");
  EXPECT_INVALID(CHECK(dynd_callable_instantiate(f, &ckb, 0, NULL, NULL, 1, src_tp, NULL,
                                                 DYND_KERNEL_REQUEST_SINGLE) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'dst_tp' is NULL");
  EXPECT_INVALID(CHECK(dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, NULL, NULL,
                                                 DYND_KERNEL_REQUEST_SINGLE) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'src_tp' is NULL");
  dynd_type null_tp[1] = {NULL};
  EXPECT_INVALID(CHECK(dynd_callable_instantiate(f, &ckb, 0, T_INT32, NULL, 1, null_tp, NULL,
                                                 DYND_KERNEL_REQUEST_SINGLE) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'src_tp[0]' is NULL");
  EXPECT_INVALID(dynd_callable_incref(NULL));

  /* NULL releases nothing and keeps the slot. */
  dynd_error_set(DYND_ERR_INDEX, "kept");
  dynd_callable_decref(NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INDEX);

  dynd_ckernel_builder_destruct(&ckb);
  dynd_array_decref(x);
  dynd_callable_decref(f);
  dynd_error_clear();
}

int main(void) {
  main_thread = pthread_self();
  RUN(test_multiply_lifted_over_var);
  RUN(test_kernel_error_comes_back);
  RUN(test_kernel_error_from_parallel_call);
  RUN(test_binary_kernel_broadcasts);
  RUN(test_extended_types_are_copied);
  RUN(test_instantiate_and_kernel_failures);
  RUN(test_instantiate_from_c);
  RUN(test_threads);
  RUN(test_from_deferred_failures_free_once);
  RUN(test_lookup);
  RUN(test_null_arguments);
  /* Every callable made above has been released: each data freed once. */
  int made = 1 /* lifted */ + 1 /* error */ + 1 /* parallel */ + 1 /* instantiate */
             + 1 /* threads */ + 8 /* failures */ + 1 /* nulls */;
  CHECK_EQ_INT(atomic_load(&frees), made);
  return minitest_main_result();
}
