/* The C peer's kernels (../shared/peers/act_kernels.c) timed the way
 * `sinew bench --scenario` times Sinew's step: hot, after the caller's own
 * work, and after idling. Built and run by benches/after_work.sh.
 *
 *   peer_after_work KERNEL NUM_ENVS NUM_TARGETS [STEPS]
 *
 * KERNEL is pd, dc or delay_dc. Prints one CSV row per mode:
 *   kernel,mode,num_envs,num_targets,median_us
 * With STEPS, takes that many hot steps untimed and prints nothing: for
 * benches/peer_instructions.sh, which counts their instructions.
 *
 * hot        the same command every step.
 * after_work before each timed step, the next command is written by the
 *            same OpenMP threads with the same static split as the kernel:
 *            the sine that `sinew run` and `sinew bench --scenario` write
 *            for the peer scenarios (amplitude 0.3, 1 Hz, dt 0.005, phase
 *            2π(env/num_envs + target/num_targets)), pos and vel zero (the
 *            scenarios' `state = "zero"`, which benches/after_work.sh sets:
 *            by default Sinew's pos and vel are the signal 20 ms back),
 *            effort target zero. The kernel's threads are awake and each
 *            finds its rows in its own caches: the best case for the step.
 * after_idle 1 ms asleep before each timed step.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "act_kernels.h"

#define MAX_LAG 4

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static float *table(long n, float value) {
  float *p = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (long i = 0; i < n; i++) p[i] = value;
  return p;
}

typedef struct {
  long N, A;
  float *pt, *vt, *et, *p, *v, *kp, *kd, *fl, *sat, *vl, *out, *hpt, *hvt, *het;
  int32_t *lags;
  int ptr;
  uint64_t step;
} Work;

/* The command of step `k`, as `sinew run` writes it for the peer scenarios. */
static void fill(Work *w, long k) {
  const long N = w->N, A = w->A;
  const double tau = 6.283185307179586, t = k * 0.005;
#pragma omp parallel for schedule(static)
  for (long e = 0; e < N; e++) {
    for (long a = 0; a < A; a++) {
      const long i = e * A + a;
      const double x = tau * t + tau * ((double)e / N + (double)a / A);
      w->pt[i] = (float)(0.3 * sin(x));
      w->vt[i] = (float)(0.3 * tau * cos(x));
      w->et[i] = 0.0f;
      w->p[i] = 0.0f;
      w->v[i] = 0.0f;
    }
  }
}

static void step(Work *w, const char *kernel) {
  const long n = w->N * w->A;
  if (!strcmp(kernel, "pd")) {
    act_pd(n, w->pt, w->vt, w->et, w->p, w->v, w->kp, w->kd, w->fl, w->out);
  } else if (!strcmp(kernel, "dc")) {
    act_dc(n, w->pt, w->vt, w->et, w->p, w->v, w->kp, w->kd, w->fl, w->sat, w->vl,
           w->out);
  } else {
    act_delay_dc(w->N, w->A, MAX_LAG, w->step, 1, &w->ptr, w->lags, w->hpt, w->hvt,
                 w->het, w->pt, w->vt, w->et, w->p, w->v, w->kp, w->kd, w->fl, w->sat,
                 w->vl, w->out);
  }
  w->step++;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5 ||
      (strcmp(argv[1], "pd") && strcmp(argv[1], "dc") && strcmp(argv[1], "delay_dc"))) {
    fprintf(stderr, "usage: %s pd|dc|delay_dc NUM_ENVS NUM_TARGETS [STEPS]\n", argv[0]);
    return 2;
  }
  const char *kernel = argv[1];
  Work w = {.N = atol(argv[2]), .A = atol(argv[3])};
  const long n = w.N * w.A, hn = (MAX_LAG + 1) * n;
  if (w.N <= 0 || w.A <= 0) {
    fprintf(stderr, "NUM_ENVS and NUM_TARGETS must be positive\n");
    return 2;
  }
  /* The scenarios' parameters: stiffness 30, damping 1.5, effort limit 25,
   * saturation 30, velocity limit 30. */
  w.pt = table(n, 0); w.vt = table(n, 0); w.et = table(n, 0);
  w.p = table(n, 0); w.v = table(n, 0);
  w.kp = table(n, 30); w.kd = table(n, 1.5f); w.fl = table(n, 25);
  w.sat = table(n, 30); w.vl = table(n, 30); w.out = table(n, 0);
  w.hpt = table(hn, 0); w.hvt = table(hn, 0); w.het = table(hn, 0);
  w.lags = calloc(w.N, sizeof(int32_t));
  const char *modes[] = {"hot", "after_work", "after_idle"};
  long k = 0;
  fill(&w, k);
  if (argc == 5) {
    for (long s = atol(argv[4]); s > 0; s--) step(&w, kernel);
    return 0;
  }
  for (int m = 0; m < 3; m++) {
    /* As `sinew bench` times a mode: a few steps to warm up and size the
     * batches, then 7 batches of at least 20 ms of stepping (at most
     * about a second of wall time each); the median of the batches' mean
     * step times. */
    double total = 0, batches[7];
    long batch = 0;
    for (int b = -1; b < 7; b++) {
      const long count = b < 0 ? 6 : batch;
      total = 0;
      const double wall0 = now_us();
      for (long s = 0; s < count; s++) {
        if (m == 1) fill(&w, ++k);
        if (m == 2) nanosleep(&(struct timespec){0, 1000000}, NULL);
        const double t0 = now_us();
        step(&w, kernel);
        total += now_us() - t0;
      }
      if (b < 0) {
        const double one = total / count > 0.1 ? total / count : 0.1;
        const double wall = (now_us() - wall0) / count > one ? (now_us() - wall0) / count : one;
        batch = (long)ceil(20000.0 / one);
        const long cap = (long)ceil(1e6 / wall);
        batch = batch > cap ? cap : batch;
        batch = batch < 1 ? 1 : batch;
      } else {
        batches[b] = total / batch;
      }
    }
    qsort(batches, 7, sizeof(double), cmp);
    printf("%s,%s,%ld,%ld,%.2f\n", kernel, modes[m], w.N, w.A, batches[3]);
  }
  return 0;
}
