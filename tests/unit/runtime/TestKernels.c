/* TestKernels.c - CPU kernels the plan tests embed as an elf-so image.
 *
 * They follow the runtime's kernel ABI (runtime/Session.h): one array of
 * data pointers, one per argument tensor of the launch. */

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
