/*
 * test_threads.c -- C tests of choosing threads through include/dynd.h
 * (DESIGN section 13): dynd_set_num_threads / dynd_get_num_threads, bad
 * counts refused through the error slot, and large calls giving the same
 * result on one thread and on several.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11.
 */
#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

#include <stdlib.h>
#include <string.h>

static void test_counts_are_set_read_and_checked(void) {
  CHECK_EQ_INT(dynd_set_num_threads(2), 0);
  CHECK_EQ_INT(dynd_get_num_threads(), 2);
  CHECK_EQ_INT(dynd_set_num_threads(1), 0);
  CHECK_EQ_INT(dynd_get_num_threads(), 1);

  dynd_error_clear();
  CHECK_EQ_INT(dynd_set_num_threads(-1), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "-1");
  CHECK_EQ_INT(dynd_set_num_threads(100000), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(dynd_get_num_threads(), 1); /* unchanged by refused counts */

  CHECK_EQ_INT(dynd_set_num_threads(0), 0); /* back to the default */
  CHECK(dynd_get_num_threads() >= 1);
}

/* `n * T` filled by fill(i) through the data pointer. */
static dynd_array filled(const char *ds, size_t n, double (*fill)(size_t)) {
  dynd_type tp = parse_type(ds);
  if (tp == NULL) return NULL;
  dynd_array a = dynd_array_empty(tp);
  dynd_type_decref(tp);
  if (a == NULL) return NULL;
  double *d = (double *)dynd_array_data(a);
  for (size_t i = 0; i < n; i++) d[i] = fill(i);
  return a;
}

static double ramp(size_t i) { return (double)(i % 1000) * 0.25 - 17.0; }
static double wave(size_t i) { return (double)((i * 7919) % 541) - 270.0; }

/* The JSON of f(args) with `threads` threads (the caller frees it). */
static char *call_json(dynd_callable f, size_t nargs, const dynd_array *args, int threads) {
  CHECK_EQ_INT(dynd_set_num_threads(threads), 0);
  dynd_array r = dynd_callable_call(f, nargs, args);
  if (r == NULL) {
    MT_FAIL("call failed on %d threads: %s", threads, dynd_error_message());
    return NULL;
  }
  char *text = dynd_array_to_json(r);
  dynd_array_decref(r);
  return text;
}

static void test_large_calls_agree_on_every_count(void) {
  const size_t n = 300001; /* several tasks, an odd split */
  dynd_array a = filled("300001 * float64", n, ramp);
  dynd_array b = filled("300001 * float64", n, wave);
  REQUIRE(a != NULL && b != NULL);
  const char *names[] = {"multiply", "max", "less"};
  for (size_t k = 0; k < 3; k++) {
    dynd_callable f = dynd_callable_lookup(names[k]);
    REQUIRE(f != NULL);
    dynd_array args[2] = {a, b};
    size_t nargs = strcmp(names[k], "max") == 0 ? 1 : 2;
    char *one = call_json(f, nargs, args, 1);
    for (int threads = 2; threads <= 3; threads++) {
      char *many = call_json(f, nargs, args, threads);
      if (one != NULL && many != NULL && strcmp(one, many) != 0)
        MT_FAIL("%s differs between 1 and %d threads", names[k], threads);
      dynd_string_free(many);
    }
    dynd_string_free(one);
    dynd_callable_decref(f);
  }
  CHECK_EQ_INT(dynd_set_num_threads(0), 0);
  dynd_array_decref(b);
  dynd_array_decref(a);
}

int main(void) {
  RUN(test_counts_are_set_read_and_checked);
  RUN(test_large_calls_agree_on_every_count);
  return minitest_main_result();
}
