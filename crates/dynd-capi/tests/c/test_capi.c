/*
 * test_capi.c -- C tests of include/dynd.h against libdynd_capi.so.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 */
#define _POSIX_C_SOURCE 200809L

#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The header's layouts, checked by the C compiler too. */
_Static_assert(sizeof(dynd_ckernel_builder) == 18 * sizeof(void *), "builder is 18 words");
_Static_assert(offsetof(dynd_ckernel_builder, data) == 0, "builder.data");
_Static_assert(offsetof(dynd_ckernel_builder, capacity) == sizeof(void *), "builder.capacity");
_Static_assert(offsetof(dynd_ckernel_builder, static_data) == 2 * sizeof(void *), "builder.static_data");
_Static_assert(sizeof(dynd_ckernel_prefix) == 2 * sizeof(void *), "prefix is 2 words");
_Static_assert(sizeof(dynd_memory_block) == 8, "memory block header is 8 bytes");
_Static_assert(sizeof(dynd_pod_allocator_api) == 3 * sizeof(void *), "allocator api is 3 pointers");

/* Arrmeta and data layouts (DESIGN section 4). */
typedef struct { dynd_memory_block *blockref; intptr_t stride; intptr_t offset; } var_dim_meta;
typedef struct { char *begin; size_t size; } var_dim_data;

static dynd_array parse_json(dynd_type tp, const char *json) {
  dynd_array a = dynd_array_from_json(tp, json, strlen(json));
  if (a == NULL) MT_FAIL("cannot parse %s: %s", json, dynd_error_message());
  return a;
}

/* The array as JSON, compared with `expected`. */
static void check_json(dynd_array a, const char *expected) {
  char *json = dynd_array_to_json(a);
  CHECK_EQ_STR(json, expected);
  dynd_string_free(json);
}

/* ---------------------------------------------------------------- errors */

static void test_error_slot(void) {
  dynd_error_clear();
  CHECK_EQ_INT(dynd_error_code(), DYND_OK);
  CHECK_EQ_STR(dynd_error_message(), "");

  dynd_error_set(DYND_ERR_EXTERNAL, "my kernel failed: 42 is odd");
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_EXTERNAL);
  CHECK_EQ_STR(dynd_error_message(), "my kernel failed: 42 is odd");
  /* Reading does not consume. */
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_EXTERNAL);

  dynd_error_set(DYND_ERR_OVERFLOW, NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_OVERFLOW);
  CHECK_EQ_STR(dynd_error_message(), "(no message)");

  dynd_error_set(99, "strange");
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_EXTERNAL);
  CHECK_CONTAINS(dynd_error_message(), "99");
  CHECK_CONTAINS(dynd_error_message(), "strange");

  dynd_error_set(DYND_OK, "ignored");
  CHECK_EQ_INT(dynd_error_code(), DYND_OK);

  dynd_error_set(DYND_ERR_INDEX, "x");
  dynd_error_clear();
  CHECK_EQ_INT(dynd_error_code(), DYND_OK);
  CHECK_EQ_STR(dynd_error_message(), "");
}

static void *error_slot_thread(void *arg) {
  int *ok = (int *)arg;
  /* A fresh thread sees an empty slot, whatever the main thread holds. */
  *ok = dynd_error_code() == DYND_OK;
  dynd_error_set(DYND_ERR_BROADCAST, "thread error");
  *ok = *ok && dynd_error_code() == DYND_ERR_BROADCAST &&
        strcmp(dynd_error_message(), "thread error") == 0;
  return NULL;
}

static void test_error_slot_is_thread_local(void) {
  dynd_error_set(DYND_ERR_PARSE, "main error");
  int ok = 0;
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, error_slot_thread, &ok) == 0);
  REQUIRE(pthread_join(t, NULL) == 0);
  CHECK(ok);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_PARSE);
  CHECK_EQ_STR(dynd_error_message(), "main error");
  dynd_error_clear();
}

/* ----------------------------------------------------------------- types */

