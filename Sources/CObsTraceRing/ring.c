// The slow paths of the per-thread rings: attaching a ring to a thread, waiting for room, handing a ring over
// when its thread exits, and the registry the flusher walks.
#define _GNU_SOURCE
#include "CObsTraceRing.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

uint32_t obstrace_enabled_flag = 0;
uint32_t obstrace_drop_when_full_flag = 0;
uint32_t obstrace_stack_level_flag = 0;
uint32_t obstrace_stack_depth_flag = 16;
uint32_t obstrace_compare_mode_flag = 1;
uint32_t obstrace_property_fields[OBSTRACE_MAX_FIELD_PROPERTIES];
uint8_t obstrace_property_equatable[OBSTRACE_MAX_FIELD_PROPERTIES];
uint64_t obstrace_origin_marks = 0;
obstrace_tracking_getter obstrace_observation_tracking = NULL;
obstrace_tracking_setter obstrace_observation_set_tracking = NULL;
__thread obstrace_ring *obstrace_thread_ring __attribute__((tls_model("initial-exec"))) = NULL;
__thread uint32_t obstrace_in_recorder __attribute__((tls_model("initial-exec"))) = 0;

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static obstrace_ring *registry_head = NULL;
/// Drops counted by rings since released (their threads exited): still part of `obstrace_total_dropped`.
static uint64_t released_dropped = 0;
static bool flusher_running = false;
static uint64_t configured_capacity = 1u << 16;
static uint32_t next_thread_id = 0;
static uint32_t next_object_serial = 0;
static uint32_t next_scope_serial = 0;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t wake_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static bool wake_pending = false;

static void free_ring(obstrace_ring *ring) {
  free(ring->deep_scopes);
  free(ring->slots);
  free(ring);
}

// ── The pool of prepared rings. ──
// A thread's first event must not allocate and zero a ring (2 MiB by default) on the program's thread: that costs
// milliseconds and shifts scheduling. The flusher prepares rings ahead of need (`obstrace_ring_pool_fill`), every
// page already touched; a thread takes one with one atomic exchange per slot. Each slot holds a ring or NULL: a
// taker exchanges it with NULL (so no ring is ever taken twice, and no ABA), only the flusher (or the stopping
// thread, once the flusher has exited) puts rings in, with a CAS from NULL.
static obstrace_ring *ring_pool[OBSTRACE_RING_POOL_SLOTS];
static uint64_t rings_made_on_program_threads = 0;

static bool failing_ring_allocations = false;

void obstrace_fail_ring_allocations(bool fail) { __atomic_store_n(&failing_ring_allocations, fail, __ATOMIC_RELAXED); }

/// A ring for `capacity` records: its header and every slot zeroed, so that no page of it is touched for the
/// first time by its thread.
static obstrace_ring *make_ring(uint64_t capacity) {
  if (__atomic_load_n(&failing_ring_allocations, __ATOMIC_RELAXED)) return NULL;
  obstrace_ring *ring = aligned_alloc(64, (sizeof(obstrace_ring) + 63) & ~(size_t)63);
  if (ring == NULL) return NULL;
  memset(ring, 0, sizeof(*ring));
  ring->slots = aligned_alloc(64, capacity * sizeof(obstrace_record));
  if (ring->slots == NULL) {
    free(ring);
    return NULL;
  }
  // Touch every page now: the kernel zeroing a page on first touch must not land on the hot path.
  memset(ring->slots, 0, capacity * sizeof(obstrace_record));
  ring->mask = capacity - 1;
  return ring;
}

