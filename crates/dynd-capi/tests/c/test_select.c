/*
 * test_select.c -- C tests of the selection callables through include/dynd.h
 * (DESIGN section 8): filter and take looked up by name and called on
 * ragged arrays built from JSON; their result types and values; and the
 * errors of bad calls (a mask row of the wrong length, an index out of
 * range), which must come back as an error code and a message naming the
 * row, never a crash.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 */
#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <stdint.h>
#include <string.h>

/* One call f(x, arg) of a selection callable looked up by name, its
 * arguments built from datashape and JSON. With code DYND_OK it must return
 * an array of type want[0] holding want[1]; otherwise no result, that error
 * code, and a message containing want[0] and (when not NULL) want[1]. */
typedef struct {
  const char *callable;
  const char *x[2], *arg[2];
  int code;
  const char *want[2];
} select_case;

static const select_case cases[] = {
    /* filter: a ragged array by a ragged mask: the innermost dim stays var. */
    {"filter", {"3 * var * int32", "[[1, 2, 3], [], [4, 5]]"}, {"3 * var * bool", "[[true, false, true], [], [false, true]]"}, DYND_OK, {"3 * var * int32", "[[1,3],[],[5]]"}},
    /* A fixed array by a fixed mask: the filtered dim becomes var. */
    {"filter", {"4 * float64", "[0.5, 1.5, 2.5, 3.5]"}, {"4 * bool", "[false, true, true, false]"}, DYND_OK, {"var * float64", "[1.5,2.5]"}},
    /* Row 2 of the mask is one element short: a broadcast error naming the
     * row, and no result. */
    {"filter", {"3 * var * int32", "[[1, 2, 3], [], [4, 5]]"}, {"3 * var * bool", "[[true, false, true], [], [true]]"}, DYND_ERR_BROADCAST, {"row 2", "filter"}},
    /* A mask that is not bool is a type error. */
    {"filter", {"3 * var * int32", "[[1, 2, 3], [], [4, 5]]"}, {"3 * var * int32", "[[1, 0, 1], [], [0, 1]]"}, DYND_ERR_TYPE, {"filter", NULL}},
    /* take: per-row indices into a ragged array; negative ones count from
     * the end of their row. */
    {"take", {"3 * var * int32", "[[10, 20, 30], [], [40, 50]]"}, {"3 * var * int64", "[[2, -3, -1], [], [-1, 0, 1]]"}, DYND_OK, {"3 * var * int32", "[[30,10,30],[],[50,40,50]]"}},
    /* A fixed array by fixed indices, and optional indices giving optional
     * elements. */
    {"take", {"5 * float64", "[0.5, 1.5, 2.5, 3.5, 4.5]"}, {"3 * int32", "[-1, 0, 3]"}, DYND_OK, {"3 * float64", "[4.5,0.5,3.5]"}},
    {"take", {"5 * float64", "[0.5, 1.5, 2.5, 3.5, 4.5]"}, {"3 * ?int64", "[1, null, -2]"}, DYND_OK, {"3 * ?float64", "[1.5,null,3.5]"}},
    /* Index -3 in row 2 (length 2) is out of range: an index error naming
     * the row and the index, and no result. */
    {"take", {"3 * var * int32", "[[10, 20, 30], [], [40, 50]]"}, {"3 * var * int64", "[[0], [], [1, -3]]"}, DYND_ERR_INDEX, {"row 2", "-3"}},
    /* Any index into an empty row is out of range. */
    {"take", {"3 * var * int32", "[[10, 20, 30], [], [40, 50]]"}, {"3 * var * int64", "[[], [0], []]"}, DYND_ERR_INDEX, {"row 1", NULL}},
    /* Float indices are a type error. */
    {"take", {"3 * var * int32", "[[10, 20, 30], [], [40, 50]]"}, {"3 * var * float64", "[[0], [], [1]]"}, DYND_ERR_TYPE, {"take", NULL}},
};

static void test_filter_and_take_by_name(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const select_case *c = &cases[i];
    dynd_callable f = dynd_callable_lookup(c->callable);
    REQUIRE(f != NULL);
    dynd_array x = arr(c->x[0], c->x[1]);
    dynd_array arg = arr(c->arg[0], c->arg[1]);
    if (c->code == DYND_OK) {
      check_call2(f, x, arg, c->want[0], c->want[1]);
    } else {
      check_call2_fails(f, x, arg, c->code, c->want[0]);
      if (c->want[1] != NULL) CHECK_CONTAINS(dynd_error_message(), c->want[1]);
    }
    dynd_array_decref(arg);
    dynd_array_decref(x);
    dynd_callable_decref(f);
  }
  dynd_error_clear();
}

/* The wrong number of arguments. */
static void test_filter_arity(void) {
  dynd_callable filter = dynd_callable_lookup("filter");
  REQUIRE(filter != NULL);
  dynd_array x = arr("3 * var * int32", "[[1, 2, 3], [], [4, 5]]");
  EXPECT_NULL_WITH(dynd_callable_call(filter, 1, &x), DYND_ERR_INVALID_ARGUMENT);
  dynd_array_decref(x);
  dynd_callable_decref(filter);
  dynd_error_clear();
}

int main(void) {
  RUN(test_filter_and_take_by_name);
  RUN(test_filter_arity);
  return minitest_main_result();
}
