/*
 * test_sort.c -- C tests of the sorting callables through include/dynd.h
 * (DESIGN section 8): sort, argsort, cumsum and concatenate found by name
 * with dynd_callable_lookup and called on a ragged array, and a bad call
 * reported through the error slot.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11.
 */
#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <string.h>

static void test_sort_callables_by_name(void) {
  dynd_callable sort = dynd_callable_lookup("sort");
  dynd_callable argsort = dynd_callable_lookup("argsort");
  dynd_callable cumsum = dynd_callable_lookup("cumsum");
  dynd_callable concatenate = dynd_callable_lookup("concatenate");
  REQUIRE(sort != NULL && argsort != NULL && cumsum != NULL && concatenate != NULL);

  dynd_array x = arr("3 * var * ?float64", "[[3, null, NaN, 1, 1], [], [2.5, -1]]");
  REQUIRE(x != NULL);
  check_call1(sort, x, "3 * var * ?float64", "[[1.0,1.0,3.0,NaN,null],[],[-1.0,2.5]]");
  check_call1(argsort, x, "3 * var * int64", "[[3,4,0,2,1],[],[1,0]]");
  check_call1(cumsum, x, "3 * var * ?float64", "[[3.0,null,NaN,NaN,NaN],[],[2.5,1.5]]");

  dynd_array y = arr("1 * var * ?float64", "[[7]]");
  REQUIRE(y != NULL);
  dynd_array args[2] = {x, y};
  check_call(concatenate, 2, args, "4 * var * ?float64", "[[3.0,null,NaN,1.0,1.0],[],[2.5,-1.0],[7.0]]");

  /* A scalar has no dim to sort along: a type error, named. */
  dynd_array s = arr("int32", "5");
  REQUIRE(s != NULL);
  check_call_fails(sort, 1, &s, DYND_ERR_TYPE, "sort works along a dim");

  dynd_array_decref(s);
  dynd_array_decref(y);
  dynd_array_decref(x);
  dynd_callable_decref(concatenate);
  dynd_callable_decref(cumsum);
  dynd_callable_decref(argsort);
  dynd_callable_decref(sort);
  dynd_error_clear();
}

int main(void) {
  RUN(test_sort_callables_by_name);
  return minitest_main_result();
}
