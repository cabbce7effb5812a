/*
 * design_only.c -- a C program written only from DESIGN.md section 5 (the
 * C ABI listing) and section 4 (layouts), not from this crate's tests or
 * docs: it checks that include/dynd.h is the contract the design states.
 *
 * A third party's "clamp" kernel family: dst = min(max(src, lo), hi) on
 * float64, with lo and hi in the deferred ckernel's data. Each kernel keeps
 * its bounds in a heap block it owns and frees in its destructor (so the
 * destructor path is exercised too), and refuses NaN with dynd_error_set.
 *
 * Exit status 0 when every check holds; run natively and under valgrind by
 * tests/c_tests.rs.
 */
#include <dynd.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      failures++;                                                             \
      fprintf(stderr, "design_only.c:%d: %s (last error %d: %s)\n", __LINE__, \
              #cond, dynd_error_code(), dynd_error_message());                \
    }                                                                         \
  } while (0)

/* ---- the third party's side ---- */

struct bounds { double lo, hi; };

static int kernels_alive = 0; /* built minus destroyed (one thread uses these) */
static int data_frees = 0;

/* The kernel: prefix, then a pointer to heap memory it owns. */
struct clamp_kernel {
  dynd_ckernel_prefix base;
  struct bounds *b;
};

static int clamp_value(char *dst, const char *src, const struct bounds *b) {
  double v;
  memcpy(&v, src, sizeof v);
  if (isnan(v)) {
    dynd_error_set(DYND_ERR_EXTERNAL, "clamp: NaN has no place between the bounds");
    return -1;
  }
  double r = v < b->lo ? b->lo : v > b->hi ? b->hi : v;
  memcpy(dst, &r, sizeof r);
  return 0;
}

static int clamp_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  return clamp_value(dst, src[0], ((struct clamp_kernel *)self)->b);
}

static int clamp_strided(char *dst, intptr_t dst_stride, const char *const *src,
                         const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self) {
  const struct bounds *b = ((struct clamp_kernel *)self)->b;
  const char *s = src[0];
  for (size_t i = 0; i < count; ++i, dst += dst_stride, s += src_stride[0])
    if (clamp_value(dst, s, b) != 0) return -1;
  return 0;
}

static void clamp_destroy(dynd_ckernel_prefix *self) {
  free(((struct clamp_kernel *)self)->b);
  kernels_alive--;
}

static intptr_t clamp_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                  intptr_t ckb_offset, const char *const *arrmeta,
                                  uint32_t kernreq) {
  (void)arrmeta;
  if (kernreq != DYND_KERNEL_REQUEST_SINGLE && kernreq != DYND_KERNEL_REQUEST_STRIDED) {
    dynd_error_set(DYND_ERR_INVALID_ARGUMENT, "clamp: unknown kernel request");
    return -1;
  }
  intptr_t end = ckb_offset + (intptr_t)sizeof(struct clamp_kernel);
  if (dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0) return -1;
  struct bounds *b = malloc(sizeof *b);
  if (b == NULL) {
    dynd_error_set(DYND_ERR_ALLOC, "clamp: out of memory");
    return -1;
  }
  *b = *(const struct bounds *)self_data;
  struct clamp_kernel *k = (struct clamp_kernel *)((char *)ckb->data + ckb_offset);
  k->base.function = kernreq == DYND_KERNEL_REQUEST_SINGLE ? (void *)clamp_single
                                                           : (void *)clamp_strided;
  k->base.destructor = clamp_destroy;
  k->b = b;
  kernels_alive++;
  return end;
}

static void clamp_free(void *data) {
  free(data);
  data_frees++;
}

/* ---- dynd's side, as a user of the library ---- */

static char *json_of(dynd_array a) { return a ? dynd_array_to_json(a) : NULL; }

static int json_is(dynd_array a, const char *expected) {
  char *j = json_of(a);
  int same = j != NULL && strcmp(j, expected) == 0;
  if (!same) fprintf(stderr, "got %s, expected %s\n", j ? j : "(null)", expected);
  dynd_string_free(j);
  return same;
}