/// Puts `ring` in an empty slot of the pool; false when the pool is full.
static bool pool_put(obstrace_ring *ring) {
  for (int index = 0; index < OBSTRACE_RING_POOL_SLOTS; index++) {
    obstrace_ring *expected = NULL;
    // Release: pairs with the taker's acquire exchange in pool_take (the ring's contents are visible to it).
    if (__atomic_compare_exchange_n(&ring_pool[index], &expected, ring, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
      return true;
    }
  }
  return false;
}

/// Takes a prepared ring of `capacity` records from the pool, or returns NULL when it has none.
static obstrace_ring *pool_take(uint64_t capacity) {
  for (int index = 0; index < OBSTRACE_RING_POOL_SLOTS; index++) {
    if (__atomic_load_n(&ring_pool[index], __ATOMIC_RELAXED) == NULL) continue;
    // Acquire: pairs with the release CAS in pool_put.
    obstrace_ring *ring = __atomic_exchange_n(&ring_pool[index], NULL, __ATOMIC_ACQUIRE);
    if (ring == NULL) continue;
    if (ring->mask + 1 != capacity) {
      // Prepared before the capacity changed (not reached in practice: a recording empties the pool at its start).
      free_ring(ring);
      continue;
    }
    // Fewer than half left: the flusher refills the pool at its next drain, which this brings forward.
    if (2 * obstrace_ring_pool_count() < obstrace_ring_pool_target()) obstrace_flusher_wake();
    return ring;
  }
  return NULL;
}

size_t obstrace_ring_pool_count(void) {
  size_t count = 0;
  for (int index = 0; index < OBSTRACE_RING_POOL_SLOTS; index++) {
    if (__atomic_load_n(&ring_pool[index], __ATOMIC_RELAXED) != NULL) count++;
  }
  return count;
}

size_t obstrace_ring_pool_target(void) {
  uint64_t bytes = __atomic_load_n(&configured_capacity, __ATOMIC_RELAXED) * sizeof(obstrace_record);
  uint64_t target = OBSTRACE_RING_POOL_BYTES / bytes;
  return target < 1 ? 1 : target > OBSTRACE_RING_POOL_SLOTS ? OBSTRACE_RING_POOL_SLOTS : (size_t)target;
}

void obstrace_ring_pool_fill(void) {
  uint64_t capacity = __atomic_load_n(&configured_capacity, __ATOMIC_RELAXED);
  size_t missing = obstrace_ring_pool_target();
  size_t present = obstrace_ring_pool_count();
  missing = present >= missing ? 0 : missing - present;
  for (; missing > 0; missing--) {
    obstrace_ring *ring = make_ring(capacity);
    if (ring == NULL) return;
    if (!pool_put(ring)) {
      free_ring(ring);
      return;
    }
  }
}

void obstrace_ring_pool_empty(void) {
  for (int index = 0; index < OBSTRACE_RING_POOL_SLOTS; index++) {
    obstrace_ring *ring = __atomic_exchange_n(&ring_pool[index], NULL, __ATOMIC_ACQUIRE);
    if (ring != NULL) free_ring(ring);
  }
}

uint64_t obstrace_rings_made_on_program_threads(void) {
  return __atomic_load_n(&rings_made_on_program_threads, __ATOMIC_RELAXED);
}

/// Unlinks `ring` from the registry; the caller holds registry_mutex.
static void unlink_ring(obstrace_ring *ring) {
  obstrace_ring **link = &registry_head;
  while (*link != NULL && *link != ring) link = &(*link)->next;
  if (*link == ring) *link = ring->next;
}

/// Runs when a thread that recorded exits: its ring goes to the flusher, which frees it once drained.
static void thread_exited(void *value) {
  obstrace_ring *ring = value;
  obstrace_thread_ring = NULL;
  pthread_mutex_lock(&registry_mutex);
  bool empty = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) == __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
  if (!flusher_running && empty) {
    unlink_ring(ring);
    released_dropped += __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&registry_mutex);
    free_ring(ring);
    return;
  }
  // Release: pairs with the flusher's acquire load in obstrace_ring_is_orphaned.
  __atomic_store_n(&ring->orphaned, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&registry_mutex);
}

static void make_exit_key(void) { pthread_key_create(&exit_key, thread_exited); }

// Events offered on threads that could not get a ring (its memory could not be allocated), this recording; and the
// recording a thread last failed in (none: UINT64_MAX), so that it does not try to allocate a ring at every event.
static uint64_t ringless_events = 0;
static uint64_t recording_serial = 0;
static __thread uint64_t ring_failed_in = UINT64_MAX;

void obstrace_note_ringless_event(void) { __atomic_add_fetch(&ringless_events, 1, __ATOMIC_RELAXED); }

uint64_t obstrace_ringless_events(void) { return __atomic_load_n(&ringless_events, __ATOMIC_RELAXED); }

// Events offered this recording by signal handlers that interrupted the recorder on their own thread
// (`obstrace_enter_recorder`). A global count, not a ring's: the interrupted work may be the ring's own attach.
static uint64_t interrupted_events = 0;

void obstrace_note_interrupted_event(void) { __atomic_add_fetch(&interrupted_events, 1, __ATOMIC_RELAXED); }

uint64_t obstrace_interrupted_events(void) { return __atomic_load_n(&interrupted_events, __ATOMIC_RELAXED); }

obstrace_ring *obstrace_ring_attach(void) {
  if (obstrace_thread_ring != NULL) return obstrace_thread_ring;
  uint64_t serial = __atomic_load_n(&recording_serial, __ATOMIC_RELAXED);
  if (ring_failed_in == serial) return NULL;
  uint64_t capacity = __atomic_load_n(&configured_capacity, __ATOMIC_RELAXED);
  // Failing (tests), no ring can be had: not even one a thread that exited gave back to the pool meanwhile.
  obstrace_ring *ring = __atomic_load_n(&failing_ring_allocations, __ATOMIC_RELAXED) ? NULL : pool_take(capacity);
  if (ring == NULL) {
    // The pool is empty (not primed yet, or more threads began recording at once than it holds): made here.
    __atomic_add_fetch(&rings_made_on_program_threads, 1, __ATOMIC_RELAXED);
    ring = make_ring(capacity);
    if (ring == NULL) {
      // The program goes on; this thread's events are counted, not recorded: the stop says how many, on standard
      // error and in the footer.
      ring_failed_in = serial;
      return NULL;
    }
  }
  ring->os_thread_id = (int32_t)syscall(SYS_gettid);

  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    void *low = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0) {
      ring->stack_low = (uintptr_t)low;
      ring->stack_high = (uintptr_t)low + size;
    }
    pthread_attr_destroy(&attributes);
  }

  pthread_once(&exit_key_once, make_exit_key);
  pthread_mutex_lock(&registry_mutex);
  ring->thread_id = ++next_thread_id;
  ring->next = registry_head;
  registry_head = ring;
  pthread_mutex_unlock(&registry_mutex);
  pthread_setspecific(exit_key, ring);
  obstrace_thread_ring = ring;
  return ring;
}

bool obstrace_thread_has_ring(void) { return obstrace_thread_ring != NULL; }

