// include/dynd.h compiled as C++: its declarations must sit in an
// `extern "C"` block and be valid C++ (checked by tests/c_tests.rs with
// -fsyntax-only).
#include "dynd.h"

static_assert(sizeof(dynd_ckernel_builder) == 18 * sizeof(void *), "builder is 18 words");
static_assert(sizeof(dynd_ckernel_prefix) == 2 * sizeof(void *), "prefix is 2 words");
static_assert(sizeof(dynd_memory_block) == 8, "memory block header is 8 bytes");
static_assert(sizeof(dynd_pod_allocator_api) == 3 * sizeof(void *), "allocator api");

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
