// include/dynd.h compiled as C++: its declarations must sit in an
// `extern "C"` block and be valid C++ (checked by tests/c_tests.rs with
// -fsyntax-only).
#include "dynd.h"

static_assert(sizeof(dynd_ckernel_builder) == 18 * sizeof(void *), "builder is 18 words");
static_assert(sizeof(dynd_ckernel_prefix) == 2 * sizeof(void *), "prefix is 2 words");
static_assert(sizeof(dynd_memory_block) == 8, "memory block header is 8 bytes");
static_assert(sizeof(dynd_pod_allocator_api) == 3 * sizeof(void *), "allocator api");
static_assert(sizeof(dynd_deferred_ckernel) == 6 * sizeof(void *), "deferred ckernel");

static intptr_t no_kernel(void *, dynd_ckernel_builder *, intptr_t, const char *const *,
                          uint32_t) {
  dynd_error_set(DYND_ERR_TYPE, "no kernel");
  return -1;
}

int use_callables() {
  static const dynd_type types[2] = {(dynd_type)4, (dynd_type)4};
  dynd_deferred_ckernel dck = {0, 2, types, nullptr, no_kernel, nullptr};
  dynd_callable f = dynd_callable_from_deferred(&dck);
  dynd_callable g = dynd_callable_lookup("add");
  dynd_array r = dynd_callable_call(f, 0, nullptr);
  intptr_t end = dynd_callable_instantiate(f, nullptr, 0, types[0], nullptr, 1, types + 1,
                                           nullptr, DYND_KERNEL_REQUEST_STRIDED);
  dynd_callable_incref(f);
  dynd_callable_decref(f);
  dynd_callable_decref(f);
  dynd_callable_decref(g);
  dynd_array_decref(r);
  return end < 0 ? dynd_error_code() : DYND_OK;
}

int use_the_header() {
  dynd_ckernel_builder ckb;
  dynd_ckernel_builder_construct(&ckb);
  intptr_t end = dynd_make_assignment_kernel(&ckb, 0, (dynd_type)4, nullptr, (dynd_type)14,
                                             nullptr, DYND_KERNEL_REQUEST_SINGLE,
                                             DYND_ASSIGN_DEFAULT);
  dynd_expr_single_t f = reinterpret_cast<dynd_expr_single_t>(
      reinterpret_cast<dynd_ckernel_prefix *>(ckb.data)->function);
  dynd_ckernel_builder_destruct(&ckb);
  return end < 0 || f == nullptr ? dynd_error_code() : DYND_OK;
}