bool obstrace_ring_make_room(obstrace_ring *ring, uint64_t head) {
  uint64_t half = (ring->mask + 1) / 2;
  for (unsigned attempt = 0;; attempt++) {
    // Acquire: pairs with the flusher's release store of tail in obstrace_ring_consume.
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    ring->cached_tail = tail;
    uint64_t used = head - tail;
    if (used < half) {
      ring->check_at = tail + half;
      return true;
    }
    if (used <= ring->mask) {
      // Half full: the flusher drains now, while this thread goes on; look again only when full.
      if (attempt == 0) obstrace_flusher_wake();
      ring->check_at = tail + ring->mask + 1;
      return true;
    }
    bool drop = __atomic_load_n(&obstrace_drop_when_full_flag, __ATOMIC_RELAXED) != 0;
    bool can_wait = __atomic_load_n(&flusher_running, __ATOMIC_ACQUIRE) && obstrace_is_enabled();
    if (drop || !can_wait) {
      __atomic_store_n(&ring->dropped, ring->dropped + 1, __ATOMIC_RELAXED);
      return false;
    }
    // Full, lossless: wake the flusher (again now and then, in case it was between drains), then wait for room.
    if (attempt % 64 == 0) obstrace_flusher_wake();
    if (attempt < 16) {
      sched_yield();
    } else {
      struct timespec pause = {0, 20000};
      nanosleep(&pause, NULL);
    }
  }
}

static const obstrace_deep_scope no_deep_scope = {0, NULL};

const obstrace_deep_scope *obstrace_deep_scope_at(const obstrace_ring *ring, uint32_t depth) {
  uint32_t index = depth - OBSTRACE_SCOPE_STACK_DEPTH - 1;
  return index < ring->deep_capacity ? &ring->deep_scopes[index] : &no_deep_scope;
}

/// The slot of level `depth` (past `OBSTRACE_SCOPE_STACK_DEPTH`) for a scope being opened there, the deep stack grown
/// (doubled: O(1) a scope, amortized) when it ends before it; NULL when memory for it cannot be had.
static obstrace_deep_scope *deep_slot_for_push(obstrace_ring *ring, uint32_t depth) {
  uint32_t index = depth - OBSTRACE_SCOPE_STACK_DEPTH - 1;
  if (index >= ring->deep_capacity) {
    uint32_t capacity = ring->deep_capacity == 0 ? OBSTRACE_SCOPE_STACK_DEPTH : ring->deep_capacity;
    while (capacity <= index) capacity *= 2;
    obstrace_deep_scope *grown = realloc(ring->deep_scopes, (size_t)capacity * sizeof(obstrace_deep_scope));
    if (grown == NULL) return NULL;
    memset(grown + ring->deep_capacity, 0, (size_t)(capacity - ring->deep_capacity) * sizeof(obstrace_deep_scope));
    ring->deep_scopes = grown;
    ring->deep_capacity = capacity;
  }
  return &ring->deep_scopes[index];
}

/// Sets Observation's tracking pointer inside ObsTrace's scope at level `depth` (1 to `scope_depth`).
static void set_tracking_at(obstrace_ring *ring, uint32_t depth, const void *tracking) {
  if (depth <= OBSTRACE_SCOPE_STACK_DEPTH) {
    ring->scope_tracking[depth - 1] = tracking;
    return;
  }
  uint32_t index = depth - OBSTRACE_SCOPE_STACK_DEPTH - 1;
  if (index < ring->deep_capacity) ring->deep_scopes[index].tracking = tracking;
}

static const void *current_tracking(void) {
  obstrace_tracking_getter getter = __atomic_load_n(&obstrace_observation_tracking, __ATOMIC_RELAXED);
  return getter == NULL ? NULL : getter();
}

const void *obstrace_current_tracking(void) { return current_tracking(); }

void obstrace_set_tracking_getter(const void *function) {
  __atomic_store_n(&obstrace_observation_tracking, (obstrace_tracking_getter)function, __ATOMIC_RELAXED);
}

void obstrace_set_tracking_setter(const void *function) {
  __atomic_store_n(&obstrace_observation_set_tracking, (obstrace_tracking_setter)function, __ATOMIC_RELAXED);
}

void obstrace_begin_own_tracking(void *list) {
  obstrace_tracking_setter setter = __atomic_load_n(&obstrace_observation_set_tracking, __ATOMIC_RELAXED);
  if (setter != NULL) setter(list);
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL || ring->scope_depth == 0) return;
  set_tracking_at(ring, ring->scope_depth, list);
}

void obstrace_end_own_tracking(void) {
  obstrace_tracking_setter setter = __atomic_load_n(&obstrace_observation_set_tracking, __ATOMIC_RELAXED);
  if (setter != NULL) setter(NULL);
}

/// Ends the innermost foreign scope: its end is recorded at the first event of the thread after it ended.
static void close_foreign(obstrace_ring *ring) {
  ring->foreign_count--;
  if (obstrace_is_enabled()) obstrace_emit(7 /* scopeEnd */, 0, 0, 0, ring->foreign_scope[ring->foreign_count], 0, 0);
}

