/* example_kernel.c -- a third-party kernel handed to dynd: multiply int32 by
 * a factor (the seeds' deferred ckernel example), lifted over var dims. */
#include <dynd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ckernel: the prefix, then the data it was built with. */
typedef struct {
  dynd_ckernel_prefix base;
  int32_t factor;
} multiply_kernel;

static int multiply_strided(char *dst, intptr_t dst_stride, const char *const *src,
                            const intptr_t *src_stride, size_t count,
                            dynd_ckernel_prefix *self) {
  int32_t factor = ((multiply_kernel *)self)->factor;
  const char *s = src[0];
  for (size_t i = 0; i < count; ++i, dst += dst_stride, s += src_stride[0]) {
    int64_t r = (int64_t)(*(const int32_t *)s) * factor;
    if (r != (int32_t)r) { /* report, return -1: the caller gets code and message */
      dynd_error_set(DYND_ERR_OVERFLOW, "multiply: the product overflows int32");
      return -1;
    }
    *(int32_t *)dst = (int32_t)r;
  }
  return 0;
}

static int multiply_single(char *dst, const char *const *src, dynd_ckernel_prefix *self) {
  static const intptr_t unit_stride[1] = {0};
  return multiply_strided(dst, 0, src, unit_stride, 1, self);
}

/* Builds one kernel at ckb_offset: make room first, then write. */
static intptr_t multiply_instantiate(void *self_data, dynd_ckernel_builder *ckb,
                                     intptr_t ckb_offset, const char *const *arrmeta,
                                     uint32_t kernreq) {
  (void)arrmeta; /* int32 has no arrmeta */
  intptr_t end = ckb_offset + (intptr_t)sizeof(multiply_kernel);
  if (dynd_ckernel_builder_ensure_capacity_leaf(ckb, end) != 0) return -1;
  multiply_kernel *k = (multiply_kernel *)((char *)ckb->data + ckb_offset);
  k->base.function = kernreq == DYND_KERNEL_REQUEST_SINGLE ? (void *)multiply_single
                                                           : (void *)multiply_strided;
  k->base.destructor = NULL;              /* owns nothing */
  k->factor = *(const int32_t *)self_data; /* copied: the kernel stands alone */
  return end;
}

static void print_result(dynd_array r) {
  if (r == NULL) {
    printf("error %d: %s\n", dynd_error_code(), dynd_error_message());
    return;
  }
  char *json = dynd_array_to_json(r);
  char *ds = dynd_type_to_datashape(dynd_array_type(r));
  printf("%s : %s\n", json, ds);
  dynd_string_free(json);
  dynd_string_free(ds);
  dynd_array_decref(r);
}

int main(void) {
  static const dynd_type int32_int32[2] = {(dynd_type)4, (dynd_type)4}; /* dst, src */
  int32_t *factor = malloc(sizeof *factor);
  *factor = 3;
  dynd_deferred_ckernel dck = {
      0,                     /* ckernel_funcproto: expr */
      2,                     /* data_types_size: dst + 1 source */
      int32_int32,           /* data_dynd_types */
      factor,                /* data_ptr */
      multiply_instantiate,  /* instantiate_func */
      free,                  /* free_func: dynd calls it once, at the end */
  };
  dynd_callable triple = dynd_callable_from_deferred(&dck); /* dck is now cleared */
  if (triple == NULL) {
    printf("error %d: %s\n", dynd_error_code(), dynd_error_message());
    return 1;
  }

  dynd_type tp = dynd_type_from_datashape("3 * var * int32");
  const char json[] = "[[1, 2, 3], [], [4, 5]]";
  dynd_array a = dynd_array_from_json(tp, json, strlen(json));
  dynd_type_decref(tp);
  print_result(dynd_callable_call(triple, 1, &a)); /* lifted over both dims */
  dynd_array_decref(a);

  tp = dynd_type_from_datashape("2 * var * int32");
  const char big[] = "[[1], [2, 1000000000]]";
  a = dynd_array_from_json(tp, big, strlen(big));
  dynd_type_decref(tp);
  print_result(dynd_callable_call(triple, 1, &a)); /* the kernel's own error */
  dynd_array_decref(a);

  dynd_callable_decref(triple); /* the last reference: free(factor) runs */
  return 0;
}