static void test_builtin_ids(void) {
  static const struct { const char *name; uintptr_t id; size_t size, align; } builtins[] = {
      {"bool", 1, 1, 1},       {"int8", 2, 1, 1},
      {"int16", 3, 2, 2},      {"int32", 4, 4, 4},
      {"int64", 5, 8, 8},      {"int128", 6, 16, 16},
      {"uint8", 7, 1, 1},      {"uint16", 8, 2, 2},
      {"uint32", 9, 4, 4},     {"uint64", 10, 8, 8},
      {"uint128", 11, 16, 16}, {"float16", 12, 2, 2},
      {"float32", 13, 4, 4},   {"float64", 14, 8, 8},
      {"complex[float32]", 16, 8, 4}, {"complex[float64]", 17, 16, 8},
      {"void", 18, 0, 1},      {"bfloat16", 19, 2, 2},
  };
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
    dynd_type tp = dynd_type_from_datashape(builtins[i].name);
    CHECK_EQ_INT((uintptr_t)tp, builtins[i].id);
    CHECK_EQ_INT(dynd_type_data_size(TP(builtins[i].id)), builtins[i].size);
    CHECK_EQ_INT(dynd_type_data_alignment(TP(builtins[i].id)), builtins[i].align);
    CHECK_EQ_INT(dynd_type_arrmeta_size(TP(builtins[i].id)), 0);
    char *ds = dynd_type_to_datashape(TP(builtins[i].id));
    CHECK_EQ_STR(ds, builtins[i].name);
    dynd_string_free(ds);
    /* Reference counting a builtin does nothing, and is allowed. */
    dynd_type_incref(tp);
    dynd_type_decref(tp);
    dynd_type_decref(tp);
  }
  /* 0 (uninitialized), 15 (float128) and 20..63 are not types. */
  static const uintptr_t invalid[] = {0, 15, 20, 40, 63};
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
    dynd_error_clear();
    CHECK_EQ_INT(dynd_type_data_size(TP(invalid[i])), 0);
    CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
    dynd_error_clear();
    CHECK(dynd_type_to_datashape(TP(invalid[i])) == NULL);
    CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
    dynd_error_clear();
    CHECK(dynd_array_empty(TP(invalid[i])) == NULL);
    CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  }
  dynd_type_data_size(TP(15));
  CHECK_CONTAINS(dynd_error_message(), "float128");
  dynd_error_clear();
}

static void test_datashape_round_trip(void) {
  static const char *shapes[] = {
      "3 * var * {x: int32, name: string}",
      "var * int32",
      "?int16",
      "fixed_string[10, 'utf32']",
      "pointer[int64]",
      "(int8, float32)",
      "2 * 3 * complex[float64]",
      "bytes",
      "string",
      "(N * T, N * T) -> N * T",
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    dynd_type tp = parse_type(shapes[i]);
    if (tp == NULL) continue;
    CHECK((uintptr_t)tp >= DYND_BUILTIN_TYPE_ID_LIMIT);
    char *ds = dynd_type_to_datashape(tp);
    CHECK_EQ_STR(ds, shapes[i]);
    /* The printed text parses to the same text again. */
    dynd_type again = parse_type(ds);
    char *ds2 = dynd_type_to_datashape(again);
    CHECK_EQ_STR(ds2, ds);
    dynd_string_free(ds2);
    dynd_string_free(ds);
    dynd_type_decref(again);
    /* A second reference keeps the type alive after the first goes. */
    dynd_type_incref(tp);
    dynd_type_decref(tp);
    CHECK(dynd_type_data_alignment(tp) >= 1);
    dynd_type_decref(tp);
  }
}

static void test_type_sizes(void) {
  /* DESIGN section 4. */
  static const struct { const char *ds; size_t size, align, arrmeta; } cases[] = {
      {"int32", 4, 4, 0},
      {"5 * int16", 10, 2, 16},
      {"2 * 3 * float64", 48, 8, 32},
      {"var * int32", 16, 8, 24},
      {"string", 16, 8, 8},
      {"bytes", 16, 8, 8},
      {"fixed_string[10, 'utf32']", 40, 4, 0},
      {"pointer[int32]", 8, 8, 16},
      {"{a: int8, b: float64}", 16, 8, 0},
      {"(int8, string)", 24, 8, 8},
      {"?int16", 2, 2, 0},
      {"3 * var * {x: int32, name: string}", 48, 8, 48},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dynd_type tp = parse_type(cases[i].ds);
    if (tp == NULL) continue;
    CHECK_EQ_INT(dynd_type_data_size(tp), cases[i].size);
    CHECK_EQ_INT(dynd_type_data_alignment(tp), cases[i].align);
    CHECK_EQ_INT(dynd_type_arrmeta_size(tp), cases[i].arrmeta);
    dynd_type_decref(tp);
  }
}

static void test_bad_datashape(void) {
  EXPECT_NULL_WITH(dynd_type_from_datashape("3 * * int32"), DYND_ERR_PARSE);
  CHECK_CONTAINS(dynd_error_message(), "line 1, column 5");
  EXPECT_NULL_WITH(dynd_type_from_datashape("{x: int32"), DYND_ERR_PARSE);
  EXPECT_NULL_WITH(dynd_type_from_datashape("\xff"), DYND_ERR_PARSE);
  CHECK_CONTAINS(dynd_error_message(), "utf-8");
  dynd_error_clear();
}

/* ---------------------------------------------------------------- arrays */