/// Closes the foreign scopes that cannot still be running when Observation's tracking pointer is `tracking` and
/// ObsTrace's scope depth is `scope_depth`. Returns the index of the open foreign scope whose pointer is
/// `tracking`, or -1.
static int sync_foreign(obstrace_ring *ring, const void *tracking) {
  uint32_t depth = ring->scope_depth;
  // Begun inside one of ObsTrace's scopes that has ended since.
  while (ring->foreign_count > 0 && ring->foreign_depth[ring->foreign_count - 1] > depth) close_foreign(ring);
  if (tracking == NULL) {
    // No tracking at all on the thread: every foreign scope has ended.
    while (ring->foreign_count > 0) close_foreign(ring);
    return -1;
  }
  if (depth > 0 && obstrace_tracking_at(ring, depth) == tracking) {
    // ObsTrace's own scope is innermost: the foreign scopes begun inside it have ended.
    while (ring->foreign_count > 0 && ring->foreign_depth[ring->foreign_count - 1] >= depth) close_foreign(ring);
    return -1;
  }
  // Observation's access list lives in the frame of the tracking call, so an enclosing tracking's pointer is
  // higher on the (downward-growing) stack than a nested one's: a foreign scope whose pointer is below the current
  // one is not an enclosing one, hence has ended.
  while (ring->foreign_count > 0 &&
         (uintptr_t)ring->foreign_tracking[ring->foreign_count - 1] < (uintptr_t)tracking) {
    close_foreign(ring);
  }
  if (ring->foreign_count > 0 && ring->foreign_tracking[ring->foreign_count - 1] == tracking) {
    // The same address with an empty access list, after a read, is a new tracking call in a reused frame: every
    // read ObsTrace records is forwarded to the real registrar, which makes the list non-nil
    // (`Optional<_AccessList>`, one word, zero when nil).
    uint32_t top = ring->foreign_count - 1;
    if (!ring->foreign_read[top] || *(const void *const *)tracking != NULL) return (int)top;
    close_foreign(ring);
  }
  return -1;
}

uint32_t obstrace_foreign_scope_at(obstrace_ring *ring, const void *tracking, bool reading) {
  int index = sync_foreign(ring, tracking);
  if (index >= 0) {
    if (reading) ring->foreign_read[index] = 1;
    return ring->foreign_scope[index];
  }
  if (tracking == NULL) return 0;
  uint32_t depth = ring->scope_depth;
  if (depth > 0 && obstrace_tracking_at(ring, depth) == tracking) return 0;
  // Too deep to follow: the read goes to the innermost foreign scope rather than to none.
  if (ring->foreign_count == OBSTRACE_FOREIGN_STACK_DEPTH) return ring->foreign_scope[ring->foreign_count - 1];
  return OBSTRACE_NEW_FOREIGN_SCOPE;
}

void obstrace_sync_foreign(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL || ring->foreign_count == 0) return;
  sync_foreign(ring, current_tracking());
}

void obstrace_push_foreign(const void *tracking, uint32_t scope) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL || ring->foreign_count == OBSTRACE_FOREIGN_STACK_DEPTH) return;
  ring->foreign_tracking[ring->foreign_count] = tracking;
  ring->foreign_scope[ring->foreign_count] = scope;
  ring->foreign_depth[ring->foreign_count] = ring->scope_depth;
  ring->foreign_read[ring->foreign_count] = 0;
  ring->foreign_count++;
}

void obstrace_note_own_tracking(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL || ring->scope_depth == 0) return;
  set_tracking_at(ring, ring->scope_depth, current_tracking());
}

void obstrace_push_scope(uint32_t scope, const void *tracking) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) return;
  // A named scope runs under whatever tracking is in progress: reads that see it are the scope's. A tracking
  // scope replaces this with its own pointer (`obstrace_note_own_tracking`).
  if (__builtin_expect(ring->scope_depth < OBSTRACE_SCOPE_STACK_DEPTH, 1)) {
    ring->scope_stack[ring->scope_depth] = scope;
    ring->scope_tracking[ring->scope_depth] = tracking;
  } else {
    // Deeper than the inline stack (a recursive tracked render): the deep stack's slot. Without memory for it the
    // level holds no scope, as `obstrace_deep_scope_at` says.
    obstrace_deep_scope *slot = deep_slot_for_push(ring, ring->scope_depth + 1);
    if (slot != NULL) {
      slot->scope = scope;
      slot->tracking = tracking;
    }
  }
  ring->scope_depth++;
}

void obstrace_pop_scope(uint32_t scope) {
  (void)scope;
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring != NULL && ring->scope_depth > 0) {
    ring->scope_depth--;
    while (ring->foreign_count > 0 && ring->foreign_depth[ring->foreign_count - 1] > ring->scope_depth) {
      close_foreign(ring);
    }
  }
}

void obstrace_suppress_access(bool suppress) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) return;
  if (suppress) {
    ring->suppress_access++;
  } else if (ring->suppress_access > 0) {
    ring->suppress_access--;
  }
}

uint32_t obstrace_next_object_serial(void) {
  return __atomic_add_fetch(&next_object_serial, 1, __ATOMIC_RELAXED);
}

uint32_t obstrace_next_scope_serial(void) {
  return __atomic_add_fetch(&next_scope_serial, 1, __ATOMIC_RELAXED);
}

uint32_t obstrace_next_scope_serials(uint32_t count) {
  return __atomic_add_fetch(&next_scope_serial, count, __ATOMIC_RELAXED) - (count - 1);
}

