/*
 * minitest.h -- a tiny assertion framework for the C tests of dynd.h.
 *
 * CHECK(cond) records a failure (file, line, the condition) and goes on;
 * REQUIRE(cond) also returns from the current test. RUN(test) runs one test
 * function and prints its name; minitest_main_result() is the exit status.
 * Failures are counted atomically, so checks may run on several threads.
 */
#ifndef DYND_MINITEST_H
#define DYND_MINITEST_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int minitest_failures;
static int minitest_tests;

#define MT_FAIL(fmt, ...)                                                     \
  do {                                                                        \
    atomic_fetch_add(&minitest_failures, 1);                                  \
    fprintf(stderr, "%s:%d: FAILED: " fmt "\n", __FILE__, __LINE__,           \
            __VA_ARGS__);                                                     \
  } while (0)

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) MT_FAIL("%s", #cond);                                        \
  } while (0)

#define REQUIRE(cond)                                                         \
  do {                                                                        \
    if (!(cond)) {                                                            \
      MT_FAIL("%s (required; test stopped)", #cond);                          \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                    \
  do {                                                                        \
    long long mt_a = (long long)(a), mt_b = (long long)(b);                   \
    if (mt_a != mt_b) MT_FAIL("%s == %s (%lld != %lld)", #a, #b, mt_a, mt_b); \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                    \
  do {                                                                        \
    const char *mt_a = (a), *mt_b = (b);                                      \
    if (mt_a == NULL || mt_b == NULL || strcmp(mt_a, mt_b) != 0)              \
      MT_FAIL("%s == %s (\"%s\" != \"%s\")", #a, #b,                          \
              mt_a ? mt_a : "(null)", mt_b ? mt_b : "(null)");                \
  } while (0)

#define CHECK_CONTAINS(haystack, needle)                                      \
  do {                                                                        \
    const char *mt_h = (haystack), *mt_n = (needle);                          \
    if (mt_h == NULL || strstr(mt_h, mt_n) == NULL)                           \
      MT_FAIL("%s contains \"%s\" (it is \"%s\")", #haystack, mt_n,           \
              mt_h ? mt_h : "(null)");                                        \
  } while (0)

#define RUN(test)                                                             \
  do {                                                                        \
    int mt_before = atomic_load(&minitest_failures);                          \
    test();                                                                   \
    minitest_tests++;                                                         \
    printf("%s %s\n",                                                         \
           atomic_load(&minitest_failures) == mt_before ? "ok  " : "FAIL",     \
           #test);                                                            \
  } while (0)

static int minitest_main_result(void) {
  int failures = atomic_load(&minitest_failures);
  printf("%d tests, %d failed checks\n", minitest_tests, failures);
  return failures == 0 ? 0 : 1;
}

#endif /* DYND_MINITEST_H */