static void test_arrays_from_json(void) {
  static const struct { const char *ds, *json, *expected; } cases[] = {
      {"int32", "-7", "-7"},
      {"2 * var * int32", "[[1, 2], [3]]", "[[1,2],[3]]"},
      {"3 * var * {x: int32, name: string}",
       "[[{\"x\":1,\"name\":\"a\"}],[],[{\"x\": 2, \"name\": \"b\"},{\"x\":3,\"name\":\"c\"}]]",
       "[[{\"x\":1,\"name\":\"a\"}],[],[{\"x\":2,\"name\":\"b\"},{\"x\":3,\"name\":\"c\"}]]"},
      {"2 * 3 * float64", "[[1,2.5,3],[NaN,Infinity,-0.0]]", "[[1.0,2.5,3.0],[NaN,Infinity,-0.0]]"},
      {"var * ?int32", "[1, null]", "[1,null]"},
      {"complex[float64]", "[1, 2]", "[1.0,2.0]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dynd_type tp = parse_type(cases[i].ds);
    if (tp == NULL) continue;
    dynd_array a = parse_json(tp, cases[i].json);
    if (a != NULL) {
      check_json(a, cases[i].expected);
      /* The array's type is the very handle it was made from (borrowed). */
      CHECK(dynd_array_type(a) == tp);
      dynd_array_decref(a);
    }
    dynd_type_decref(tp);
  }

  /* Data and arrmeta by the DESIGN section 4 layouts. */
  dynd_type tp = parse_type("3 * int32");
  dynd_array a = parse_json(tp, "[10, 20, 30]");
  dynd_type_decref(tp); /* the array keeps its own reference */
  REQUIRE(a != NULL);
  const fixed_dim_meta *meta = (const fixed_dim_meta *)dynd_array_arrmeta(a);
  CHECK_EQ_INT(meta->dim_size, 3);
  CHECK_EQ_INT(meta->stride, 4);
  int32_t *data = (int32_t *)dynd_array_data(a);
  CHECK_EQ_INT(data[0], 10);
  CHECK_EQ_INT(data[2], 30);
  data[1] = -5;
  check_json(a, "[10,-5,30]");
  char *ds = dynd_type_to_datashape(dynd_array_type(a));
  CHECK_EQ_STR(ds, "3 * int32");
  dynd_string_free(ds);
  dynd_array_decref(a);

  /* len, not a NUL terminator, ends the JSON. */
  dynd_array b = dynd_array_from_json(T_INT32, "123456", 3);
  REQUIRE(b != NULL);
  check_json(b, "123");
  dynd_array_decref(b);

  /* dynd_array_empty: zero-filled. */
  tp = parse_type("2 * var * string");
  dynd_array e = dynd_array_empty(tp);
  REQUIRE(e != NULL);
  check_json(e, "[[],[]]");
  dynd_array_decref(e);
  dynd_type_decref(tp);
}

static void test_json_errors(void) {
  static const struct { dynd_type tp; const char *json; int code; const char *in_message; } cases[] = {
      {T_INT8, "300", DYND_ERR_OVERFLOW, "out of range for int8"},
      {T_INT32, "1.5", DYND_ERR_FRACTIONAL, "1.5"},
      {T_INT32, "[1", DYND_ERR_PARSE, "line 1"},
      {T_INT32, "\"x\"", DYND_ERR_PARSE, "line 1"},
      {T_BOOL, "tru", DYND_ERR_PARSE, "line 1"},
      {T_INT32, "\xff", DYND_ERR_PARSE, "utf-8"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dynd_error_clear();
    dynd_array a = dynd_array_from_json(cases[i].tp, cases[i].json, strlen(cases[i].json));
    CHECK(a == NULL);
    CHECK_EQ_INT(dynd_error_code(), cases[i].code);
    CHECK_CONTAINS(dynd_error_message(), cases[i].in_message);
    dynd_array_decref(a); /* NULL: a no-op that keeps the error */
    CHECK_EQ_INT(dynd_error_code(), cases[i].code);
  }
  dynd_type tp = parse_type("3 * int8");
  dynd_error_clear();
  CHECK(dynd_array_from_json(tp, "[1,2,\"x\"]", 9) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_PARSE);
  CHECK_CONTAINS(dynd_error_message(), "[2]"); /* the element path */
  CHECK(dynd_array_from_json(tp, "[1,2]", 5) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_PARSE);
  dynd_type_decref(tp);

  /* A symbolic type has no layout: no array of it. */
  tp = parse_type("N * int32");
  dynd_error_clear();
  CHECK(dynd_array_empty(tp) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  dynd_type_decref(tp);
  dynd_error_clear();
}

/* Assigns `json` (of type src) into a new dst array under `mode`; returns
 * the status, and the result in *out (or NULL). */
static int assign_one(dynd_type dst_tp, dynd_type src_tp, const char *json, int mode,
                      dynd_array *out) {
  dynd_array src = parse_json(src_tp, json);
  dynd_array dst = dynd_array_empty(dst_tp);
  int status = -2;
  if (src != NULL && dst != NULL) status = dynd_array_assign(dst, src, mode);
  dynd_array_decref(src);
  *out = dst;
  return status;
}

/* Assigning `json` (of type src_tp) into a new dst_tp array under `mode`
 * fails with `code`; a failure names the value and the mode. */
static void check_assign_fails(dynd_type dst_tp, dynd_type src_tp, const char *json, int mode,
                               int code) {
  dynd_array r;
  int status = assign_one(dst_tp, src_tp, json, mode, &r);
  int got = dynd_error_code();
  if (status != -1 || got != code)
    MT_FAIL("assigning %s under mode %d: status %d, code %d (expected -1, code %d)", json, mode,
            status, got, code);
  dynd_array_decref(r);
}

static void test_assign_error_modes(void) {
  dynd_array r;

  /* int8 <- 128: overflow in every checked mode, wraps in nocheck. */
  static const int checked[] = {DYND_ASSIGN_OVERFLOW, DYND_ASSIGN_FRACTIONAL,
                                DYND_ASSIGN_INEXACT, DYND_ASSIGN_DEFAULT};
  for (size_t i = 0; i < 4; i++) {
    dynd_error_clear();
    CHECK_EQ_INT(assign_one(T_INT8, T_INT64, "128", checked[i], &r), -1);
    CHECK_EQ_INT(dynd_error_code(), DYND_ERR_OVERFLOW);
    CHECK_CONTAINS(dynd_error_message(), "128");
    dynd_array_decref(r);
  }
  CHECK_EQ_INT(assign_one(T_INT8, T_INT64, "128", DYND_ASSIGN_NOCHECK, &r), 0);
  CHECK_EQ_INT(*(int8_t *)dynd_array_data(r), -128);
  dynd_array_decref(r);

  /* int8 <- 1.25: fractional in default and fractional, 1 in overflow. */
  dynd_error_clear();
  check_assign_fails(T_INT8, T_FLOAT64, "1.25", DYND_ASSIGN_DEFAULT, DYND_ERR_FRACTIONAL);
  check_assign_fails(T_INT8, T_FLOAT64, "1.25", DYND_ASSIGN_FRACTIONAL, DYND_ERR_FRACTIONAL);
  CHECK_EQ_INT(assign_one(T_INT8, T_FLOAT64, "1.25", DYND_ASSIGN_OVERFLOW, &r), 0);
  check_json(r, "1");
  dynd_array_decref(r);

  /* uint16 <- -1: 65535 in nocheck, overflow when checked. */
  CHECK_EQ_INT(assign_one(T_UINT16, T_INT32, "-1", DYND_ASSIGN_NOCHECK, &r), 0);
  CHECK_EQ_INT(*(uint16_t *)dynd_array_data(r), 65535);
  dynd_array_decref(r);
  check_assign_fails(T_UINT16, T_INT32, "-1", DYND_ASSIGN_OVERFLOW, DYND_ERR_OVERFLOW);

  /* float32 <- 33554433 (2^25 + 1): inexact only in inexact mode. */
  check_assign_fails(T_FLOAT32, T_INT64, "33554433", DYND_ASSIGN_INEXACT, DYND_ERR_INEXACT);
  check_assign_fails(T_FLOAT32, T_FLOAT64, "33554433", DYND_ASSIGN_INEXACT, DYND_ERR_INEXACT);
  CHECK_EQ_INT(assign_one(T_FLOAT32, T_INT64, "33554433", DYND_ASSIGN_DEFAULT, &r), 0);
  CHECK(*(float *)dynd_array_data(r) == 33554432.0f);
  dynd_array_decref(r);

  /* NaN to an integer is an overflow in every checked mode. */
  check_assign_fails(T_INT32, T_FLOAT64, "NaN", DYND_ASSIGN_OVERFLOW, DYND_ERR_OVERFLOW);

  /* Dims broadcast; a bad mode is an invalid argument. */
  dynd_type dst_tp = parse_type("2 * 3 * int32");
  dynd_type src_tp = parse_type("2 * var * float64");
  CHECK_EQ_INT(assign_one(dst_tp, src_tp, "[[1,2,3],[4]]", DYND_ASSIGN_DEFAULT, &r), 0);
  check_json(r, "[[1,2,3],[4,4,4]]");
  dynd_array src = parse_json(src_tp, "[[1,2],[4]]");
  CHECK_EQ_INT(dynd_array_assign(r, src, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_BROADCAST);
  CHECK_EQ_INT(dynd_array_assign(r, src, 5), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "error mode");
  dynd_array_decref(src);
  dynd_array_decref(r);
  /* Types that cannot be assigned. */
  dynd_type struct_tp = parse_type("{a: int32}");
  check_assign_fails(struct_tp, T_INT32, "1", DYND_ASSIGN_DEFAULT, DYND_ERR_TYPE);
  dynd_type_decref(struct_tp);
  dynd_type_decref(dst_tp);
  dynd_type_decref(src_tp);
  dynd_error_clear();
}

/* --------------------------------------------------------- memory blocks */

static void test_array_is_its_memory_block(void) {
  dynd_array a = parse_json(T_INT64, "5");
  REQUIRE(a != NULL);
  dynd_memory_block *mb = (dynd_memory_block *)a;
  CHECK_EQ_INT(mb->kind, 0);
  CHECK_EQ_INT(mb->use_count, 1);
  dynd_memory_block_incref(mb);
  CHECK_EQ_INT(mb->use_count, 2);
  dynd_array_incref(a);
  CHECK_EQ_INT(mb->use_count, 3);
  dynd_array_decref(a);
  dynd_memory_block_decref(mb);
  CHECK_EQ_INT(mb->use_count, 1);

  /* The data block: borrowed, kept alive past the array by a reference. */
  dynd_memory_block *data_ref = dynd_array_data_reference(a);
  REQUIRE(data_ref != NULL);
  CHECK_EQ_INT(data_ref->kind, 2); /* fixed-size POD */
  dynd_memory_block_incref(data_ref);
  int64_t *data = (int64_t *)dynd_array_data(a);
  dynd_array_decref(a);
  CHECK_EQ_INT(*data, 5); /* still alive: we hold the data block */
  /* Not an allocator block; not an array. */
  dynd_error_clear();
  CHECK(dynd_memory_block_pod_allocator_api(data_ref) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  dynd_error_clear();
  CHECK(dynd_array_to_json((dynd_array)data_ref) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "not an array");
  dynd_memory_block_decref(data_ref);
  dynd_error_clear();
}

/* C fills a `var * int32` array by hand: allocate, resize, finalize, then
 * write {begin, size}; dynd reads it back. */
static void test_fill_var_dim_by_hand(void) {
  dynd_type tp = parse_type("var * int32");
  dynd_array a = dynd_array_empty(tp);
  dynd_type_decref(tp);
  REQUIRE(a != NULL);
  check_json(a, "[]");

  const var_dim_meta *meta = (const var_dim_meta *)dynd_array_arrmeta(a);
  CHECK_EQ_INT(meta->stride, 4);
  CHECK_EQ_INT(meta->offset, 0);
  REQUIRE(meta->blockref != NULL);
  CHECK_EQ_INT(meta->blockref->kind, 3); /* POD allocator */
  const dynd_pod_allocator_api *api = dynd_memory_block_pod_allocator_api(meta->blockref);
  REQUIRE(api != NULL);

  char *begin = NULL, *end = NULL;
  REQUIRE(api->allocate(meta->blockref, 2 * sizeof(int32_t), sizeof(int32_t), &begin, &end) == 0);
  CHECK(end - begin == 2 * (intptr_t)sizeof(int32_t));
  int32_t *v = (int32_t *)begin;
  CHECK(v[0] == 0 && v[1] == 0); /* zero-filled */
  v[0] = 1;
  v[1] = 2;
  /* Grow past anything the first chunk could hold: the data moves, kept. */
  REQUIRE(api->resize(meta->blockref, 1000 * sizeof(int32_t), &begin, &end) == 0);
  v = (int32_t *)begin;
  CHECK(v[0] == 1 && v[1] == 2 && v[999] == 0);
  for (int i = 2; i < 5; i++) v[i] = i + 1;
  /* Trim to the size needed. */
  REQUIRE(api->resize(meta->blockref, 5 * sizeof(int32_t), &begin, &end) == 0);
  CHECK(end - begin == 5 * (intptr_t)sizeof(int32_t));
  api->finalize(meta->blockref);

  var_dim_data *d = (var_dim_data *)dynd_array_data(a);
  d->begin = begin;
  d->size = 5;
  check_json(a, "[1,2,3,4,5]");

  /* Errors through the table: after finalize, and bad arguments. */
  dynd_error_clear();
  CHECK_EQ_INT(api->allocate(meta->blockref, 4, 4, &begin, &end), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "finalized");
  CHECK_EQ_INT(api->allocate(meta->blockref, -1, 4, &begin, &end), -1);
  CHECK_EQ_INT(api->allocate(NULL, 4, 4, &begin, &end), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  dynd_array_decref(a);
  dynd_error_clear();
}

/* ---------------------------------------------------------- ckernels */

static void test_builder(void) {
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  CHECK(ckb.data == ckb.static_data);
  CHECK_EQ_INT(ckb.capacity, 128);
  for (int i = 0; i < 16; i++) CHECK_EQ_INT(ckb.static_data[i], 0);

  /* Within the inline buffer: nothing moves. */
  REQUIRE(dynd_ckernel_builder_ensure_capacity_leaf(&ckb, 100) == 0);
  CHECK(ckb.data == ckb.static_data);

  /* Bytes past the root prefix survive growth; new memory is zero. */
  char *p = (char *)ckb.data;
  for (int i = 16; i < 128; i++) p[i] = (char)i;
  REQUIRE(dynd_ckernel_builder_ensure_capacity_leaf(&ckb, 200) == 0);
  CHECK(ckb.data != ckb.static_data);
  CHECK(ckb.capacity >= 200);
  CHECK_EQ_INT(ckb.capacity % (intptr_t)sizeof(void *), 0);
  CHECK_EQ_INT((uintptr_t)ckb.data % sizeof(void *), 0);
  p = (char *)ckb.data;
  int kept = 1, zero = 1;
  for (int i = 16; i < 128; i++) kept = kept && p[i] == (char)i;
  for (intptr_t i = 128; i < ckb.capacity; i++) zero = zero && p[i] == 0;
  CHECK(kept);
  CHECK(zero);

  /* ensure_capacity leaves room for one more prefix. */
  intptr_t want = ckb.capacity + 8;
  REQUIRE(dynd_ckernel_builder_ensure_capacity(&ckb, want) == 0);
  CHECK(ckb.capacity >= want + (intptr_t)sizeof(dynd_ckernel_prefix));
  p = (char *)ckb.data;
  zero = 1;
  for (intptr_t i = 128; i < ckb.capacity; i++) zero = zero && p[i] == 0;
  CHECK(zero);

  /* Bad requests. */
  dynd_error_clear();
  CHECK_EQ_INT(dynd_ckernel_builder_ensure_capacity_leaf(&ckb, -1), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_ckernel_builder_ensure_capacity(&ckb, INTPTR_MAX), -1);
  CHECK(dynd_error_code() == DYND_ERR_INVALID_ARGUMENT || dynd_error_code() == DYND_ERR_ALLOC);

  /* Reset: back to inline, 128 bytes, all zero. */
  dynd_ckernel_builder_reset(&ckb);
  CHECK(ckb.data == ckb.static_data);
  CHECK_EQ_INT(ckb.capacity, 128);
  for (int i = 0; i < 16; i++) CHECK_EQ_INT(ckb.static_data[i], 0);
  dynd_ckernel_builder_destruct(&ckb);

  /* A builder on the heap, constructed again after destruct. */
  dynd_ckernel_builder *heap = malloc(sizeof *heap);
  REQUIRE(heap != NULL);
  for (int round = 0; round < 2; round++) {
    dynd_ckernel_builder_construct(heap);
    CHECK(heap->data == heap->static_data);
    CHECK(dynd_ckernel_builder_ensure_capacity_leaf(heap, 4096) == 0);
    dynd_ckernel_builder_destruct(heap);
  }
  free(heap);
  dynd_error_clear();
}

static void test_assignment_kernel_single(void) {
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  intptr_t end = dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, T_FLOAT64, NULL,
                                             DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT);
  REQUIRE(end > 0);
  CHECK_EQ_INT(end % (intptr_t)sizeof(void *), 0);
  dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
  REQUIRE(k->function != NULL);
  dynd_expr_single_t f = (dynd_expr_single_t)k->function;

  double x = 3.0;
  int32_t y = 0;
  const char *src[1] = {(const char *)&x};
  CHECK_EQ_INT(f((char *)&y, src, k), 0);
  CHECK_EQ_INT(y, 3);
  /* The slot is taken now, and offsets must be pointer-aligned. */
  dynd_error_clear();
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, T_FLOAT64, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "already built");
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, end + 4, T_INT32, NULL, T_FLOAT64, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  /* A value the mode rejects: -1, the error in this thread's slot. */
  x = 3.5;
  dynd_error_clear();
  CHECK_EQ_INT(f((char *)&y, src, k), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_FRACTIONAL);
  CHECK_EQ_INT(y, 3);
  dynd_ckernel_builder_destruct(&ckb);

  /* Over dims, with arrmeta from arrays. */
  dynd_type dst_tp = parse_type("3 * int16");
  dynd_type src_tp = parse_type("3 * float32");
  dynd_array dst = dynd_array_empty(dst_tp);
  dynd_array srca = parse_json(src_tp, "[1, -2, 300]");
  REQUIRE(dst != NULL && srca != NULL);
  dynd_ckernel_builder_construct(&ckb);
  end = dynd_make_assignment_kernel(&ckb, 0, dst_tp, dynd_array_arrmeta(dst), src_tp,
                                    dynd_array_arrmeta(srca), DYND_KERNEL_REQUEST_SINGLE,
                                    DYND_ASSIGN_OVERFLOW);
  REQUIRE(end > 0);
  k = (dynd_ckernel_prefix *)ckb.data;
  f = (dynd_expr_single_t)k->function;
  const char *src2[1] = {dynd_array_data(srca)};
  CHECK_EQ_INT(f(dynd_array_data(dst), src2, k), 0);
  check_json(dst, "[1,-2,300]");
  dynd_ckernel_builder_destruct(&ckb);

  /* Failures to build: arrmeta missing, impossible pairs, bad arguments. */
  dynd_ckernel_builder_construct(&ckb);
  dynd_error_clear();
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, dst_tp, NULL, src_tp, dynd_array_arrmeta(srca),
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "dst_arrmeta");
  dynd_type struct_tp = parse_type("{a: int32}");
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, struct_tp, NULL, T_INT32, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, T_INT32, NULL, 7,
                                           DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, T_INT32, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, 9), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, -8, T_INT32, NULL, T_INT32, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_make_assignment_kernel(&ckb, 0, TP(15), NULL, T_INT32, NULL,
                                           DYND_KERNEL_REQUEST_SINGLE, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  dynd_ckernel_builder_destruct(&ckb);

  dynd_type_decref(struct_tp);
  dynd_array_decref(dst);
  dynd_array_decref(srca);
  dynd_type_decref(dst_tp);
  dynd_type_decref(src_tp);
  dynd_error_clear();
}

static void test_assignment_kernel_strided(void) {
  enum { N = 1000 };
  double *src = malloc(2 * N * sizeof(double));
  int32_t *dst = malloc(2 * N * sizeof(int32_t));
  REQUIRE(src != NULL && dst != NULL);
  for (int i = 0; i < 2 * N; i++) src[i] = (double)(i - N);

  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  REQUIRE(dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, T_FLOAT64, NULL,
                                      DYND_KERNEL_REQUEST_STRIDED, DYND_ASSIGN_DEFAULT) > 0);
  dynd_ckernel_prefix *k = (dynd_ckernel_prefix *)ckb.data;
  dynd_expr_strided_t f = (dynd_expr_strided_t)k->function;

  /* Contiguous. */
  const char *srcs[1] = {(const char *)src};
  intptr_t stride[1] = {sizeof(double)};
  CHECK_EQ_INT(f((char *)dst, sizeof(int32_t), srcs, stride, N, k), 0);
  int ok = 1;
  for (int i = 0; i < N; i++) ok = ok && dst[i] == i - N;
  CHECK(ok);

  /* Every other source element, into every other destination element. */
  memset(dst, 0, 2 * N * sizeof(int32_t));
  stride[0] = 2 * sizeof(double);
  CHECK_EQ_INT(f((char *)dst, 2 * sizeof(int32_t), srcs, stride, N, k), 0);
  ok = 1;
  for (int i = 0; i < N; i++) ok = ok && dst[2 * i] == 2 * i - N && dst[2 * i + 1] == 0;
  CHECK(ok);

  /* A broadcast source (stride 0), and count 0. */
  stride[0] = 0;
  CHECK_EQ_INT(f((char *)dst, sizeof(int32_t), srcs, stride, N, k), 0);
  CHECK(dst[0] == -N && dst[N - 1] == -N);
  CHECK_EQ_INT(f((char *)dst, sizeof(int32_t), srcs, stride, 0, k), 0);

  /* An error inside a run. */
  src[500] = 0.5;
  stride[0] = sizeof(double);
  dynd_error_clear();
  CHECK_EQ_INT(f((char *)dst, sizeof(int32_t), srcs, stride, N, k), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_FRACTIONAL);
  dynd_ckernel_builder_destruct(&ckb);
  free(src);
  free(dst);
  dynd_error_clear();
}

/* One strided kernel called from 4 threads at once, on disjoint data. */
enum { THREADS = 4, PER_THREAD = 100000, ROUNDS = 20 };

static void test_strided_kernel_from_four_threads(void) {
  float *src = malloc(THREADS * PER_THREAD * sizeof(float));
  double *dst = malloc(THREADS * PER_THREAD * sizeof(double));
  REQUIRE(src != NULL && dst != NULL);
  for (int i = 0; i < THREADS * PER_THREAD; i++) {
    src[i] = (float)i * 0.5f;
    dst[i] = -1.0;
  }
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  REQUIRE(dynd_make_assignment_kernel(&ckb, 0, T_FLOAT64, NULL, T_FLOAT32, NULL,
                                      DYND_KERNEL_REQUEST_STRIDED, DYND_ASSIGN_INEXACT) > 0);
  run_strided_in_threads((dynd_ckernel_prefix *)ckb.data, THREADS, (char *)dst, sizeof(double),
                         (const char *)src, sizeof(float), PER_THREAD, 4096, ROUNDS);
  int ok = 1;
  for (int i = 0; i < THREADS * PER_THREAD; i++) ok = ok && dst[i] == (double)i * 0.5;
  CHECK(ok);
  dynd_ckernel_builder_destruct(&ckb);
  free(src);
  free(dst);
}

/* -------------------------------------------------------- NULL arguments */

#define EXPECT_NOOP(call)                                                     \
  do {                                                                        \
    dynd_error_set(DYND_ERR_INDEX, "kept");                                   \
    call;                                                                     \
    if (dynd_error_code() != DYND_ERR_INDEX)                                  \
      MT_FAIL("%s touched the error slot", #call);                            \
  } while (0)

static void test_null_arguments(void) {
  dynd_array a = parse_json(T_INT32, "1");
  REQUIRE(a != NULL);
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);

  EXPECT_INVALID(CHECK(dynd_type_from_datashape(NULL) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "dynd_type_from_datashape");
  CHECK_CONTAINS(dynd_error_message(), "datashape");
  EXPECT_INVALID(CHECK(dynd_type_to_datashape(NULL) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'tp' is NULL");
  EXPECT_INVALID(dynd_type_incref(NULL));
  EXPECT_INVALID(CHECK(dynd_type_data_size(NULL) == 0));
  EXPECT_INVALID(CHECK(dynd_type_data_alignment(NULL) == 0));
  EXPECT_INVALID(CHECK(dynd_type_arrmeta_size(NULL) == 0));

  EXPECT_INVALID(dynd_memory_block_incref(NULL));
  EXPECT_INVALID(CHECK(dynd_memory_block_pod_allocator_api(NULL) == NULL));

  EXPECT_INVALID(CHECK(dynd_array_empty(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_from_json(NULL, "1", 1) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_from_json(T_INT32, NULL, 0) == NULL));
  CHECK_CONTAINS(dynd_error_message(), "'json' is NULL");
  EXPECT_INVALID(CHECK(dynd_array_to_json(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_type(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_data(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_arrmeta(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_data_reference(NULL) == NULL));
  EXPECT_INVALID(CHECK(dynd_array_assign(NULL, a, DYND_ASSIGN_DEFAULT) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'dst' is NULL");
  EXPECT_INVALID(CHECK(dynd_array_assign(a, NULL, DYND_ASSIGN_DEFAULT) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'src' is NULL");
  EXPECT_INVALID(dynd_array_incref(NULL));

  EXPECT_INVALID(dynd_ckernel_builder_construct(NULL));
  EXPECT_INVALID(dynd_ckernel_builder_reset(NULL));
  EXPECT_INVALID(CHECK(dynd_ckernel_builder_ensure_capacity_leaf(NULL, 8) == -1));
  EXPECT_INVALID(CHECK(dynd_ckernel_builder_ensure_capacity(NULL, 8) == -1));
  EXPECT_INVALID(CHECK(dynd_make_assignment_kernel(NULL, 0, T_INT32, NULL, T_INT32, NULL,
                                                   DYND_KERNEL_REQUEST_SINGLE,
                                                   DYND_ASSIGN_DEFAULT) == -1));
  EXPECT_INVALID(CHECK(dynd_make_assignment_kernel(&ckb, 0, NULL, NULL, T_INT32, NULL,
                                                   DYND_KERNEL_REQUEST_SINGLE,
                                                   DYND_ASSIGN_DEFAULT) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'dst_tp' is NULL");
  EXPECT_INVALID(CHECK(dynd_make_assignment_kernel(&ckb, 0, T_INT32, NULL, NULL, NULL,
                                                   DYND_KERNEL_REQUEST_SINGLE,
                                                   DYND_ASSIGN_DEFAULT) == -1));
  CHECK_CONTAINS(dynd_error_message(), "'src_tp' is NULL");

  /* Release functions: NULL is a no-op that keeps the slot. */
  EXPECT_NOOP(dynd_type_decref(NULL));
  EXPECT_NOOP(dynd_memory_block_decref(NULL));
  EXPECT_NOOP(dynd_array_decref(NULL));
  EXPECT_NOOP(dynd_string_free(NULL));
  EXPECT_NOOP(dynd_ckernel_builder_destruct(NULL));

  /* The error functions take no pointers to check, except the message. */
  dynd_error_set(DYND_ERR_TYPE, NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);

  dynd_ckernel_builder_destruct(&ckb);
  dynd_array_decref(a);
  dynd_error_clear();
}

int main(void) {
  RUN(test_error_slot);
  RUN(test_error_slot_is_thread_local);
  RUN(test_builtin_ids);
  RUN(test_datashape_round_trip);
  RUN(test_type_sizes);
  RUN(test_bad_datashape);
  RUN(test_arrays_from_json);
  RUN(test_json_errors);
  RUN(test_assign_error_modes);
  RUN(test_array_is_its_memory_block);
  RUN(test_fill_var_dim_by_hand);
  RUN(test_builder);
  RUN(test_assignment_kernel_single);
  RUN(test_assignment_kernel_strided);
  RUN(test_strided_kernel_from_four_threads);
  RUN(test_null_arguments);
  return minitest_main_result();
}