void obstrace_configure(uint64_t ring_capacity, bool drop_when_full, uint32_t stack_level, uint32_t stack_depth,
                        uint32_t compare_mode) {
  __atomic_store_n(&obstrace_compare_mode_flag, compare_mode, __ATOMIC_RELAXED);
  if (stack_depth > OBSTRACE_MAX_STACK_DEPTH) stack_depth = OBSTRACE_MAX_STACK_DEPTH;
  __atomic_store_n(&obstrace_stack_depth_flag, stack_depth, __ATOMIC_RELAXED);
  uint64_t capacity = 64;
  while (capacity < ring_capacity && capacity < (1ull << 30)) capacity <<= 1;
  __atomic_store_n(&configured_capacity, capacity, __ATOMIC_RELAXED);
  __atomic_store_n(&obstrace_drop_when_full_flag, drop_when_full ? 1 : 0, __ATOMIC_RELAXED);
  __atomic_store_n(&obstrace_stack_level_flag, stack_level, __ATOMIC_RELAXED);
}

static __thread uintptr_t stack_low __attribute__((tls_model("initial-exec"))) = 0;

size_t obstrace_stack_left(void) {
  if (stack_low == 0) {
    pthread_attr_t attributes;
    void *address = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      pthread_attr_getstack(&attributes, &address, &size);
      pthread_attr_destroy(&attributes);
    }
    stack_low = address != NULL ? (uintptr_t)address : 1;
  }
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  return here > stack_low ? here - stack_low : 0;
}

struct stack_job {
  void (*body)(void *);
  void *context;
};

static void *run_stack_job(void *argument) {
  struct stack_job *job = argument;
  job->body(job->context);
  return NULL;
}

int obstrace_create_quiet_thread(pthread_t *thread, const pthread_attr_t *attributes, void *(*body)(void *),
                                 void *context) {
  sigset_t every_signal, caller_mask;
  sigfillset(&every_signal);
  pthread_sigmask(SIG_SETMASK, &every_signal, &caller_mask);
  int made = pthread_create(thread, attributes, body, context);
  pthread_sigmask(SIG_SETMASK, &caller_mask, NULL);
  return made;
}

bool obstrace_run_with_stack(void (*body)(void *), void *context, size_t size) {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return false;
  pthread_attr_setstacksize(&attributes, size);
  struct stack_job job = {body, context};
  pthread_t thread;
  // The helper takes none of the program's signals, as the flusher does not: it runs only the recorder's own work
  // (naming, libdw, a recording's start and stop, under the recorder's locks), never the program's code, and the
  // program does not know it exists. A signal the caller does not block then goes where it would untraced: to one of
  // the program's threads, the caller included (waiting below, inside the recorder, so that a handler's events there
  // are counted, not recorded). Inheriting the caller's mask instead let a process-directed signal run the program's
  // handler on this thread, which the untraced program does not have, while it held the recorder's locks that the
  // handler's model write then waited on.
  int made = obstrace_create_quiet_thread(&thread, &attributes, run_stack_job, &job);
  pthread_attr_destroy(&attributes);
  if (made != 0) return false;
  pthread_join(thread, NULL);
  return true;
}

static uint64_t forks_while_recording = 0;
static bool forked_child = false;
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
/// Set by the prepare handler: whether recording was on when this fork began (read by both sides after it).
static bool forking_while_recording = false;

