/* How this machine wakes a sleeping thread, the facts behind the CPU step's
 * pool (crates/sinew-cpu/src/pool.rs: the workers' timed wake before a
 * steadily paced step, and their move off the caller's core).
 *
 *   gcc -O2 -pthread benches/wake_probe.c -o /tmp/wake_probe && /tmp/wake_probe
 *
 * Prints, for a few idle times:
 *   wake   a thread asleep in a futex, woken by this thread after it slept
 *          IDLE µs: how often it lands on this thread's core (where it runs
 *          in turn with this thread rather than beside it), and how long
 *          from the wake until it runs (p10, p50, p90).
 *   timer  a 0.9 ms sleep: how late it ends (p10, p50, p90, p99), with
 *          Linux's default timer slack.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 300, BUSY_NS = 50000 };

static _Atomic int word, done, woke_cpu;
static _Atomic long woke_at;

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void busy(long ns) {
  const long start = now_ns();
  while (now_ns() - start < ns) {
  }
}

static void sleep_ns(long ns) {
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&t, NULL);
}

static int by_value(const void *a, const void *b) {
  const long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The woken thread: notes when and where it runs, works as long as a
 * step's part would, and sleeps again. */
static void *sleeper(void *arg) {
  (void)arg;
  for (;;) {
    while (atomic_load(&word) == 0)
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    woke_at = now_ns();
    woke_cpu = sched_getcpu();
    busy(BUSY_NS);
    atomic_store(&word, 0);
    atomic_store(&done, 1);
  }
  return NULL;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, sleeper, NULL);
  const long idles_us[] = {100, 1000, 5000};
  for (size_t k = 0; k < sizeof idles_us / sizeof *idles_us; k++) {
    long latency[ROUNDS];
    int same = 0;
    for (int i = 0; i < ROUNDS; i++) {
      sleep_ns(idles_us[k] * 1000);
      atomic_store(&done, 0);
      const long start = now_ns();
      atomic_store(&word, 1);
      syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
      busy(BUSY_NS);
      const int here = sched_getcpu();
      while (!atomic_load(&done)) {
      }
      same += here == woke_cpu;
      latency[i] = woke_at - start;
    }
    qsort(latency, ROUNDS, sizeof *latency, by_value);
    printf("wake  after %5ld us idle: on the waker's core %3d of %d; runs after p10 %ld, "
           "p50 %ld, p90 %ld ns\n",
           idles_us[k], same, ROUNDS, latency[ROUNDS / 10], latency[ROUNDS / 2],
           latency[ROUNDS * 9 / 10]);
  }
  long late[ROUNDS];
  for (int i = 0; i < ROUNDS; i++) {
    const long start = now_ns();
    sleep_ns(900000);
    late[i] = now_ns() - start - 900000;
  }
  qsort(late, ROUNDS, sizeof *late, by_value);
  printf("timer 0.9 ms: late by p10 %ld, p50 %ld, p90 %ld, p99 %ld ns\n", late[ROUNDS / 10],
         late[ROUNDS / 2], late[ROUNDS * 9 / 10], late[ROUNDS * 99 / 100]);
  return 0;
}
