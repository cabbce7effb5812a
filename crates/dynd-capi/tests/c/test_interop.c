/*
 * test_interop.c -- C tests of the interop functions of include/dynd.h
 * (DESIGN section 5, wave 2): dynd_array_from_external over memory the test
 * owns, and DLPack 1.x export and import. Every release callback and
 * deleter here counts its calls: each must run exactly once, after the last
 * array over its data is gone -- or, when a call fails, before it returns.
 *
 * Built and run by crates/dynd-capi/tests/c_tests.rs (cargo test -p
 * dynd-capi) with -Wall -Wextra -Werror -std=c11, then again under valgrind.
 * It is also compiled with -DTEST_DLPACK_FIRST, where a stand-in for
 * dlpack.h comes before dynd.h, which must then skip its own DLPack structs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef TEST_DLPACK_FIRST
/* What dlpack.h declares, under its include guard. */
#define DLPACK_DLPACK_H_
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLVulkan = 7 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLOpaqueHandle = 3U,
               kDLBfloat = 4U, kDLComplex = 5U, kDLBool = 6U,
               kDLFloat8_e3m4 = 7U } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
typedef struct DLManagedTensorVersioned {
  DLPackVersion version; void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags; DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif

#include "dynd.h"
#include "minitest.h"
#include "capi_util.h"

/* ---------------------------------------------------------------- external */

static int releases;

/* The owner: a malloc'd buffer, freed and counted by release_buffer. */
static void release_buffer(void *owner) {
  free(owner);
  releases++;
}

/* A malloc'd buffer of n int32 holding 1, 2, ..., n. */
static int32_t *int_buffer(size_t n) {
  int32_t *buf = malloc(n * sizeof(int32_t));
  for (size_t i = 0; i < n; i++) buf[i] = (int32_t)(i + 1);
  return buf;
}

static void test_external_negative_strides_released_once(void) {
  releases = 0;
  int32_t *buf = int_buffer(6);
  /* 2 x 3, rows read in reverse: start at the last row, step back 12 bytes. */
  intptr_t shape[2] = {2, 3};
  intptr_t strides[2] = {-12, 4};
  dynd_array a = dynd_array_from_external(T_INT32, (char *)(buf + 3), 2, shape, strides,
                                          buf, release_buffer, 1);
  REQUIRE(a != NULL);
  check_array(a, "2 * 3 * int32", "[[4,5,6],[1,2,3]]");
  CHECK(dynd_array_data(a) == (char *)(buf + 3));
  /* Writes land in the caller's buffer. */
  dynd_array src = arr("2 * 3 * int32", "[[40,50,60],[10,20,30]]");
  CHECK_EQ_INT(dynd_array_assign(a, src, DYND_ASSIGN_DEFAULT), 0);
  CHECK_EQ_INT(buf[0], 10);
  CHECK_EQ_INT(buf[5], 60);
  dynd_array_decref(src);
  dynd_array_incref(a);
  dynd_array_decref(a);
  CHECK_EQ_INT(releases, 0);
  dynd_array_decref(a);
  CHECK_EQ_INT(releases, 1);
}

static void test_external_read_only_refuses_assignment(void) {
  releases = 0;
  int32_t *buf = int_buffer(3);
  intptr_t shape[1] = {3};
  intptr_t strides[1] = {4};
  dynd_array a = dynd_array_from_external(T_INT32, (char *)buf, 1, shape, strides, buf,
                                          release_buffer, 0);
  REQUIRE(a != NULL);
  dynd_array src = arr("3 * int32", "[7, 8, 9]");
  dynd_error_clear();
  CHECK_EQ_INT(dynd_array_assign(a, src, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "read-only");
  CHECK_EQ_INT(buf[0], 1);
  dynd_array_decref(src);
  dynd_array_decref(a);
  CHECK_EQ_INT(releases, 1);
}

/* A failing dynd_array_from_external: NULL, the error code, and the owner
 * released exactly once before the call returned. */
#define EXPECT_EXTERNAL_FAILS(code, needle, tp, ndim, shape, strides)                   \
  do {                                                                                  \
    releases = 0;                                                                       \
    int32_t *mt_buf = int_buffer(4);                                                    \
    dynd_error_clear();                                                                 \
    dynd_array mt_a = dynd_array_from_external((tp), (char *)mt_buf, (ndim), (shape),   \
                                               (strides), mt_buf, release_buffer, 1);   \
    CHECK(mt_a == NULL);                                                                \
    CHECK_EQ_INT(dynd_error_code(), (code));                                            \
    CHECK_CONTAINS(dynd_error_message(), (needle));                                     \
    CHECK_EQ_INT(releases, 1);                                                          \
    if (mt_a != NULL) dynd_array_decref(mt_a);                                          \
  } while (0)

static void test_external_failures_release_the_owner_once(void) {
  intptr_t shape[1] = {4};
  intptr_t strides[1] = {4};
  intptr_t negative[1] = {-1};
  intptr_t odd[1] = {3};
  EXPECT_EXTERNAL_FAILS(DYND_ERR_INVALID_ARGUMENT, "'tp' is NULL", NULL, 1, shape, strides);
  EXPECT_EXTERNAL_FAILS(DYND_ERR_INVALID_ARGUMENT, "'shape' is NULL", T_INT32, 1, NULL,
                        strides);
  EXPECT_EXTERNAL_FAILS(DYND_ERR_INVALID_ARGUMENT, "'strides' is NULL", T_INT32, 1, shape,
                        NULL);
  EXPECT_EXTERNAL_FAILS(DYND_ERR_INVALID_ARGUMENT, "negative", T_INT32, 1, negative,
                        strides);
  EXPECT_EXTERNAL_FAILS(DYND_ERR_INVALID_ARGUMENT, "alignment", T_INT32, 1, shape, odd);
  dynd_type str = parse_type("string");
  EXPECT_EXTERNAL_FAILS(DYND_ERR_TYPE, "string", str, 1, shape, strides);
  dynd_type_decref(str);
}

static void test_external_without_release(void) {
  /* Memory that outlives the array needs no release callback. */
  static double values[2] = {1.5, 2.5};
  intptr_t shape[1] = {2};
  intptr_t strides[1] = {8};
  dynd_array a = dynd_array_from_external(T_FLOAT64, (char *)values, 1, shape, strides, NULL,
                                          NULL, 0);
  check_array(a, "2 * float64", "[1.5,2.5]");
  if (a != NULL) dynd_array_decref(a);
}

/* ------------------------------------------------------------------ DLPack */

static void test_dlpack_round_trip(void) {
  dynd_array a = arr("2 * 3 * float64", "[[1, 2, 3], [4, 5, 6]]");
  REQUIRE(a != NULL);
  DLManagedTensorVersioned *t = dynd_array_to_dlpack(a);
  REQUIRE(t != NULL);
  CHECK_EQ_INT(t->version.major, 1);
  CHECK_EQ_INT(t->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLCPU);
  CHECK_EQ_INT(t->dl_tensor.ndim, 2);
  CHECK_EQ_INT(t->dl_tensor.dtype.code, kDLFloat);
  CHECK_EQ_INT(t->dl_tensor.dtype.bits, 64);
  CHECK_EQ_INT(t->dl_tensor.dtype.lanes, 1);
  CHECK_EQ_INT(t->dl_tensor.shape[0], 2);
  CHECK_EQ_INT(t->dl_tensor.shape[1], 3);
  CHECK_EQ_INT(t->dl_tensor.strides[0], 3);
  CHECK_EQ_INT(t->dl_tensor.strides[1], 1);
  CHECK(t->dl_tensor.data == (void *)dynd_array_data(a));
  /* The tensor holds the data: the array handle can go first. */
  char *data = dynd_array_data(a);
  dynd_array_decref(a);
  dynd_array b = dynd_array_from_dlpack(t);
  check_array(b, "2 * 3 * float64", "[[1.0,2.0,3.0],[4.0,5.0,6.0]]");
  CHECK(dynd_array_data(b) == data);
  if (b != NULL) dynd_array_decref(b);
}

static void test_dlpack_consumer_deletes(void) {
  /* A consumer that does not import calls the deleter itself. */
  dynd_array a = arr("3 * int16", "[1, 2, 3]");
  DLManagedTensorVersioned *t = dynd_array_to_dlpack(a);
  dynd_array_decref(a);
  REQUIRE(t != NULL);
  CHECK_EQ_INT(((int16_t *)t->dl_tensor.data)[2], 3);
  t->deleter(t);
}

static void test_dlpack_export_errors(void) {
  dynd_array ragged = arr("2 * var * int32", "[[1], [2, 3]]");
  dynd_error_clear();
  CHECK(dynd_array_to_dlpack(ragged) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_TYPE);
  dynd_array_decref(ragged);
  dynd_error_clear();
  CHECK(dynd_array_to_dlpack(NULL) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
}

/* A producer's tensor: one malloc'd block with the tensor, its shape,
 * strides and data; the deleter frees it and counts. */
typedef struct {
  DLManagedTensorVersioned managed;
  int64_t dims[4];
  double data[6];
} producer_tensor;

static int deletes;

static void producer_delete(DLManagedTensorVersioned *self) {
  free(self->manager_ctx);
  deletes++;
}

/* A 2 x 3 float64 tensor over 1..6 in C order. */
static DLManagedTensorVersioned *producer_make(void) {
  producer_tensor *p = calloc(1, sizeof(producer_tensor));
  p->managed.version.major = 1;
  p->managed.version.minor = 0;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_delete;
  p->managed.dl_tensor.data = p->data;
  p->managed.dl_tensor.device.device_type = kDLCPU;
  p->managed.dl_tensor.ndim = 2;
  p->managed.dl_tensor.dtype.code = kDLFloat;
  p->managed.dl_tensor.dtype.bits = 64;
  p->managed.dl_tensor.dtype.lanes = 1;
  p->dims[0] = 2; p->dims[1] = 3; p->dims[2] = 3; p->dims[3] = 1;
  p->managed.dl_tensor.shape = p->dims;
  p->managed.dl_tensor.strides = p->dims + 2;
  for (int i = 0; i < 6; i++) p->data[i] = i + 1;
  return &p->managed;
}

static void test_dlpack_import_deletes_once(void) {
  deletes = 0;
  DLManagedTensorVersioned *t = producer_make();
  /* Columns reversed: start at column 2, step back one element. */
  t->dl_tensor.byte_offset = 2 * sizeof(double);
  t->dl_tensor.strides[1] = -1;
  dynd_array a = dynd_array_from_dlpack(t);
  check_array(a, "2 * 3 * float64", "[[3.0,2.0,1.0],[6.0,5.0,4.0]]");
  CHECK_EQ_INT(deletes, 0);
  if (a != NULL) {
    dynd_array_incref(a);
    dynd_array_decref(a);
    CHECK_EQ_INT(deletes, 0);
    dynd_array_decref(a);
  }
  CHECK_EQ_INT(deletes, 1);
}

static void test_dlpack_read_only_import_refuses_assignment(void) {
  deletes = 0;
  DLManagedTensorVersioned *t = producer_make();
  t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  double *data = t->dl_tensor.data;
  dynd_array a = dynd_array_from_dlpack(t);
  REQUIRE(a != NULL);
  dynd_array src = arr("2 * 3 * float64", "[[9, 9, 9], [9, 9, 9]]");
  dynd_error_clear();
  CHECK_EQ_INT(dynd_array_assign(a, src, DYND_ASSIGN_DEFAULT), -1);
  CHECK_CONTAINS(dynd_error_message(), "read-only");
  CHECK(data[0] == 1.0);
  dynd_array_decref(src);
  dynd_array_decref(a);
  CHECK_EQ_INT(deletes, 1);
}

/* `t` (one of producer_make's) refused by the import with `code` (0: any)
 * and a message containing `text`, and deleted exactly once. */
static void check_refused(DLManagedTensorVersioned *t, int code, const char *text) {
  deletes = 0;
  dynd_error_clear();
  CHECK(dynd_array_from_dlpack(t) == NULL);
  if (code != 0) CHECK_EQ_INT(dynd_error_code(), code);
  CHECK_CONTAINS(dynd_error_message(), text);
  CHECK_EQ_INT(deletes, 1);
}

/* A CUDA tensor comes in as an array on that device without a copy (its
 * address here is host memory, which the host must not read through it):
 * host reads of it are refused, naming the device; it is deleted once. */
static void test_dlpack_cuda_import_is_a_device_array(void) {
  deletes = 0;
  DLManagedTensorVersioned *t = producer_make();
  t->dl_tensor.device.device_type = kDLCUDA;
  t->dl_tensor.device.device_id = 1;
  void *data = t->dl_tensor.data;
  dynd_array a = dynd_array_from_dlpack(t);
  REQUIRE(a != NULL);
  CHECK(dynd_array_data(a) == data);
  dynd_array dst = arr("2 * 3 * float64", "[[0, 0, 0], [0, 0, 0]]");
  dynd_error_clear();
  CHECK_EQ_INT(dynd_array_assign(dst, a, DYND_ASSIGN_DEFAULT), -1);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(dynd_error_message(), "cuda:1");
  dynd_array_decref(dst);
  CHECK_EQ_INT(deletes, 0);
  dynd_array_decref(a);
  CHECK_EQ_INT(deletes, 1);
}

static void test_dlpack_refusals_delete_once(void) {
  /* A tensor on a device dynd does not know. */
  DLManagedTensorVersioned *t = producer_make();
  t->dl_tensor.device.device_type = kDLVulkan;
  t->dl_tensor.device.device_id = 1;
  check_refused(t, DYND_ERR_INVALID_ARGUMENT, "kDLVulkan:1");

  /* A vector data type. */
  t = producer_make();
  t->dl_tensor.dtype.lanes = 2;
  check_refused(t, DYND_ERR_TYPE, "lanes 2");

  /* A newer major version. */
  t = producer_make();
  t->version.major = 2;
  check_refused(t, 0, "version 2");

  /* NULL: nothing to delete. */
  dynd_error_clear();
  CHECK(dynd_array_from_dlpack(NULL) == NULL);
  CHECK_EQ_INT(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
}

int main(void) {
  RUN(test_external_negative_strides_released_once);
  RUN(test_external_read_only_refuses_assignment);
  RUN(test_external_failures_release_the_owner_once);
  RUN(test_external_without_release);
  RUN(test_dlpack_round_trip);
  RUN(test_dlpack_consumer_deletes);
  RUN(test_dlpack_export_errors);
  RUN(test_dlpack_import_deletes_once);
  RUN(test_dlpack_read_only_import_refuses_assignment);
  RUN(test_dlpack_cuda_import_is_a_device_array);
  RUN(test_dlpack_refusals_delete_once);
  return minitest_main_result();
}