void obstrace_set_enabled(bool enabled) {
  if (enabled) {
    // A new recording: threads that could not get a ring in the last one try again; the counts start over.
    __atomic_add_fetch(&recording_serial, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ringless_events, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&interrupted_events, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&forks_while_recording, 0, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&obstrace_enabled_flag, enabled ? 1 : 0, __ATOMIC_SEQ_CST);
}

static void fork_prepare(void) { forking_while_recording = obstrace_is_enabled(); }

static void fork_parent(void) {
  if (forking_while_recording) __atomic_add_fetch(&forks_while_recording, 1, __ATOMIC_RELAXED);
}

// Only async-signal-safe work here: plain stores. The child's one thread is the one that forked; the rings, the
// registry and the trace's file descriptor are copies of the parent's, and nothing in this process drains them.
static void fork_child(void) {
  if (!forking_while_recording) return;
  forked_child = true;
  __atomic_store_n(&flusher_running, false, __ATOMIC_RELAXED);
  __atomic_store_n(&obstrace_enabled_flag, 0, __ATOMIC_SEQ_CST);
  // A thread of the parent may have held these at the fork; the child's stop and flush never take them, but its
  // exiting threads' ring hand-over does.
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  registry_mutex = fresh;
  wake_mutex = fresh;
  pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
  wake_cond = fresh_cond;
}

static void install_fork_handlers(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

void obstrace_install_fork_handlers(void) { pthread_once(&fork_handlers_once, install_fork_handlers); }

bool obstrace_is_forked_child(void) { return forked_child; }

uint64_t obstrace_forks_while_recording(void) { return __atomic_load_n(&forks_while_recording, __ATOMIC_RELAXED); }

void obstrace_set_flusher_running(bool running) {
  pthread_mutex_lock(&registry_mutex);
  __atomic_store_n(&flusher_running, running, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&registry_mutex);
}

size_t obstrace_registry_snapshot(obstrace_ring **rings, size_t capacity) {
  pthread_mutex_lock(&registry_mutex);
  size_t count = 0;
  for (obstrace_ring *ring = registry_head; ring != NULL; ring = ring->next) {
    if (count < capacity) rings[count] = ring;
    count++;
  }
  pthread_mutex_unlock(&registry_mutex);
  return count;
}

uint64_t obstrace_total_dropped(void) {
  pthread_mutex_lock(&registry_mutex);
  uint64_t total = released_dropped;
  for (obstrace_ring *ring = registry_head; ring != NULL; ring = ring->next) {
    total += __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&registry_mutex);
  return total;
}

void obstrace_registry_release(obstrace_ring *ring) {
  pthread_mutex_lock(&registry_mutex);
  unlink_ring(ring);
  released_dropped += __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&registry_mutex);
  // A drained ring of the current capacity goes back to the pool, as new (its slots' pages stay touched).
  if (ring->mask + 1 == __atomic_load_n(&configured_capacity, __ATOMIC_RELAXED) &&
      obstrace_ring_pool_count() < obstrace_ring_pool_target()) {
    obstrace_record *slots = ring->slots;
    uint64_t mask = ring->mask;
    free(ring->deep_scopes);
    memset(ring, 0, sizeof(*ring));
    ring->slots = slots;
    ring->mask = mask;
    if (pool_put(ring)) return;
  }
  free_ring(ring);
}

size_t obstrace_registry_running(uint32_t *serials, size_t capacity, uint32_t except) {
  pthread_mutex_lock(&registry_mutex);
  size_t count = 0;
  for (obstrace_ring *ring = registry_head; ring != NULL; ring = ring->next) {
    // Acquire: pairs with the release store in thread_exited.
    if (__atomic_load_n(&ring->orphaned, __ATOMIC_ACQUIRE) != 0 || ring->thread_id == except) continue;
    if (count < capacity) serials[count] = ring->thread_id;
    count++;
  }
  pthread_mutex_unlock(&registry_mutex);
  return count;
}

uint32_t obstrace_current_thread_serial(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring == NULL ? 0 : ring->thread_id;
}

void obstrace_flusher_wait(uint32_t milliseconds) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += milliseconds / 1000;
  deadline.tv_nsec += (long)(milliseconds % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&wake_mutex);
  while (!wake_pending) {
    if (pthread_cond_timedwait(&wake_cond, &wake_mutex, &deadline) != 0) break;
  }
  wake_pending = false;
  pthread_mutex_unlock(&wake_mutex);
}

// A test's hold on the flusher (`obstrace_flusher_hold`): requested by the test, acknowledged by the flusher at the
// top of its loop, after which it drains nothing until released.
static uint32_t flusher_hold_requested = 0;
static uint32_t flusher_hold_acknowledged = 0;

bool obstrace_flusher_hold(bool hold) {
  // Release/acquire: pair with the flusher's loads and store in obstrace_flusher_is_held.
  __atomic_store_n(&flusher_hold_requested, hold ? 1 : 0, __ATOMIC_RELEASE);
  if (!hold) {
    obstrace_flusher_wake();
    return true;
  }
  for (int waited = 0; waited < 10000; waited++) {
    if (__atomic_load_n(&flusher_hold_acknowledged, __ATOMIC_ACQUIRE) != 0) return true;
    obstrace_flusher_wake();
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  __atomic_store_n(&flusher_hold_requested, 0, __ATOMIC_RELEASE);
  return false;
}

bool obstrace_flusher_is_held(void) {
  bool held = __atomic_load_n(&flusher_hold_requested, __ATOMIC_ACQUIRE) != 0;
  __atomic_store_n(&flusher_hold_acknowledged, held ? 1 : 0, __ATOMIC_RELEASE);
  return held;
}

void obstrace_flusher_wake(void) {
  pthread_mutex_lock(&wake_mutex);
  wake_pending = true;
  pthread_cond_signal(&wake_cond);
  pthread_mutex_unlock(&wake_mutex);
}

void obstrace_clock_sample(uint64_t *ticks, uint64_t *nanoseconds) {
  struct timespec ts;
  uint64_t before = obstrace_clock();
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t after = obstrace_clock();
  *ticks = before + (after - before) / 2;
  *nanoseconds = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t obstrace_wall_clock_nanoseconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/// The frame-pointer walk; with `hash`, also the FNV-1a hash of the frames it keeps (`obstrace_hash_frames`), in the
/// same pass.
///
/// A frame record is two words: the caller's frame pointer, then the return address. The walk starts at a record
/// inside [low, high) and aligned; from there each link must climb the stack by an aligned step of 8 bytes to 1 MiB
/// (a pointer that does not is corrupt, or the end), so every record it reads stays aligned and above `low`, and
/// only the top bound is checked again per frame. A write's stack is walked on every write (≈ 6–10 frames), so the
/// loop is kept to the checks that guard its reads.
static inline __attribute__((always_inline)) int walk_frames(const void *start, uintptr_t low, uintptr_t high,
                                                             uintptr_t *frames, int capacity, int skip,
                                                             uint64_t *hash) {
  uintptr_t address = (uintptr_t)start;
  int count = 0;
  uint64_t key = 1469598103934665603ull;
  if (address < low || (address & (sizeof(uintptr_t) - 1)) != 0) capacity = 0;
  while (count < capacity) {
    if (address + 2 * sizeof(uintptr_t) > high) break;
    const uintptr_t *frame = (const uintptr_t *)address;
    uintptr_t caller = frame[0];
    uintptr_t return_address = frame[1];
    if (return_address == 0) break;
    if (__builtin_expect(skip > 0, 0)) {
      skip--;
    } else {
      frames[count++] = return_address;
      key = (key ^ (uint64_t)return_address) * 1099511628211ull;
    }
    // Valid when the step is 8·k for 1 <= k <= 2^17 (1 MiB): rotating (step - 8) right by 3 moves any misaligned
    // bits to the top, so one compare tests the alignment, the climb and the bound (a step of 0 or down wraps).
    uintptr_t step = caller - address - sizeof(uintptr_t);
    uintptr_t rotated = (step >> 3) | (step << (8 * sizeof(uintptr_t) - 3));
    if (rotated >= (1u << 17)) break;
    address = caller;
  }
  if (hash != NULL) *hash = key | 1;
  return count;
}

int obstrace_walk_frames(const void *start, uintptr_t low, uintptr_t high, uintptr_t *frames, int capacity,
                         int skip) {
  return walk_frames(start, low, high, frames, capacity, skip, NULL);
}

int obstrace_capture_stack(uintptr_t *frames, int capacity, int skip) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL || ring->stack_high == 0) return 0;
  return obstrace_walk_frames(__builtin_frame_address(0), ring->stack_low, ring->stack_high, frames, capacity, skip);
}

