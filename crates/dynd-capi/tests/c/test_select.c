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

/* ------------------------------------------------------------------ filter */

static void test_filter_by_name(void) {
  dynd_callable filter = dynd_callable_lookup("filter");
  REQUIRE(filter != NULL);

  /* A ragged array by a ragged mask: the innermost dim stays var. */
  dynd_array x = arr("3 * var * int32", "[[1, 2, 3], [], [4, 5]]");
  dynd_array m = arr("3 * var * bool", "[[true, false, true], [], [false, true]]");
  check_call2(filter, x, m, "3 * var * int32", "[[1,3],[],[5]]");

  /* A fixed array by a fixed mask: the filtered dim becomes var. */
  dynd_array xf = arr("4 * float64", "[0.5, 1.5, 2.5, 3.5]");
  dynd_array mf = arr("4 * bool", "[false, true, true, false]");
  check_call2(filter, xf, mf, "var * float64", "[1.5,2.5]");

  /* Row 2 of the mask is one element short: a broadcast error naming the
   * row, and no result. */
  dynd_array bad = arr("3 * var * bool", "[[true, false, true], [], [true]]");
  check_call2_fails(filter, x, bad, DYND_ERR_BROADCAST, "row 2");
  CHECK_CONTAINS(dynd_error_message(), "filter");

  /* A mask that is not bool is a type error. */
  dynd_array notbool = arr("3 * var * int32", "[[1, 0, 1], [], [0, 1]]");
  check_call2_fails(filter, x, notbool, DYND_ERR_TYPE, "filter");

  /* The wrong number of arguments. */
  EXPECT_NULL_WITH(dynd_callable_call(filter, 1, &x), DYND_ERR_INVALID_ARGUMENT);

  dynd_array_decref(notbool);
  dynd_array_decref(bad);
  dynd_array_decref(mf);
  dynd_array_decref(xf);
  dynd_array_decref(m);
  dynd_array_decref(x);
  dynd_callable_decref(filter);
  dynd_error_clear();
}

/* -------------------------------------------------------------------- take */

static void test_take_by_name(void) {
  dynd_callable take = dynd_callable_lookup("take");
  REQUIRE(take != NULL);

  /* Per-row indices into a ragged array; negative ones count from the end
   * of their row. */
  dynd_array x = arr("3 * var * int32", "[[10, 20, 30], [], [40, 50]]");
  dynd_array idx = arr("3 * var * int64", "[[2, -3, -1], [], [-1, 0, 1]]");
  check_call2(take, x, idx, "3 * var * int32", "[[30,10,30],[],[50,40,50]]");

  /* A fixed array by fixed indices, and optional indices giving optional
   * elements. */
  dynd_array xf = arr("5 * float64", "[0.5, 1.5, 2.5, 3.5, 4.5]");
  dynd_array fi = arr("3 * int32", "[-1, 0, 3]");
  check_call2(take, xf, fi, "3 * float64", "[4.5,0.5,3.5]");
  dynd_array oi = arr("3 * ?int64", "[1, null, -2]");
  check_call2(take, xf, oi, "3 * ?float64", "[1.5,null,3.5]");

  /* Index -3 in row 2 (length 2) is out of range: an index error naming the
   * row and the index, and no result. */
  dynd_array bad = arr("3 * var * int64", "[[0], [], [1, -3]]");
  check_call2_fails(take, x, bad, DYND_ERR_INDEX, "row 2");
  CHECK_CONTAINS(dynd_error_message(), "-3");

  /* Any index into an empty row is out of range. */
  dynd_array into_empty = arr("3 * var * int64", "[[], [0], []]");
  check_call2_fails(take, x, into_empty, DYND_ERR_INDEX, "row 1");

  /* Float indices are a type error. */
  dynd_array fidx = arr("3 * var * float64", "[[0], [], [1]]");
  check_call2_fails(take, x, fidx, DYND_ERR_TYPE, "take");

  dynd_array_decref(fidx);
  dynd_array_decref(into_empty);
  dynd_array_decref(bad);
  dynd_array_decref(oi);
  dynd_array_decref(fi);
  dynd_array_decref(xf);
  dynd_array_decref(idx);
  dynd_array_decref(x);
  dynd_callable_decref(take);
  dynd_error_clear();
}

int main(void) {
  RUN(test_filter_by_name);
  RUN(test_take_by_name);
  return minitest_main_result();
}
