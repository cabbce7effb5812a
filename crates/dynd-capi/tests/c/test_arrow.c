/*
 * test_arrow.c -- C tests of the Arrow C Data Interface through
 * include/dynd.h (DESIGN sections 5 and 12): an array exported to Arrow and
 * imported back; a hand-built ArrowArray whose release counts its calls
 * (exactly once, on success and on a failed import); misuse.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 */
#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------- export, then import */

static void test_round_trip(void) {
  const char *cases[][2] = {
      {"3 * float64", "[1.0,2.5,-3.0]"},
      {"3 * ?int32", "[1,null,3]"},
      {"2 * var * ?int16", "[[1,null],[]]"},
      {"2 * {a: int64, s: ?string}", "[{\"a\":1,\"s\":\"x\"},{\"a\":2,\"s\":null}]"},
      {"2 * 3 * uint8", "[[1,2,3],[4,5,6]]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dynd_array a = arr(cases[i][0], cases[i][1]);
    REQUIRE(a != NULL);
    struct ArrowSchema schema;
    struct ArrowArray array;
    REQUIRE(dynd_array_to_arrow(a, &schema, &array) == 0);
    CHECK(schema.release != NULL && array.release != NULL);
    /* the export keeps its own reference: the source may go first */
    dynd_array_decref(a);
    dynd_array b = dynd_array_from_arrow(&schema, &array);
    CHECK(schema.release == NULL && array.release == NULL);
    check_array(b, cases[i][0], cases[i][1]);
    dynd_array_decref(b);
  }
}

static void test_consumer_releases_an_export(void) {
  dynd_array a = arr("2 * var * string", "[[\"a\"],[\"b\",\"c\"]]");
  REQUIRE(a != NULL);
  struct ArrowSchema schema;
  struct ArrowArray array;
  REQUIRE(dynd_array_to_arrow(a, &schema, &array) == 0);
  CHECK_EQ_STR(schema.format, "+l");
  CHECK_EQ_INT(array.length, 2);
  CHECK_EQ_INT(array.n_children, 1);
  const int32_t *offsets = (const int32_t *)array.buffers[1];
  CHECK_EQ_INT(offsets[2], 3);
  schema.release(&schema);
  array.release(&array);
  dynd_array_decref(a);
}

/* ---------------------------------------- a hand-built producer's array */

static int releases;
static double values[4] = {1.0, 2.0, 3.0, 4.0};
static const void *buffers[2];

static void release_array(struct ArrowArray *a) {
  releases++;
  a->release = NULL;
}

static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

static void make_float64(struct ArrowSchema *s, struct ArrowArray *a, const char *format) {
  memset(s, 0, sizeof *s);
  s->format = format;
  s->name = "";
  s->release = release_schema;
  buffers[0] = NULL; /* no validity: no nulls */
  buffers[1] = values;
  memset(a, 0, sizeof *a);
  a->length = 3;
  a->offset = 1;
  a->n_buffers = 2;
  a->buffers = buffers;
  a->release = release_array;
}

static void test_release_runs_once(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  make_float64(&s, &a, "g");
  releases = 0;
  dynd_array b = dynd_array_from_arrow(&s, &a);
  check_array(b, "3 * float64", "[2.0,3.0,4.0]");
  CHECK(a.release == NULL && s.release == NULL);
  CHECK_EQ_INT(releases, 0); /* the dynd array still reads the buffer */
  dynd_array_incref(b);
  dynd_array_decref(b);
  CHECK_EQ_INT(releases, 0);
  dynd_array_decref(b);
  CHECK_EQ_INT(releases, 1);
}

static void test_release_runs_once_on_failure(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  make_float64(&s, &a, "tdD"); /* date32: no dynd form */
  releases = 0;
  EXPECT_NULL_WITH(dynd_array_from_arrow(&s, &a), DYND_ERR_TYPE);
  CHECK_CONTAINS(dynd_error_message(), "\"tdD\"");
  CHECK_EQ_INT(releases, 1);
  CHECK(a.release == NULL && s.release == NULL);

  make_float64(&s, &a, "g");
  a.n_children = 1; /* disagrees with the schema's 0 */
  releases = 0;
  EXPECT_NULL_WITH(dynd_array_from_arrow(&s, &a), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "children");
  CHECK_EQ_INT(releases, 1);
}

static void test_misuse(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  EXPECT_NULL_WITH(dynd_array_from_arrow(NULL, &a), DYND_ERR_INVALID_ARGUMENT);
  EXPECT_NULL_WITH(dynd_array_from_arrow(&s, NULL), DYND_ERR_INVALID_ARGUMENT);
  dynd_array x = arr("2 * int128", "[1, 2]");
  REQUIRE(x != NULL);
  dynd_error_clear();
  CHECK_EQ_INT(dynd_array_to_arrow(x, &s, &a), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  CHECK_CONTAINS(dynd_error_message(), "int128");
  dynd_error_clear();
  CHECK_EQ_INT(dynd_array_to_arrow(x, NULL, &a), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  dynd_array_decref(x);
}

int main(void) {
  RUN(test_round_trip);
  RUN(test_consumer_releases_an_export);
  RUN(test_release_runs_once);
  RUN(test_release_runs_once_on_failure);
  RUN(test_misuse);
  return minitest_main_result();
}