/// `walk_frames` from `start` and the thread's stack cache: the stack's id when the cache has it, else 0, with the
/// frames' count and hash for the caller to intern (`obstrace_capture_stack_from`).
static inline __attribute__((always_inline)) uint32_t walk_cached(obstrace_ring *ring, const void *start,
                                                                   uintptr_t *frames, int capacity, int skip,
                                                                   int *count, uint64_t *hash) {
  uint64_t key = 0;
  int captured = walk_frames(start, ring->stack_low, ring->stack_high, frames, capacity, skip, &key);
  *count = captured;
  if (captured == 0) return 0;
  *hash = key;
  size_t index = (size_t)(key >> 7) & (OBSTRACE_STACK_CACHE_SIZE - 1);
  return ring->stack_hashes[index] == key ? ring->stack_ids[index] : 0;
}

uint32_t obstrace_capture_stack_from(uintptr_t record, uintptr_t *frames, int capacity, int *count, uint64_t *hash) {
  obstrace_ring *ring = obstrace_current_ring();
  *count = 0;
  if (ring == NULL || ring->stack_high == 0) return 0;
  return walk_cached(ring, (const void *)record, frames, capacity, 0, count, hash);
}

/// `walk_frames` with `skip` 1 and the hash, the walk of `obstrace_capture_stack_here` (every write's, by default): the
/// same checks frame by frame, with the skipped frame (the caller's own) passed before the loop and the frames stored
/// through a pointer, so that the loop holds only the checks that guard its reads. `high` is a thread's stack top.
static inline __attribute__((always_inline)) int walk_frames_skipping_one(uintptr_t address, uintptr_t low,
                                                                          uintptr_t high, uintptr_t *frames,
                                                                          int capacity, uint64_t *hash) {
  uint64_t key = 1469598103934665603ull;
  uintptr_t *out = frames;
  uintptr_t *const end = frames + (capacity > 0 ? capacity : 0);
  // A record may be read at `address` when it lies below the top: address + 2 words <= high.
  const uintptr_t top = high - 2 * sizeof(uintptr_t);
  if (capacity <= 0 || address < low || (address & (sizeof(uintptr_t) - 1)) != 0) goto done;
  if (address > top || ((const uintptr_t *)address)[1] == 0) goto done;
  {
    uintptr_t step = ((const uintptr_t *)address)[0] - address - sizeof(uintptr_t);
    if (((step >> 3) | (step << (8 * sizeof(uintptr_t) - 3))) >= (1u << 17)) goto done;
    address = ((const uintptr_t *)address)[0];
  }
  while (out < end) {
    if (address > top) break;
    const uintptr_t *frame = (const uintptr_t *)address;
    uintptr_t return_address = frame[1];
    if (return_address == 0) break;
    uintptr_t caller = frame[0];
    *out++ = return_address;
    key = (key ^ (uint64_t)return_address) * 1099511628211ull;
    // The one compare of walk_frames: (step - 8) rotated right by 3 is below 2^17 exactly when the step is 8·k,
    // 1 <= k <= 2^17.
    uintptr_t step = caller - address - sizeof(uintptr_t);
    if (((step >> 3) | (step << (8 * sizeof(uintptr_t) - 3))) >= (1u << 17)) break;
    address = caller;
  }
done:
  *hash = key | 1;
  return (int)(out - frames);
}

int obstrace_walk_frames_skipping_one(const void *start, uintptr_t low, uintptr_t high, uintptr_t *frames,
                                      int capacity, uint64_t *hash) {
  return walk_frames_skipping_one((uintptr_t)start, low, high, frames, capacity, hash);
}

uint32_t obstrace_capture_stack_here(int minimum_depth, int *count, uint64_t *hash) {
  obstrace_ring *ring = obstrace_current_ring();
  *count = 0;
  if (ring == NULL || ring->stack_high == 0) return 0;
  int depth = (int)obstrace_stack_depth();
  if (depth < minimum_depth) depth = minimum_depth;
  if (depth > OBSTRACE_MAX_STACK_DEPTH) depth = OBSTRACE_MAX_STACK_DEPTH;
  uint64_t key;
  int captured = walk_frames_skipping_one((uintptr_t)__builtin_frame_address(0), ring->stack_low, ring->stack_high,
                                          ring->captured_frames, depth, &key);
  *count = captured;
  if (captured == 0) return 0;
  *hash = key;
  size_t index = (size_t)(key >> 7) & (OBSTRACE_STACK_CACHE_SIZE - 1);
  return ring->stack_hashes[index] == key ? ring->stack_ids[index] : 0;
}

