/* TestKernels.c - CPU kernels the plan tests embed as an elf-so image.
 *
 * They follow the runtime's kernel ABI (runtime/session/Session.h): one array
 * of data pointers, one per argument tensor of the launch. */

#include <stdint.h>

/* out = a + b over count elements; args: a, b, out (f32), count (i64[]). */
void add_f32(void **args) {
  const float *a = args[0];
  const float *b = args[1];
  float *out = args[2];
  int64_t count = *(const int64_t *)args[3];
  for (int64_t i = 0; i < count; ++i)
    out[i] = a[i] + b[i];
}

/* add_f32 over elements [begin, end) only: its outer loop split for the
 * session's thread pool. */
void add_f32_range(void **args, int64_t begin, int64_t end) {
  const float *a = args[0];
  const float *b = args[1];
  float *out = args[2];
  for (int64_t i = begin; i < end; ++i)
    out[i] = a[i] + b[i];
}

/* out[i] = 0 over count elements; args: out (i64), count (i64[]). */
void chunk_starts(void **args) {
  int64_t *out = args[0];
  int64_t count = *(const int64_t *)args[1];
  for (int64_t i = 0; i < count; ++i)
    out[i] = 0;
}

/* out[i] = begin over [begin, end): which chunk ran each element. */
void chunk_starts_range(void **args, int64_t begin, int64_t end) {
  int64_t *out = args[0];
  for (int64_t i = begin; i < end; ++i)
    out[i] = begin;
}

/* w -= lr * grad in place; args: w, grad (f32), lr (f32[]), count (i64[]). */
void sgd_f32(void **args) {
  float *w = args[0];
  const float *grad = args[1];
  float lr = *(const float *)args[2];
  int64_t count = *(const int64_t *)args[3];
  for (int64_t i = 0; i < count; ++i)
    w[i] -= lr * grad[i];
}

/* out = {step, seed, offset}; args: step (i64[]), rng (i64[2]), out (i64[3]).
 */
void record_state(void **args) {
  const int64_t *step = args[0];
  const int64_t *rng = args[1];
  int64_t *out = args[2];
  out[0] = step[0];
  out[1] = rng[0];
  out[2] = rng[1];
}