int main(void) {
  dynd_type f64 = dynd_type_from_datashape("float64");
  EXPECT((uintptr_t)f64 < DYND_BUILTIN_TYPE_ID_LIMIT);

  /* The deferred ckernel: dst type, then the source type. */
  dynd_type types[2] = {f64, f64};
  struct bounds *data = malloc(sizeof *data);
  data->lo = -1.0;
  data->hi = 2.5;
  dynd_deferred_ckernel dck;
  dck.ckernel_funcproto = 0;
  dck.data_types_size = 2;
  dck.data_dynd_types = types;
  dck.data_ptr = data;
  dck.instantiate_func = clamp_instantiate;
  dck.free_func = clamp_free;
  dynd_callable clamp = dynd_callable_from_deferred(&dck);
  EXPECT(clamp != NULL);
  EXPECT(dck.data_ptr == NULL && dck.free_func == NULL); /* "clears *dck" */
  if (clamp == NULL) return 1;

  /* Lifted over a ragged array. */
  dynd_type tp = dynd_type_from_datashape("2 * var * float64");
  const char *json = "[[-3, 0.5, 9], [2.5, -1, 1e300, -0.25]]";
  dynd_array a = dynd_array_from_json(tp, json, strlen(json));
  dynd_type_decref(tp);
  EXPECT(a != NULL);
  dynd_array r = dynd_callable_call(clamp, 1, &a);
  EXPECT(json_is(r, "[[-1.0,0.5,2.5],[2.5,-1.0,2.5,-0.25]]"));
  char *ds = r ? dynd_type_to_datashape(dynd_array_type(r)) : NULL;
  EXPECT(ds != NULL && strcmp(ds, "2 * var * float64") == 0);
  dynd_string_free(ds);
  dynd_array_decref(r);
  EXPECT(kernels_alive == 0); /* the call destroyed the kernels it built */

  /* A kernel's error: code and message reach the caller. */
  const char *nan_json = "[1, NaN]";
  tp = dynd_type_from_datashape("2 * float64");
  dynd_array n = dynd_array_from_json(tp, nan_json, strlen(nan_json));
  dynd_type_decref(tp);
  EXPECT(n != NULL);
  dynd_error_clear();
  EXPECT(dynd_callable_call(clamp, 1, &n) == NULL);
  EXPECT(dynd_error_code() == DYND_ERR_EXTERNAL);
  EXPECT(strcmp(dynd_error_message(), "clamp: NaN has no place between the bounds") == 0);
  dynd_array_decref(n);
  EXPECT(kernels_alive == 0);

  /* A large input: dynd may split it across threads; same answers. */
  enum { N = 200000 };
  char shape[32];
  snprintf(shape, sizeof shape, "%d * float64", N);
  tp = dynd_type_from_datashape(shape);
  dynd_array big = dynd_array_empty(tp);
  dynd_type_decref(tp);
  EXPECT(big != NULL);
  double *bd = (double *)dynd_array_data(big);
  for (int i = 0; i < N; ++i) bd[i] = (i % 7) - 3.0;
  r = dynd_callable_call(clamp, 1, &big);
  EXPECT(r != NULL);
  if (r != NULL) {
    const double *rd = (const double *)dynd_array_data(r);
    int ok = 1;
    for (int i = 0; i < N; ++i) {
      double v = (i % 7) - 3.0;
      ok = ok && rd[i] == (v < -1 ? -1 : v > 2.5 ? 2.5 : v);
    }
    EXPECT(ok);
  }
  dynd_array_decref(r);
  dynd_array_decref(big);

  /* Instantiated by hand: single, then strided, then a lifted one built
   * from array arrmeta. */
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  intptr_t end = dynd_callable_instantiate(clamp, &ckb, 0, f64, NULL, 1, types, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE);
  EXPECT(end > 0);
  EXPECT(kernels_alive == 1);
  if (end > 0) {
    dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
    double x = 7, y = 0;
    const char *src = (const char *)&x;
    EXPECT(((dynd_expr_single_t)k->function)((char *)&y, &src, k) == 0 && y == 2.5);
  }
  dynd_ckernel_builder_reset(&ckb);
  EXPECT(kernels_alive == 0);
  end = dynd_callable_instantiate(clamp, &ckb, 0, f64, NULL, 1, types, NULL,
                                  DYND_KERNEL_REQUEST_STRIDED);
  EXPECT(end > 0);
  if (end > 0) {
    dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
    double xs[4] = {-5, 0, 1, 5}, ys[4] = {0};
    const char *src = (const char *)xs;
    intptr_t stride = sizeof(double);
    EXPECT(((dynd_expr_strided_t)k->function)((char *)ys, sizeof(double), &src, &stride, 4,
                                              k) == 0);
    EXPECT(ys[0] == -1 && ys[1] == 0 && ys[2] == 1 && ys[3] == 2.5);
  }
  dynd_ckernel_builder_destruct(&ckb);
  EXPECT(kernels_alive == 0);

  dynd_type a_tp = dynd_array_type(a); /* borrowed */
  const char *a_meta = dynd_array_arrmeta(a);
  tp = dynd_type_from_datashape("2 * var * float64");
  dynd_array out = dynd_array_empty(tp); /* var elements unwritten: allocated */
  dynd_type_decref(tp);
  dynd_ckernel_builder_construct(&ckb);
  end = dynd_callable_instantiate(clamp, &ckb, 0, dynd_array_type(out), dynd_array_arrmeta(out),
                                  1, &a_tp, &a_meta, DYND_KERNEL_REQUEST_SINGLE);
  EXPECT(end > 0);
  if (end > 0) {
    dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
    const char *src = dynd_array_data(a);
    EXPECT(((dynd_expr_single_t)k->function)(dynd_array_data(out), &src, k) == 0);
    EXPECT(json_is(out, "[[-1.0,0.5,2.5],[2.5,-1.0,2.5,-0.25]]"));
  }
  dynd_ckernel_builder_destruct(&ckb);
  dynd_array_decref(out);
  EXPECT(kernels_alive == 0);

  /* Refused: a wrong argument type; an unknown name. */
  tp = dynd_type_from_datashape("3 * int32");
  dynd_array ints = dynd_array_from_json(tp, "[1,2,3]", 7);
  dynd_type_decref(tp);
  EXPECT(dynd_callable_call(clamp, 1, &ints) == NULL && dynd_error_code() == DYND_ERR_TYPE);
  dynd_array_decref(ints);
  EXPECT(dynd_callable_lookup("surely-not-a-callable") == NULL);
  EXPECT(dynd_error_code() == DYND_ERR_INVALID_ARGUMENT);

  /* "takes ownership": a refused deferred ckernel is freed at once. */
  struct bounds *more = malloc(sizeof *more);
  dynd_deferred_ckernel bad = {7, 2, types, more, clamp_instantiate, clamp_free};
  EXPECT(dynd_callable_from_deferred(&bad) == NULL);
  EXPECT(dynd_error_code() == DYND_ERR_INVALID_ARGUMENT);
  EXPECT(data_frees == 1);
  EXPECT(bad.data_ptr == NULL);

  /* References: the data goes with the last one. */
  dynd_callable_incref(clamp);
  dynd_callable_decref(clamp);
  EXPECT(data_frees == 1);
  dynd_callable_decref(clamp);
  EXPECT(data_frees == 2);

  dynd_array_decref(a);
  if (failures == 0) printf("design_only: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