/// The frame record `level` records up the chain from `frame` (0: `frame` itself), each validated as `walk_frames`
/// validates one (inside the stack, aligned, a return address, each link an aligned climb of 8 bytes to 1 MiB); 0
/// when the chain does not reach it. Only the record wanted is kept: no frames are stored.
static inline __attribute__((always_inline)) uintptr_t record_at_level(uintptr_t low, uintptr_t high,
                                                                        const uintptr_t *frame, int level) {
  uintptr_t address = (uintptr_t)frame;
  if (address < low || (address & (sizeof(uintptr_t) - 1)) != 0) return 0;
  for (;; level--) {
    if (address + 2 * sizeof(uintptr_t) > high || ((const uintptr_t *)address)[1] == 0) return 0;
    if (level == 0) return address;
    uintptr_t caller = ((const uintptr_t *)address)[0];
    // The one compare of walk_frames: (step - 8) rotated right by 3 is below 2^17 exactly when the step is 8·k,
    // 1 <= k <= 2^17.
    uintptr_t step = caller - address - sizeof(uintptr_t);
    if (((step >> 3) | (step << (8 * sizeof(uintptr_t) - 3))) >= (1u << 17)) return 0;
    address = caller;
  }
}

__attribute__((noinline)) void obstrace_return_address_into(int level, uintptr_t *out) {
  obstrace_ring *ring = obstrace_current_ring();
  *out = 0;
  if (ring == NULL || ring->stack_high == 0 || level < 0 || level > 6) return;
  uintptr_t record = record_at_level(ring->stack_low, ring->stack_high, __builtin_frame_address(0), level);
  if (record != 0) *out = ((const uintptr_t *)record)[1];
}

__attribute__((noinline)) void obstrace_near_return_address_into(int level, uintptr_t *out) {
  *out = 0;
  if (level < 0 || level > 2) return;
  const uintptr_t *frame = __builtin_frame_address(0);
  uintptr_t record = record_at_level((uintptr_t)frame, (uintptr_t)frame + ((uintptr_t)1 << 21), frame, level);
  if (record != 0) *out = ((const uintptr_t *)record)[1];
}

__attribute__((noinline)) void obstrace_frame_record_into(int level, uintptr_t *out) {
  obstrace_ring *ring = obstrace_current_ring();
  *out = 0;
  if (ring == NULL || ring->stack_high == 0 || level < 0 || level > 6) return;
  *out = record_at_level(ring->stack_low, ring->stack_high, __builtin_frame_address(0), level);
}

// The Swift concurrency runtime's own entry points (exported by libswift_Concurrency, Swift's calling convention):
// the executor the calling thread runs a job of (a null identity: none, or the generic executor), the main actor's
// executor, the task running on the calling thread (null: none).
typedef struct {
  const void *identity;
  uintptr_t implementation;
} obstrace_executor_ref;
extern __attribute__((swiftcall)) obstrace_executor_ref swift_task_getCurrentExecutor(void);
extern __attribute__((swiftcall)) obstrace_executor_ref swift_task_getMainExecutor(void);
extern __attribute__((swiftcall)) void *swift_task_getCurrent(void);
/// The id of the task `job` is (the runtime's serial of it: never given to another task of the process).
extern __attribute__((swiftcall)) uint64_t swift_task_getJobTaskId(void *job);

static const void *main_executor_identity = NULL;
/// Whether the calling thread is the process's main thread: 0 not known yet, 1 yes, 2 no.
static __thread uint8_t is_main_thread = 0;

uint64_t obstrace_run_context(void) {
  const void *identity = swift_task_getCurrentExecutor().identity;
  if (identity != NULL) return (uint64_t)(uintptr_t)identity;
  if (is_main_thread == 0) is_main_thread = syscall(SYS_gettid) == getpid() ? 1 : 2;
  if (is_main_thread == 1) {
    // Code on the main thread runs on the main actor, as MainActor.assumeIsolated accepts it.
    const void *main = __atomic_load_n(&main_executor_identity, __ATOMIC_RELAXED);
    if (main == NULL) {
      main = swift_task_getMainExecutor().identity;
      __atomic_store_n(&main_executor_identity, main, __ATOMIC_RELAXED);
    }
    if (main != NULL) return (uint64_t)(uintptr_t)main;
  }
  void *task = swift_task_getCurrent();
  if (task != NULL) {
    // The task's id, not its address: a task begun after another ended is often allocated where it was, and would
    // continue the dead task's fired instance (tryout15's J12). Tagged 3 in the low bits (ids are far below 2^61);
    // an address (aligned) tagged 1 if the runtime ever gave no id.
    uint64_t id = swift_task_getJobTaskId(task);
    return id != 0 ? (id << 2) | 3 : (uint64_t)(uintptr_t)task | 1;
  }
  uint32_t thread = obstrace_current_thread_id();
  return thread == 0 ? 0 : (uint64_t)thread | (UINT64_C(1) << 63);
}
