/*===- OddCalls.c - the C API called oddly, from C ------------------------===*
 *
 * What a C caller can get wrong: null pointers, zeroed structs, huge and
 * negative extents, ranks and dtypes out of range, outputs that overlap
 * themselves or an input, misaligned data, a destroyed bundle, a double
 * destroy. Every call must return a status (never crash, hang or touch
 * memory it does not own: OddCallsTest runs this under AddressSanitizer and
 * UndefinedBehaviorSanitizer). Compiled as C, so the header is checked as
 * C too.
 *
 *===----------------------------------------------------------------------===*/

#include "attn/runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The first failure, for the test's message. */
static char failure[512];
static int failures;

static void expect(int ok, const char *what, attn_status got) {
  if (ok)
    return;
  if (!failures++)
    snprintf(failure, sizeof(failure), "%s: got %s (%s)", what,
             attn_status_name(got), attn_last_error());
}

#define EXPECT_STATUS(call, status)                                            \
  do {                                                                         \
    attn_status got_ = (call);                                                 \
    expect(got_ == (status), #call, got_);                                     \
  } while (0)

static attn_tensor tensor(uintptr_t address, attn_dtype dtype, int32_t rank,
                          const int64_t *sizes) {
  attn_tensor t;
  memset(&t, 0, sizeof(t));
  t.data = (void *)address;
  t.dtype = dtype;
  t.rank = rank;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    t.sizes[i] = sizes[i];
    t.strides[i] = stride;
    stride *= sizes[i];
  }
  return t;
}

/* A valid contiguous bf16 call [1, 8, 128, 128] at `base` (fake device
 * addresses, 1 MiB apart), with LSE when `lse`. */
static attn_fwd_args validArgs(uintptr_t base, int lse) {
  const int64_t qs[4] = {1, 8, 128, 128}, ls[3] = {1, 8, 128};
  attn_fwd_args a;
  memset(&a, 0, sizeof(a));
  a.q = tensor(base, ATTN_DTYPE_BF16, 4, qs);
  a.k = tensor(base + (1 << 20), ATTN_DTYPE_BF16, 4, qs);
  a.v = tensor(base + (2 << 20), ATTN_DTYPE_BF16, 4, qs);
  a.o = tensor(base + (3 << 20), ATTN_DTYPE_BF16, 4, qs);
  if (lse)
    a.lse = tensor(base + (4 << 20), ATTN_DTYPE_F32, 3, ls);
  return a;
}

