// Tight loops for the benchmark, in C so that the floor (a clock read and a 32-byte store into a thread-local
// buffer) and the recorder's own emit are measured the same way.
#ifndef COBSTRACE_BENCH_H
#define COBSTRACE_BENCH_H
#include <stdint.h>

/// n iterations of: read the hot path's clock, store a 32-byte record into a thread-local buffer.
uint64_t obstrace_bench_floor(uint64_t n);
/// n calls of the recorder's hot path, `obstrace_emit` (recording must be on).
uint64_t obstrace_bench_emit(uint64_t n);
/// n reads of the TSC.
uint64_t obstrace_bench_rdtsc(uint64_t n);
/// n reads of CLOCK_MONOTONIC.
uint64_t obstrace_bench_clock_gettime(uint64_t n);
/// CLOCK_MONOTONIC in nanoseconds.
uint64_t obstrace_bench_now(void);
/// The CPU time (user + system) of the whole process, every thread, in nanoseconds (getrusage RUSAGE_SELF).
uint64_t obstrace_bench_process_cpu(void);
/// The peak resident set size of the children this process waited for, in KiB.
long obstrace_bench_children_max_rss(void);
/// How many CPUs the process may run on (as it started: taskset's, or all).
int obstrace_bench_cpus(void);
/// Keeps the calling thread on the `index`-th of those CPUs alone, or, when `index` is negative, lets it run on all of
/// them again; 0 on success. Threads it creates afterwards inherit the setting.
int obstrace_bench_pin(int index);
#endif
