/*
 * test_missing.c -- C tests of missing values through include/dynd.h
 * (DESIGN sections 4 and 6): the flag byte of an option of a struct, read
 * where section 4 puts it; a third party's deferred ckernel lifted over
 * optional data, which never sees a missing value; and the callables
 * is_null, fill_null and drop_null by name.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 */
#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------ the flag byte of ?{a: int32} */

static void test_option_of_struct_flag_byte(void) {
  dynd_type opt = parse_type("?{a: int32}");
  dynd_type value = parse_type("{a: int32}");
  REQUIRE(opt != NULL && value != NULL);
  /* Section 4: the value's data, then one flag byte, padded to the value's
   * alignment; the option's arrmeta is the value's. */
  size_t flag = dynd_type_data_size(value);
  CHECK_EQ_INT((int)flag, 4);
  CHECK_EQ_INT((int)dynd_type_data_size(opt), 8);
  CHECK_EQ_INT((int)dynd_type_data_alignment(opt), (int)dynd_type_data_alignment(value));
  CHECK_EQ_INT((int)dynd_type_arrmeta_size(opt), (int)dynd_type_arrmeta_size(value));

  dynd_array a = arr("3 * ?{a: int32}", "[{\"a\": 7}, null, {\"a\": -2}]");
  REQUIRE(a != NULL);
  const fixed_dim_meta *m = (const fixed_dim_meta *)dynd_array_arrmeta(a);
  CHECK_EQ_INT((int)m->dim_size, 3);
  CHECK_EQ_INT((int)m->stride, (int)dynd_type_data_size(opt));
  const char *data = dynd_array_data(a);
  const int32_t want_a[3] = {7, 0, -2};
  const unsigned char want_flag[3] = {1, 0, 1};
  for (int i = 0; i < 3; i++) {
    const char *el = data + i * m->stride;
    int32_t v;
    memcpy(&v, el, sizeof v); /* field a at offset 0 */
    CHECK_EQ_INT((int)(unsigned char)el[flag], (int)want_flag[i]);
    /* A missing value's bytes are zero. */
    CHECK_EQ_INT(v, want_a[i]);
  }

  /* Writing the flag byte makes the record missing, as JSON shows. */
  dynd_array_data(a)[flag] = 0;
  check_array(a, "3 * ?{a: int32}", "[null,null,{\"a\":-2}]");

  /* A JSON object without an optional field reads it as missing. */
  dynd_array b = arr("2 * {x: ?int32, y: ?{a: int32}}", "[{\"x\": 1}, {\"y\": {\"a\": 5}}]");
  check_array(b, "2 * {x: ?int32, y: ?{a: int32}}",
              "[{\"x\":1,\"y\":null},{\"x\":null,\"y\":{\"a\":5}}]");

  dynd_array_decref(b);
  dynd_array_decref(a);
  dynd_type_decref(value);
  dynd_type_decref(opt);
}

/* ------------------------ a third party's kernel over data with missing */

/* dst = src + 100 on int32. It fails -- and counts -- if it is ever handed
 * INT32_MIN, the NA of ?int32: the lifter must give it present values only. */
static atomic_int saw_missing;
static atomic_int values_seen;

static int add100_one(char *dst, const char *src) {
  int32_t v;
  memcpy(&v, src, sizeof v);
  atomic_fetch_add(&values_seen, 1);
  if (v == INT32_MIN) {
    atomic_fetch_add(&saw_missing, 1);
    dynd_error_set(DYND_ERR_INVALID_ARGUMENT, "add100 was handed a missing value");
    return -1;
  }
  v += 100;
  memcpy(dst, &v, sizeof v);
  return 0;
}

static int add100_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  (void)self;
  return add100_one(dst, src[0]);
}

static int add100_strided(char *dst, intptr_t dst_stride, const char *const *src,
                          const intptr_t *src_stride, size_t count, dynd_ckernel_prefix *self) {
  (void)self;
  const char *s = src[0];
  for (size_t i = 0; i < count; i++) {
    if (add100_one(dst, s) != 0) return -1;
    dst += dst_stride;
    s += src_stride[0];
  }
  return 0;
}

static leaf_kernel_fns add100_fns = {sizeof(dynd_ckernel_prefix), (void *)&add100_single,
                                     (void *)&add100_strided};

