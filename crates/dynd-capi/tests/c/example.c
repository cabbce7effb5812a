/* example.c -- dynd from C: types, arrays, errors, a ckernel. */
#include <dynd.h>
#include <stdio.h>

/* Prints the pending error and returns 1 (for `return fail(...)`). */
static int fail(const char *what) {
  fprintf(stderr, "%s: error %d: %s\n", what, dynd_error_code(), dynd_error_message());
  return 1;
}

int main(void) {
  /* A type: a new reference, released with dynd_type_decref. */
  dynd_type tp = dynd_type_from_datashape("2 * var * int32");
  if (tp == NULL) return fail("type");
  printf("data_size=%zu arrmeta_size=%zu\n", dynd_type_data_size(tp),
         dynd_type_arrmeta_size(tp));

  /* An array from JSON: a new reference. The array keeps its own reference
   * to its type, so ours can go now. */
  const char json[] = "[[1, 2, 3], [4]]";
  dynd_array a = dynd_array_from_json(tp, json, sizeof json - 1);
  dynd_type_decref(tp);
  if (a == NULL) return fail("from_json");

  /* Strings from the library are freed with dynd_string_free. */
  char *text = dynd_array_to_json(a);
  char *ds = dynd_type_to_datashape(dynd_array_type(a)); /* borrowed type */
  printf("%s : %s\n", text, ds);
  dynd_string_free(text);
  dynd_string_free(ds);

  /* Assignment under an error mode; a failure is -1 plus the slot. */
  dynd_type int8 = (dynd_type)2; /* builtin ids are plain values */
  dynd_array big = dynd_array_from_json((dynd_type)5 /* int64 */, "300", 3);
  dynd_array small = dynd_array_empty(int8);
  if (big == NULL || small == NULL) return fail("arrays");
  if (dynd_array_assign(small, big, DYND_ASSIGN_DEFAULT) != 0)
    printf("refused: error %d: %s\n", dynd_error_code(), dynd_error_message());
  if (dynd_array_assign(small, big, DYND_ASSIGN_NOCHECK) == 0)
    printf("nocheck: %d\n", *(signed char *)dynd_array_data(small));
  dynd_array_decref(big);
  dynd_array_decref(small);

  /* A strided ckernel float64 -> int32, built in a stack builder. */
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  if (dynd_make_assignment_kernel(&ckb, 0, (dynd_type)4, NULL, (dynd_type)14, NULL,
                                  DYND_KERNEL_REQUEST_STRIDED, DYND_ASSIGN_DEFAULT) < 0) {
    dynd_ckernel_builder_destruct(&ckb);
    return fail("kernel");
  }
  dynd_ckernel_prefix *kernel = (dynd_ckernel_prefix *)ckb.data;
  dynd_expr_strided_t run = (dynd_expr_strided_t)kernel->function;
  double in[4] = {1, 2, 3, 4.5};
  int out[4] = {0};
  const char *src[1] = {(const char *)in};
  intptr_t src_stride[1] = {sizeof(double)};
  if (run((char *)out, sizeof(int), src, src_stride, 3, kernel) == 0)
    printf("%d %d %d\n", out[0], out[1], out[2]);
  if (run((char *)out, sizeof(int), src, src_stride, 4, kernel) != 0)
    printf("4.5: error %d: %s\n", dynd_error_code(), dynd_error_message());
  dynd_ckernel_builder_destruct(&ckb); /* runs the kernel's destructor */

  /* The array a: its last reference. */
  dynd_array_decref(a);
  return 0;
}