static void nullsAndZeros(attn_bundle *bundle) {
  attn_bundle *out = (attn_bundle *)1;
  int64_t index = 0;
  EXPECT_STATUS(attn_bundle_load(NULL, NULL), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bundle_load(NULL, &out), ATTN_ERROR_INVALID_ARGUMENT);
  expect(out == NULL, "attn_bundle_load(NULL, &out) clears out", ATTN_SUCCESS);
  EXPECT_STATUS(attn_bundle_load("/nonexistent/attn/bundle", &out),
                ATTN_ERROR_BUNDLE_NOT_FOUND);
  EXPECT_STATUS(attn_bundle_load("", &out), ATTN_ERROR_BUNDLE_NOT_FOUND);
  attn_fwd_args zero;
  attn_bwd_args zeroBwd;
  memset(&zero, 0, sizeof(zero));
  memset(&zeroBwd, 0, sizeof(zeroBwd));
  EXPECT_STATUS(attn_fwd_select(NULL, &zero, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_fwd_select(bundle, NULL, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_fwd_select(bundle, &zero, NULL),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_fwd_select(bundle, &zero, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_fwd(bundle, &zero, NULL), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_tune(bundle, &zero, NULL, NULL),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bwd_select(bundle, &zeroBwd, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bwd(bundle, &zeroBwd, NULL), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bwd(NULL, NULL, NULL), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bundle_set_auto_tune(NULL, 1),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bundle_set_check_values(NULL, 1),
                ATTN_ERROR_INVALID_ARGUMENT);
  expect(attn_bundle_num_kernels(NULL) == 0, "num_kernels(NULL)", ATTN_SUCCESS);
  expect(attn_bundle_kernel_info(bundle, -1) == NULL, "kernel_info(-1)",
         ATTN_SUCCESS);
  expect(attn_bundle_kernel_info(bundle, INT64_MAX) == NULL,
         "kernel_info(INT64_MAX)", ATTN_SUCCESS);
  expect(strcmp(attn_status_name((attn_status)-1), "ATTN_ERROR_UNKNOWN") == 0,
         "attn_status_name(-1)", ATTN_SUCCESS);
  expect(strcmp(attn_status_name((attn_status)99), "ATTN_ERROR_UNKNOWN") == 0,
         "attn_status_name(99)", ATTN_SUCCESS);
  attn_bundle_destroy(NULL);
}

/* Each field of q set to an extreme value in turn. */
static void extremeTensors(attn_bundle *bundle, uintptr_t base) {
  const int64_t values[] = {-1, INT64_MIN,       INT64_MAX, INT64_MAX / 2,
                            0,  (int64_t)1 << 40};
  int64_t index = 0;
  for (int field = 0; field < 8; ++field)
    for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); ++v) {
      attn_fwd_args a = validArgs(base, 1);
      if (field < 4)
        a.q.sizes[field] = values[v];
      else
        a.o.strides[field - 4] = values[v];
      attn_status s = attn_fwd_select(bundle, &a, &index);
      expect(s == ATTN_ERROR_INVALID_ARGUMENT || s == ATTN_SUCCESS ||
                 s == ATTN_ERROR_NO_MATCHING_KERNEL,
             "an extreme size or stride", s);
    }
  const int32_t ranks[] = {-1, 0, 1, 5, INT32_MAX, INT32_MIN};
  for (size_t r = 0; r < sizeof(ranks) / sizeof(ranks[0]); ++r) {
    attn_fwd_args a = validArgs(base, 1);
    a.k.rank = ranks[r];
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                  ATTN_ERROR_INVALID_ARGUMENT);
    a = validArgs(base, 1);
    a.lse.rank = ranks[r];
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                  ATTN_ERROR_INVALID_ARGUMENT);
  }
  const int dtypes[] = {-1, 5, 99, INT32_MIN};
  for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); ++d) {
    attn_fwd_args a = validArgs(base, 0);
    memcpy(&a.q.dtype, &dtypes[d], sizeof(int));
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                  ATTN_ERROR_INVALID_ARGUMENT);
    a = validArgs(base, 0);
    memcpy(&a.v.dtype, &dtypes[d], sizeof(int));
    EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                  ATTN_ERROR_INVALID_ARGUMENT);
  }
  attn_fwd_args a = validArgs(base, 0);
  a.softmax_scale = NAN;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a.softmax_scale = -INFINITY;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 0);
  a.quantize = 7;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 0);
  a.max_seqlen_q = -5;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 0);
  a.q.data = (void *)(base + 2); /* misaligned */
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 0);
  a.o.data = NULL;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
}

/* Outputs that overlap themselves or an input. */
static void overlaps(attn_bundle *bundle, uintptr_t base) {
  int64_t index = 0;
  attn_fwd_args a = validArgs(base, 1);
  a.o.strides[2] = 0;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 1);
  a.o.strides[2] = 8;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 1);
  a.lse.strides[0] = a.lse.strides[1] = a.lse.strides[2] = 0;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 1);
  a.o.data = a.q.data;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  a = validArgs(base, 1);
  a.lse.data = a.o.data;
  EXPECT_STATUS(attn_fwd_select(bundle, &a, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
}

int attn_odd_c_calls(const char *dir, uintptr_t base, const char **message) {
  failures = 0;
  failure[0] = '\0';
  attn_bundle *bundle = NULL;
  EXPECT_STATUS(attn_bundle_load(dir, &bundle), ATTN_SUCCESS);
  if (!bundle) {
    *message = failure;
    return failures;
  }
  nullsAndZeros(bundle);
  extremeTensors(bundle, base);
  overlaps(bundle, base);
  int64_t index = -1;
  attn_fwd_args valid = validArgs(base, 1);
  EXPECT_STATUS(attn_fwd_select(bundle, &valid, &index), ATTN_SUCCESS);
  attn_status launched = attn_fwd(bundle, &valid, NULL);
  expect(launched == ATTN_SUCCESS || launched == ATTN_ERROR_CUDA,
         "a valid attn_fwd", launched);
  /* Destroyed: every use is refused, a second destroy ignored. */
  attn_bundle_destroy(bundle);
  attn_bundle_destroy(bundle);
  EXPECT_STATUS(attn_fwd_select(bundle, &valid, &index),
                ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_fwd(bundle, &valid, NULL), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(attn_bundle_set_auto_tune(bundle, 1),
                ATTN_ERROR_INVALID_ARGUMENT);
  expect(attn_bundle_num_kernels(bundle) == 0, "num_kernels(destroyed)",
         ATTN_SUCCESS);
  expect(attn_bundle_kernel_info(bundle, 0) == NULL, "kernel_info(destroyed)",
         ATTN_SUCCESS);
  *message = failure;
  return failures;
}