static void test_deferred_kernel_never_sees_missing(void) {
  static const dynd_type types[2] = {T_INT32, T_INT32};
  dynd_deferred_ckernel dck = {0, 2, types, &add100_fns, &leaf_instantiate, NULL};
  dynd_callable f = dynd_callable_from_deferred(&dck);
  REQUIRE(f != NULL);
  struct {
    const char *t, *j, *rt, *rj;
    int present;
  } cases[] = {
      {"var * ?int32", "[1, null, 3, null, null, 6]", "var * ?int32",
       "[101,null,103,null,null,106]", 3},
      {"3 * var * ?int32", "[[1, null, 3], [], [null, null]]", "3 * var * ?int32",
       "[[101,null,103],[],[null,null]]", 2},
      {"4 * ?int32", "[null, null, null, null]", "4 * ?int32", "[null,null,null,null]", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    atomic_store(&values_seen, 0);
    dynd_array x = arr(cases[i].t, cases[i].j);
    dynd_array r = dynd_callable_call(f, 1, &x);
    check_array(r, cases[i].rt, cases[i].rj);
    CHECK_EQ_INT(atomic_load(&values_seen), cases[i].present);
    if (r != NULL) dynd_array_decref(r);
    dynd_array_decref(x);
  }
  /* A long row, so that any block-wise path is taken too: every tenth
   * value missing. */
  char json[8192];
  size_t at = 0;
  json[at++] = '[';
  for (int i = 0; i < 1000; i++) {
    at += (size_t)snprintf(json + at, sizeof json - at, "%s%s", i ? "," : "",
                           i % 10 == 3 ? "null" : "1");
  }
  json[at++] = ']';
  json[at] = 0;
  atomic_store(&values_seen, 0);
  dynd_array x = arr("1000 * ?int32", json);
  dynd_array r = dynd_callable_call(f, 1, &x);
  REQUIRE(r != NULL);
  CHECK_EQ_INT(atomic_load(&values_seen), 900);
  /* The result has nulls exactly where the input did. */
  dynd_callable is_null = dynd_callable_lookup("is_null");
  REQUIRE(is_null != NULL);
  dynd_array rn = dynd_callable_call(is_null, 1, &r);
  REQUIRE(rn != NULL);
  const char *nulls = dynd_array_data(rn);
  int mismatches = 0;
  for (int i = 0; i < 1000; i++) mismatches += nulls[i] != (i % 10 == 3);
  CHECK_EQ_INT(mismatches, 0);
  dynd_array_decref(rn);
  dynd_callable_decref(is_null);
  dynd_array_decref(r);
  dynd_array_decref(x);

  CHECK_EQ_INT(atomic_load(&saw_missing), 0);
  dynd_callable_decref(f);
}

/* ----------------------------------- is_null, fill_null, drop_null by name */

static void test_null_callables_by_name(void) {
  dynd_callable is_null = dynd_callable_lookup("is_null");
  dynd_callable fill_null = dynd_callable_lookup("fill_null");
  dynd_callable drop_null = dynd_callable_lookup("drop_null");
  REQUIRE(is_null != NULL && fill_null != NULL && drop_null != NULL);

  dynd_array x = arr("2 * var * ?int32", "[[1, null], [null, 4, null]]");
  dynd_array recs = arr("3 * ?{a: int32}", "[{\"a\": 1}, null, {\"a\": 3}]");
  dynd_array zero = arr("int64", "0");
  dynd_array big = arr("int64", "9999999999");

  check_call1(is_null, x, "2 * var * bool", "[[false,true],[true,false,true]]");
  check_call1(is_null, recs, "3 * bool", "[false,true,false]");

  dynd_array args[2] = {x, zero};
  check_call(fill_null, 2, args, "2 * var * int32", "[[1,0],[0,4,0]]");
  args[1] = big;
  check_call_fails(fill_null, 2, args, DYND_ERR_OVERFLOW, "fill_null: the fill value");

  check_call1(drop_null, x, "2 * var * int32", "[[1],[4]]");
  check_call1(drop_null, recs, "var * {a: int32}", "[{\"a\":1},{\"a\":3}]");

  dynd_array_decref(big);
  dynd_array_decref(zero);
  dynd_array_decref(recs);
  dynd_array_decref(x);
  dynd_callable_decref(drop_null);
  dynd_callable_decref(fill_null);
  dynd_callable_decref(is_null);
  dynd_error_clear();
}

int main(void) {
  RUN(test_option_of_struct_flag_byte);
  RUN(test_deferred_kernel_never_sees_missing);
  RUN(test_null_callables_by_name);
  return minitest_main_result();
}
