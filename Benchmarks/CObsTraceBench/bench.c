#define _GNU_SOURCE
#include "CObsTraceBench.h"
#include "CObsTraceRing.h"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

// As large as the recorder's default ring (64K records, 2 MiB), so that both store into the same amount of memory.
#define BENCH_RECORDS (1 << 16)
__thread obstrace_record obstrace_bench_buffer[BENCH_RECORDS];

uint64_t obstrace_bench_floor(uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    obstrace_record *slot = &obstrace_bench_buffer[i & (BENCH_RECORDS - 1)];
    slot->time = obstrace_clock();
    slot->kind = 1;
    slot->flags = 0;
    slot->depth = 0;
    slot->object = 1;
    slot->key = 2;
    slot->scope = 0;
    slot->aux = 3;
    slot->stack = 0;
    __asm__ volatile("" ::: "memory");  // the store happens, as the ring's does
  }
  return n;
}

uint64_t obstrace_bench_emit(uint64_t n) {
  uint64_t recorded = 0;
  for (uint64_t i = 0; i < n; i++) recorded += obstrace_emit(1, 0, 1, 2, 0, 3, 0);
  return recorded;
}

uint64_t obstrace_bench_rdtsc(uint64_t n) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += obstrace_clock();
  return sum;
}

uint64_t obstrace_bench_clock_gettime(uint64_t n) {
  uint64_t sum = 0;
  struct timespec ts;
  for (uint64_t i = 0; i < n; i++) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sum += (uint64_t)ts.tv_nsec;
  }
  return sum;
}

uint64_t obstrace_bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

long obstrace_bench_children_max_rss(void) {
  struct rusage usage;
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss;
}

uint64_t obstrace_bench_process_cpu(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  uint64_t user = (uint64_t)usage.ru_utime.tv_sec * 1000000000u + (uint64_t)usage.ru_utime.tv_usec * 1000u;
  uint64_t system = (uint64_t)usage.ru_stime.tv_sec * 1000000000u + (uint64_t)usage.ru_stime.tv_usec * 1000u;
  return user + system;
}

// The CPUs the process was allowed at its first call of either function below (taskset's, or all).
static cpu_set_t allowed;
static int allowed_read;

static void read_allowed(void) {
  if (allowed_read) return;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) CPU_ZERO(&allowed);
  allowed_read = 1;
}

int obstrace_bench_cpus(void) {
  read_allowed();
  return CPU_COUNT(&allowed);
}

int obstrace_bench_pin(int index) {
  read_allowed();
  if (index < 0) return sched_setaffinity(0, sizeof allowed, &allowed);
  cpu_set_t set;
  CPU_ZERO(&set);
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == index) {
      CPU_SET(cpu, &set);
      return sched_setaffinity(0, sizeof set, &set);
    }
  }
  return -1;
}
