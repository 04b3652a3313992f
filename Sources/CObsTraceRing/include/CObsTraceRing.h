// The recording hot path: one single-producer/single-consumer ring of fixed-size records per thread.
//
// A producer (any thread that records) finds its ring through a `__thread` pointer, stores one record and
// publishes it with a release store of `head`. The one consumer, the flusher, loads `head` with acquire,
// reads the records, and hands the slots back with a release store of `tail`, which the producer loads with
// acquire when it believes the ring is full. Nothing on this path locks, allocates or touches a Swift object.
//
// Pairings (name them where they are used):
//   producer: store head (release)  ──▶ flusher: load head (acquire)   — the record's bytes are visible
//   flusher:  store tail (release)  ──▶ producer: load tail (acquire)  — the slots may be reused
#ifndef COBSTRACE_RING_H
#define COBSTRACE_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// One recorded event: 32 bytes, the unit of every ring. The meaning of the fields depends on `kind`
/// (see docs/trace-format.md, "Event kinds").
typedef struct obstrace_record {
  uint64_t time;    ///< `obstrace_clock()` ticks; converted to nanoseconds by the flusher
  uint8_t kind;     ///< an `ObsTraceEventKind` raw value
  uint8_t flags;    ///< kind-specific bits
  uint16_t depth;   ///< how many of ObsTrace's tracking scopes were open on the thread
  uint32_t object;  ///< object serial (never an address), or 0
  uint32_t key;     ///< key path id, label id or type id, by kind
  uint32_t scope;   ///< scope id, or 0
  uint32_t aux;     ///< type id of `object`, or a kind-specific value
  uint32_t stack;   ///< interned call-stack id, or 0
} obstrace_record;

#define OBSTRACE_SCOPE_STACK_DEPTH 64
#define OBSTRACE_POINTER_CACHE_SIZE 256
#define OBSTRACE_STACK_CACHE_SIZE 128
#define OBSTRACE_MAX_STACK_DEPTH 64
#define OBSTRACE_FOREIGN_STACK_DEPTH 16
/// Rings the flusher keeps prepared for threads that have not recorded yet (`obstrace_ring_pool_fill`).
#define OBSTRACE_RING_POOL_SLOTS 4
/// ... and at most this many bytes of them, but at least one ring (four default rings of 2 MiB).
#define OBSTRACE_RING_POOL_BYTES (8u << 20)
/// What `obstrace_foreign_scope_at` returns when a read is inside tracking ObsTrace has not seen yet.
#define OBSTRACE_NEW_FOREIGN_SCOPE UINT32_MAX
/// A read takes its thread's previous event time unless this many events were stored since the clock was last
/// read (docs/trace-format.md, "Choices": what the timeline's order then promises).
#define OBSTRACE_UNTIMED_READS 32
/// Writes through `_modify` whose old bits a thread can hold at once (they nest when a change handler writes).
#define OBSTRACE_SNAPSHOT_SLOTS 8
/// The largest trivially copyable member compared bit for bit; a larger one is not compared.
#define OBSTRACE_SNAPSHOT_BYTES 64
/// Property ids whose stored field is known (`obstrace_property_fields`); a later id is not compared.
#define OBSTRACE_MAX_FIELD_PROPERTIES 65536

/// The bits of a trivially copyable member before a `_modify`, kept until its didSet compares them.
typedef struct obstrace_snapshot {
  uint32_t object;  ///< the registrar's serial
  uint32_t key;     ///< the property id
  uint32_t size;
  uint32_t reserved;
  unsigned char bytes[OBSTRACE_SNAPSHOT_BYTES];
} obstrace_snapshot;

/// One of ObsTrace's scopes open deeper than a ring's inline stack (`OBSTRACE_SCOPE_STACK_DEPTH` levels): its id and
/// Observation's tracking pointer inside it, as `scope_stack` and `scope_tracking` hold them for the levels above.
typedef struct obstrace_deep_scope {
  uint32_t scope;
  const void *tracking;
} obstrace_deep_scope;

/// A thread's ring and the little per-thread state the Swift layer keeps beside it. Allocated once per thread
/// (cache-line aligned), handed to the flusher when the thread exits.
typedef struct obstrace_ring {
  // ── The producer's cache lines: written only by the owning thread. ──
  uint64_t head;         ///< next slot to write; stored (release) by the producer, loaded (acquire) by the flusher
  uint64_t cached_tail;  ///< the producer's last view of `tail`
  uint64_t check_at;     ///< the head at which the producer next looks at `tail` (half full, then full)
  uint64_t dropped;      ///< events dropped because the ring was full (drop mode); relaxed, read by the flusher
  uint64_t mask;         ///< capacity - 1 (capacity is a power of two)
  obstrace_record *slots;
  uint32_t scope_depth;
  uint32_t suppress_access;  ///< > 0 while ObsTrace itself reads a property (the unchanged-value check)
  uint32_t writing_object;   ///< the willSet in progress on this thread, for `fired` events
  uint32_t writing_key;
  uint32_t untimed_run;      ///< events stored since the last clock read (reads skip the clock until the limit)
  uint32_t reserved_producer;
  uint32_t snapshot_count;  ///< slots of `snapshots` in use, the latest last
  obstrace_snapshot snapshots[OBSTRACE_SNAPSHOT_SLOTS];
  uint32_t scope_stack[OBSTRACE_SCOPE_STACK_DEPTH];
  /// Observation's tracking pointer (`_swift_observation_tls_get()`) inside each of ObsTrace's open scopes: a read
  /// that sees this value is the scope's own; any other non-null value is tracking ObsTrace does not own.
  const void *scope_tracking[OBSTRACE_SCOPE_STACK_DEPTH];
  /// The scopes open deeper than that (level OBSTRACE_SCOPE_STACK_DEPTH + 1 + i at index i): allocated the first
  /// time the thread nests so deep, doubled as it nests deeper (as deep as its stack lets it), freed with the ring.
  obstrace_deep_scope *deep_scopes;
  uint32_t deep_capacity;
  /// Foreign (untraced) scopes open on this thread, outermost first: Observation's tracking pointer, the scope id
  /// ObsTrace gave it, and `scope_depth` when it was first seen. See docs/analysis.md, "Untraced tracking".
  const void *foreign_tracking[OBSTRACE_FOREIGN_STACK_DEPTH];
  uint32_t foreign_scope[OBSTRACE_FOREIGN_STACK_DEPTH];
  uint32_t foreign_depth[OBSTRACE_FOREIGN_STACK_DEPTH];
  uint8_t foreign_read[OBSTRACE_FOREIGN_STACK_DEPTH];  ///< the foreign scope has recorded a read
  uint32_t foreign_count;
  uintptr_t stack_low;   ///< the thread's stack bounds, for validating frame pointers
  uintptr_t stack_high;
  const void *cache_pointers[OBSTRACE_POINTER_CACHE_SIZE];  ///< per-thread intern cache: pointer → id
  uint32_t cache_ids[OBSTRACE_POINTER_CACHE_SIZE];
  uint64_t stack_hashes[OBSTRACE_STACK_CACHE_SIZE];  ///< per-thread intern cache: stack hash → stack id
  uint32_t stack_ids[OBSTRACE_STACK_CACHE_SIZE];
  /// The frames of the thread's last `obstrace_capture_stack_here`, for the caller to intern on a cache miss.
  uintptr_t captured_frames[OBSTRACE_MAX_STACK_DEPTH];

  char producer_padding[64];  // keeps the flusher's line off the producer's

  // ── The flusher's cache line. ──
  uint64_t tail;  ///< stored (release) by the flusher, loaded (acquire) by the producer
  uint64_t flushed_dropped;                    ///< `dropped` as of the last chunk (flusher only)
  uint64_t chunk_sequence;                     ///< chunks written for this thread (flusher only)

  char consumer_padding[64];

  // ── Shared, rarely written. ──
  uint32_t thread_id;  ///< small serial, never reused in a process
  int32_t os_thread_id;
  uint32_t orphaned;  ///< set (release) when the thread exits; the flusher frees the ring once drained
  uint32_t reserved;
  struct obstrace_ring *next;  ///< the registry's list, under its mutex
} obstrace_ring;

/// Process-wide switches, read on every event with relaxed loads.
extern uint32_t obstrace_enabled_flag;
extern uint32_t obstrace_drop_when_full_flag;
extern uint32_t obstrace_stack_level_flag;
extern uint32_t obstrace_stack_depth_flag;
/// How a write through `_modify` is compared with the value before it: 0 off, 1 trivial (the bits of a trivially
/// copyable member), 2 equatable (any Equatable member, with `==`). `RecordingOptions.comparison`.
extern uint32_t obstrace_compare_mode_flag;
/// Property id → where its stored field is in the object, packed (offset << 8 | size, bit 7 set while the getter's
/// origin is not settled: `StoredField.originPending`); 0 when not looked for yet, UINT32_MAX when not found.
/// Written by the interner at the property's first compared write or by the flusher as it defines the property (two
/// threads may both look; the flusher's answer is the whole one); read with relaxed loads.
extern uint32_t obstrace_property_fields[OBSTRACE_MAX_FIELD_PROPERTIES];
/// Per property id: whether its member type is Equatable, 0 not asked yet, 1 no, 2 yes (`Interner.memberIsEquatable`,
/// asked only under `WriteComparison.equatable`); a later id is answered by the interner's table.
extern uint8_t obstrace_property_equatable[OBSTRACE_MAX_FIELD_PROPERTIES];
/// Observation's `_swift_observation_tls_get` (a local symbol of libswiftObservation.so, found at recording start by
/// `ObservationRuntime`), or NULL when it was not found: it returns the access list of the tracking in progress on
/// the calling thread, NULL outside tracking. Written before recording is enabled; read relaxed.
typedef const void *(*obstrace_tracking_getter)(void);
extern obstrace_tracking_getter obstrace_observation_tracking;
/// Observation's `_swift_observation_tls_set` (a local symbol found beside the getter), or NULL: sets the access list
/// of the tracking in progress on the calling thread, as `withObservationTracking` does around its closure. ObsTrace
/// calls it only for a scope of its own begun outside any tracking (`obstrace_begin_own_tracking`).
typedef void (*obstrace_tracking_setter)(const void *);
extern obstrace_tracking_setter obstrace_observation_set_tracking;
/// Initial-exec TLS: a single %fs-relative load, no __tls_get_addr call (ObsTrace is linked into the executable,
/// never dlopen'ed).
extern __thread obstrace_ring *obstrace_thread_ring __attribute__((tls_model("initial-exec")));

/// Whether the calling thread is inside the recorder: set around the recorder's own work on a program's thread (a
/// lock, an allocation, a store into the thread's ring or its per-thread state), never around the program's code
/// (its getters, `==`, observers, change handlers). The recorder is not re-entrant on a thread: an event offered
/// while this is set can only come from a signal handler that interrupted that work, and is counted
/// (`obstrace_interrupted_events`), not recorded, so that the handler neither waits for a lock its own thread holds
/// nor stores into the middle of its thread's store (tryout16's P1 and P3). Initial-exec TLS, as the ring pointer:
/// one %fs-relative load. Written only by its own thread (and by a handler on it, which leaves it as it found it).
extern __thread uint32_t obstrace_in_recorder __attribute__((tls_model("initial-exec")));
/// Counts an event that met its thread inside the recorder (cold; async-signal-safe: one lock-free atomic add).
void obstrace_note_interrupted_event(void);
/// Events offered this recording by signal handlers that interrupted the recorder on their thread: counted, not
/// recorded (the footer's last field).
uint64_t obstrace_interrupted_events(void);

/// Enters the recorder on this thread for an event: false, with the event counted, when the thread is inside it
/// already (a signal handler interrupted it); the caller then records nothing and leaves the program's own work (the
/// real registrar) as it is. On true the caller must `obstrace_leave_recorder()` before it runs any of the program's
/// code and when it is done. The compiler keeps the section's loads and stores between the two (signal fences).
static inline __attribute__((always_inline)) bool obstrace_enter_recorder(void) {
  if (__builtin_expect(__atomic_load_n(&obstrace_in_recorder, __ATOMIC_RELAXED) != 0, 0)) {
    obstrace_note_interrupted_event();
    return false;
  }
  __atomic_store_n(&obstrace_in_recorder, 1, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return true;
}

/// Enters the recorder again in a flow that left it to run the program's code (`obstrace_enter_recorder` succeeded
/// earlier in the same event, so the thread cannot be inside it): no check, no count.
static inline __attribute__((always_inline)) void obstrace_reenter_recorder(void) {
  __atomic_store_n(&obstrace_in_recorder, 1, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/// Leaves the recorder (see `obstrace_enter_recorder`).
static inline __attribute__((always_inline)) void obstrace_leave_recorder(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&obstrace_in_recorder, 0, __ATOMIC_RELAXED);
}

/// Whether the calling thread is inside the recorder now (tests).
static inline bool obstrace_is_in_recorder(void) { return __atomic_load_n(&obstrace_in_recorder, __ATOMIC_RELAXED) != 0; }

/// The slow half of `obstrace_current_ring`: allocates and registers this thread's ring.
obstrace_ring *obstrace_ring_attach(void);
/// Tests: while `fail` is true every ring allocation fails, as when memory runs out, and no thread takes a ring from
/// the pool.
void obstrace_fail_ring_allocations(bool fail);
/// Counts an event offered on a thread that has no ring because one could not be allocated (cold).
void obstrace_note_ringless_event(void);
/// Events offered this recording on threads that could not get a ring (the footer's last field).
uint64_t obstrace_ringless_events(void);
/// Whether the calling thread has a ring (without attaching one): a program that is not recording must never
/// give a thread one (tests check it).
bool obstrace_thread_has_ring(void);
/// The slow half of `obstrace_emit`, taken when `head` reaches `check_at`: at half full it wakes the flusher (so that
/// it drains while the thread goes on) and moves `check_at` to full; when full it waits for the flusher
/// (lossless) or counts a drop.
bool obstrace_ring_make_room(obstrace_ring *ring, uint64_t head);

/// The clock of the hot path: the TSC on x86-64 (≈ 10 ns here), CLOCK_MONOTONIC elsewhere.
static inline uint64_t obstrace_clock(void) {
#if defined(__x86_64__)
  return __rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline bool obstrace_is_enabled(void) {
  return __atomic_load_n(&obstrace_enabled_flag, __ATOMIC_RELAXED) != 0;
}

static inline uint32_t obstrace_stack_level(void) {
  return __atomic_load_n(&obstrace_stack_level_flag, __ATOMIC_RELAXED);
}

static inline uint32_t obstrace_compare_mode(void) {
  return __atomic_load_n(&obstrace_compare_mode_flag, __ATOMIC_RELAXED);
}

/// The stored field of property `key`, packed (offset << 8 | size), 0 when not looked for yet, UINT32_MAX when
/// not found (and for ids beyond the table).
static inline uint32_t obstrace_property_field(uint32_t key) {
  if (key >= OBSTRACE_MAX_FIELD_PROPERTIES) return UINT32_MAX;
  return __atomic_load_n(&obstrace_property_fields[key], __ATOMIC_RELAXED);
}

static inline void obstrace_set_property_field(uint32_t key, uint32_t packed) {
  if (key < OBSTRACE_MAX_FIELD_PROPERTIES) __atomic_store_n(&obstrace_property_fields[key], packed, __ATOMIC_RELAXED);
}

/// Stores `packed` for property `key` unless an answer is there already: returns what the table then holds (a
/// program's thread's answer, which leaves the getter's origin to the flusher, never replaces the flusher's).
static inline uint32_t obstrace_set_property_field_if_unset(uint32_t key, uint32_t packed) {
  if (key >= OBSTRACE_MAX_FIELD_PROPERTIES) return packed;
  uint32_t expected = 0;
  if (__atomic_compare_exchange_n(&obstrace_property_fields[key], &expected, packed, false, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED))
    return packed;
  return expected;
}

/// didSets a program's thread marked as compared with a field whose getter's origin was not settled yet
/// (`RegistrarExtent.originPendingFlag`), not yet settled by the flusher. A thread counts one up before it records
/// the didSet (so before the ring's release of it); the flusher, which reads a ring's records after its acquire of
/// them, counts one down per didSet it settles: while none is outstanding, it looks at no didSet's flags.
extern uint64_t obstrace_origin_marks;

static inline void obstrace_note_origin_mark(void) { __atomic_fetch_add(&obstrace_origin_marks, 1, __ATOMIC_RELAXED); }

static inline uint64_t obstrace_origin_marks_outstanding(void) {
  return __atomic_load_n(&obstrace_origin_marks, __ATOMIC_RELAXED);
}

static inline void obstrace_settle_origin_mark(void) { __atomic_fetch_sub(&obstrace_origin_marks, 1, __ATOMIC_RELAXED); }

static inline uint8_t obstrace_property_equatable_state(uint32_t key) {
  if (key >= OBSTRACE_MAX_FIELD_PROPERTIES) return 0;
  return __atomic_load_n(&obstrace_property_equatable[key], __ATOMIC_RELAXED);
}

static inline void obstrace_set_property_equatable(uint32_t key, uint8_t state) {
  if (key < OBSTRACE_MAX_FIELD_PROPERTIES) __atomic_store_n(&obstrace_property_equatable[key], state, __ATOMIC_RELAXED);
}

static inline uint32_t obstrace_stack_depth(void) {
  return __atomic_load_n(&obstrace_stack_depth_flag, __ATOMIC_RELAXED);
}

static inline obstrace_ring *obstrace_current_ring(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (__builtin_expect(ring == NULL, 0)) ring = obstrace_ring_attach();
  return ring;
}

/// Stores one record in the calling thread's ring: the clock read (or, untimed, the previous record's time)
/// and the fields, then publishes it. Returns false only when the event was dropped. `timed` is false for events
/// that may take their thread's previous time: a didSet, a scope's installation, a read (until
/// OBSTRACE_UNTIMED_READS events have passed without a clock read).
static inline __attribute__((always_inline)) bool obstrace_store_in(obstrace_ring *ring, bool timed, uint8_t kind,
                                                                     uint8_t flags, uint32_t object, uint32_t key,
                                                                     uint32_t scope, uint32_t aux, uint32_t stack) {
  uint64_t head = ring->head;  // only this thread writes head
  if (__builtin_expect(head >= ring->check_at, 0)) {
    if (!obstrace_ring_make_room(ring, head)) return false;
  }
  obstrace_record *slot = &ring->slots[head & ring->mask];
  // Untimed: the previous slot is the flusher's to read, never to write, so reading its time is safe.
  if (timed || head == 0) {
    slot->time = obstrace_clock();
    ring->untimed_run = 0;
  } else {
    slot->time = ring->slots[(head - 1) & ring->mask].time;
    ring->untimed_run++;
  }
  slot->kind = kind;
  slot->flags = flags;
  slot->depth = (uint16_t)ring->scope_depth;
  slot->object = object;
  slot->key = key;
  slot->scope = scope;
  slot->aux = aux;
  slot->stack = stack;
  // Release: pairs with the flusher's acquire load of head in obstrace_ring_readable.
  __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
  return true;
}

/// `obstrace_store_in` on the calling thread's ring (given one if it has none yet).
static inline __attribute__((always_inline)) bool obstrace_store(bool timed, uint8_t kind, uint8_t flags,
                                                                  uint32_t object, uint32_t key, uint32_t scope,
                                                                  uint32_t aux, uint32_t stack) {
  obstrace_ring *ring = obstrace_current_ring();
  if (__builtin_expect(ring == NULL, 0)) {
    obstrace_note_ringless_event();
    return false;
  }
  return obstrace_store_in(ring, timed, kind, flags, object, key, scope, aux, stack);
}

/// Records one event on the calling thread's ring. Returns false only when the event was dropped.
static inline bool obstrace_emit(uint8_t kind, uint8_t flags, uint32_t object, uint32_t key, uint32_t scope,
                                 uint32_t aux, uint32_t stack) {
  return obstrace_store(true, kind, flags, object, key, scope, aux, stack);
}

/// The out-of-line half of `obstrace_access_scope`: keeps the thread's foreign scopes in step with Observation's
/// tracking pointer `tracking` (closing those that must have ended) and returns the foreign scope the read is in,
/// 0 when the read is ObsTrace's own or outside tracking, `OBSTRACE_NEW_FOREIGN_SCOPE` when it is inside tracking
/// not seen before (the caller then begins an untraced scope with `obstrace_push_foreign` and asks again).
uint32_t obstrace_foreign_scope_at(obstrace_ring *ring, const void *tracking, bool reading);
/// Closes the foreign scopes that must have ended, given Observation's tracking pointer now (a write, a scope of
/// ObsTrace's beginning or ending: events after which a read would come too late to end them).
void obstrace_sync_foreign(void);
/// Records that an untraced scope `scope` began for Observation's tracking pointer `tracking`.
void obstrace_push_foreign(const void *tracking, uint32_t scope);
/// Records, inside one of ObsTrace's own tracking scopes, Observation's tracking pointer: reads that see it are
/// the scope's own.
void obstrace_note_own_tracking(void);
/// Sets Observation's getter (`obstrace_observation_tracking`); NULL turns detection off.
void obstrace_set_tracking_getter(const void *function);
/// Sets Observation's setter (`obstrace_observation_set_tracking`); NULL: ObsTrace never sets the tracking itself.
void obstrace_set_tracking_setter(const void *function);
/// Whether ObsTrace can run a scope's tracking itself: both of Observation's functions were found (without the
/// getter it could not tell that no tracking is in progress).
static inline bool obstrace_can_own_tracking(void) {
  return __atomic_load_n(&obstrace_observation_tracking, __ATOMIC_RELAXED) != NULL &&
         __atomic_load_n(&obstrace_observation_set_tracking, __ATOMIC_RELAXED) != NULL;
}
/// Makes `list` (the address of an empty `ObservationTracking._AccessList?`) the tracking in progress on this thread,
/// as `withObservationTracking` does, and the tracking of ObsTrace's innermost scope (reads that see it are the
/// scope's own). Only when no tracking is in progress: the caller has checked (`obstrace_current_tracking()`).
void obstrace_begin_own_tracking(void *list);
/// Ends the tracking begun by `obstrace_begin_own_tracking`: none is in progress on the thread again.
void obstrace_end_own_tracking(void);
/// Observation's tracking pointer on this thread now (NULL outside tracking, or when the getter is unknown).
const void *obstrace_current_tracking(void);

/// The slot of level `depth` (past `OBSTRACE_SCOPE_STACK_DEPTH`) of ObsTrace's scope stack on `ring`'s thread; a
/// slot holding no scope (0) and no tracking when the level has none, because memory for it could not be had.
const obstrace_deep_scope *obstrace_deep_scope_at(const obstrace_ring *ring, uint32_t depth);

/// ObsTrace's innermost scope open on `ring`'s thread, or 0.
static inline uint32_t obstrace_innermost_of(const obstrace_ring *ring) {
  uint32_t depth = ring->scope_depth;
  if (__builtin_expect(depth <= OBSTRACE_SCOPE_STACK_DEPTH, 1)) return depth == 0 ? 0 : ring->scope_stack[depth - 1];
  return obstrace_deep_scope_at(ring, depth)->scope;
}

/// Observation's tracking pointer inside ObsTrace's scope at level `depth` (1 to `scope_depth`) on `ring`'s thread.
static inline const void *obstrace_tracking_at(const obstrace_ring *ring, uint32_t depth) {
  if (__builtin_expect(depth <= OBSTRACE_SCOPE_STACK_DEPTH, 1)) return ring->scope_tracking[depth - 1];
  return obstrace_deep_scope_at(ring, depth)->tracking;
}

/// The scope a read on this thread belongs to: the innermost of ObsTrace's scopes, or the foreign scope the read is
/// inside (see `obstrace_foreign_scope_at`). One indirect call to Observation's getter when it was found; the
/// out-of-line half runs only when foreign tracking is, or was just, open on the thread.
/// `*untracked` is set when Observation's getter was found and said that no tracking is in progress on the thread.
static inline __attribute__((always_inline)) uint32_t obstrace_access_scope_noting(obstrace_ring *ring,
                                                                                   bool *untracked) {
  uint32_t scope = obstrace_innermost_of(ring);
  obstrace_tracking_getter getter = __atomic_load_n(&obstrace_observation_tracking, __ATOMIC_RELAXED);
  *untracked = false;
  if (getter == NULL) return scope;
  const void *tracking = getter();
  *untracked = tracking == NULL;
  if (__builtin_expect(tracking == NULL && ring->foreign_count == 0, 1)) return scope;
  uint32_t depth = ring->scope_depth;
  uint32_t count = ring->foreign_count;
  if (count == 0) {
    if (depth > 0 && obstrace_tracking_at(ring, depth) == tracking) {
      return scope;  // ObsTrace's own tracking
    }
  } else if (ring->foreign_tracking[count - 1] == tracking && ring->foreign_depth[count - 1] == depth &&
             ring->foreign_read[count - 1] && *(const void *const *)tracking != NULL) {
    return ring->foreign_scope[count - 1];  // the next read of the foreign scope in progress (see sync_foreign)
  }
  uint32_t foreign = obstrace_foreign_scope_at(ring, tracking, true);
  return foreign != 0 ? foreign : scope;
}

static inline __attribute__((always_inline)) uint32_t obstrace_access_scope(obstrace_ring *ring) {
  bool untracked;
  return obstrace_access_scope_noting(ring, &untracked);
}

/// Records an access with one TLS lookup: the scope it belongs to (`obstrace_access_scope`), and whether the read
/// is inside this property's own willSet window (stale). Returns 0 when recorded, 1 when the caller must not
/// forward the access (ObsTrace's own silent read), 2 when the read is stale and the caller should record it with
/// a stack (`obstrace_emit_access_with_stack`), 3 when it is inside tracking ObsTrace has not seen yet (the caller
/// begins an untraced scope and calls again).
static inline int obstrace_emit_access(uint32_t object, uint32_t key, uint32_t type) {
  obstrace_ring *ring = obstrace_current_ring();
  if (__builtin_expect(ring == NULL, 0)) {
    obstrace_note_ringless_event();
    return 0;
  }
  if (__builtin_expect(ring->suppress_access != 0, 0)) return 1;
  uint32_t scope = obstrace_access_scope(ring);
  if (__builtin_expect(scope == OBSTRACE_NEW_FOREIGN_SCOPE, 0)) return 3;
  uint8_t flags = scope != 0 ? 1 : 0;
  if (__builtin_expect(ring->writing_object == object && ring->writing_key == key, 0)) {
    if (__atomic_load_n(&obstrace_stack_level_flag, __ATOMIC_RELAXED) != 0) return 2;
    flags |= 2;
  }
  // A read skips the clock: it takes the time of its thread's previous event, unless that is too far back.
  obstrace_store_in(ring, ring->untimed_run >= OBSTRACE_UNTIMED_READS, 1, flags, object, key, scope, type, 0);
  return 0;
}

/// What `obstrace_record_read` did: recorded the read, or told the caller not to forward it (ObsTrace's own silent
/// read), or recorded nothing and left it to the general path (`obstrace_emit_access` and what its results ask), or
/// recorded a read made outside any tracking: Observation's tracking pointer was NULL, so the real registrar's
/// `access` would do nothing (it reads that same pointer first and returns when it is NULL), and the caller need
/// not forward it.
#define OBSTRACE_READ_RECORDED 0
#define OBSTRACE_READ_SUPPRESSED 1
#define OBSTRACE_READ_NOT_RECORDED 2
#define OBSTRACE_READ_RECORDED_UNTRACKED 3

/// The whole of a common read in one inlined call and one TLS load: the key path's id from the thread's intern cache
/// (`key_path`: the key path object's address, the cache's key), the object from its registrar's `identity` (serial
/// << 32 | type id, 0 while unbound), then what `obstrace_emit_access` does. Anything uncommon (no ring yet, the key
/// path not cached on this thread, an unbound registrar, stacks on every event, a stale read, tracking ObsTrace has
/// not seen) records nothing and returns `OBSTRACE_READ_NOT_RECORDED`, for the general path to record it.
static inline __attribute__((always_inline)) int obstrace_record_read(const void *key_path, uint64_t identity) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (__builtin_expect(ring == NULL || identity == 0, 0)) return OBSTRACE_READ_NOT_RECORDED;
  size_t index = ((uintptr_t)key_path >> 4) & (OBSTRACE_POINTER_CACHE_SIZE - 1);
  if (__builtin_expect(ring->cache_pointers[index] != key_path, 0)) return OBSTRACE_READ_NOT_RECORDED;
  if (__builtin_expect(ring->suppress_access != 0, 0)) return OBSTRACE_READ_SUPPRESSED;
  if (__builtin_expect(__atomic_load_n(&obstrace_stack_level_flag, __ATOMIC_RELAXED) >= 2, 0)) {
    return OBSTRACE_READ_NOT_RECORDED;
  }
  uint32_t key = ring->cache_ids[index];
  uint32_t object = (uint32_t)(identity >> 32);
  uint32_t type = (uint32_t)identity;
  if (__builtin_expect(ring->writing_object == object && ring->writing_key == key, 0)) {
    return OBSTRACE_READ_NOT_RECORDED;  // inside its own willSet window (stale): the general path decides
  }
  bool untracked;
  uint32_t scope = obstrace_access_scope_noting(ring, &untracked);
  if (__builtin_expect(scope == OBSTRACE_NEW_FOREIGN_SCOPE, 0)) return OBSTRACE_READ_NOT_RECORDED;
  // A read skips the clock: it takes the time of its thread's previous event, unless that is too far back.
  obstrace_store_in(ring, ring->untimed_run >= OBSTRACE_UNTIMED_READS, 1, scope != 0 ? 1 : 0, object, key, scope,
                    type, 0);
  return untracked ? OBSTRACE_READ_RECORDED_UNTRACKED : OBSTRACE_READ_RECORDED;
}

/// `obstrace_emit_access` with the stack the caller captured (a stale read, or every event at level `all`).
/// Returns 3 when the read is inside tracking ObsTrace has not seen yet (nothing recorded; begin an untraced scope
/// and call again), else 0.
static inline int obstrace_emit_access_with_stack(uint32_t object, uint32_t key, uint32_t type, uint32_t stack) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) {
    obstrace_note_ringless_event();
    return 0;
  }
  uint32_t scope = obstrace_access_scope(ring);
  if (scope == OBSTRACE_NEW_FOREIGN_SCOPE) return 3;
  uint8_t flags = scope != 0 ? 1 : 0;
  if (ring->writing_object == object && ring->writing_key == key) flags |= 2;
  obstrace_emit(1, flags, object, key, scope, type, stack);
  return 0;
}

/// `obstrace_emit` without a clock read: the event takes the time of the thread's previous event. For events
/// that follow another at once (a didSet after its willSet's observers, a scope's installation after its end):
/// the clock is most of an event's cost on a virtual machine.
static inline bool obstrace_emit_untimed(uint8_t kind, uint8_t flags, uint32_t object, uint32_t key, uint32_t scope,
                                         uint32_t aux, uint32_t stack) {
  return obstrace_store(false, kind, flags, object, key, scope, aux, stack);
}

// ── Per-thread state used by the Swift layer (owner thread only, no atomics needed). ──

static inline uint32_t obstrace_innermost_scope(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring == NULL ? 0 : obstrace_innermost_of(ring);
}

/// The innermost scope open on this thread, ObsTrace's own or foreign, or 0.
static inline uint32_t obstrace_innermost_enclosing_scope(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL) return 0;
  uint32_t count = ring->foreign_count;
  if (count > 0 && ring->foreign_depth[count - 1] >= ring->scope_depth) return ring->foreign_scope[count - 1];
  return obstrace_innermost_of(ring);
}

/// Whether a foreign scope is open on this thread (a write must then first close those that ended).
static inline bool obstrace_has_foreign_scopes(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring != NULL && ring->foreign_count != 0;
}

static inline bool obstrace_access_is_suppressed(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring != NULL && ring->suppress_access != 0;
}

/// Looks a pointer up in the thread's intern cache; 0 when absent.
static inline uint32_t obstrace_cached_id(const void *pointer) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL) return 0;
  size_t index = ((uintptr_t)pointer >> 4) & (OBSTRACE_POINTER_CACHE_SIZE - 1);
  return ring->cache_pointers[index] == pointer ? ring->cache_ids[index] : 0;
}

static inline void obstrace_cache_id(const void *pointer, uint32_t id) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) return;
  size_t index = ((uintptr_t)pointer >> 4) & (OBSTRACE_POINTER_CACHE_SIZE - 1);
  ring->cache_pointers[index] = pointer;
  ring->cache_ids[index] = id;
}

/// Opens one of ObsTrace's scopes on this thread; `tracking` is Observation's tracking pointer now
/// (`obstrace_current_tracking()`, which the caller has read already).
void obstrace_push_scope(uint32_t scope, const void *tracking);
void obstrace_pop_scope(uint32_t scope);
/// Opens a willSet window on this thread, returning the one it interrupts packed as (object << 32 | key).
static inline uint64_t obstrace_set_writing(uint32_t object, uint32_t key) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) return 0;
  uint64_t saved = ((uint64_t)ring->writing_object << 32) | ring->writing_key;
  ring->writing_object = object;
  ring->writing_key = key;
  return saved;
}

/// A willSet: records it (kind `kind`, timed, in the innermost of ObsTrace's scopes) and opens its window, as
/// `obstrace_emit` then `obstrace_set_writing` would, with one load of the thread's ring. Returns the window it
/// interrupts, packed as `obstrace_set_writing` returns it (0 on a thread without a ring).
static inline __attribute__((always_inline)) uint64_t obstrace_record_will_set(uint8_t kind, uint8_t flags,
                                                                                uint32_t object, uint32_t key,
                                                                                uint32_t type, uint32_t stack) {
  obstrace_ring *ring = obstrace_current_ring();
  if (__builtin_expect(ring == NULL, 0)) {
    obstrace_note_ringless_event();
    return 0;
  }
  obstrace_store_in(ring, true, kind, flags, object, key, obstrace_innermost_of(ring), type, stack);
  uint64_t saved = ((uint64_t)ring->writing_object << 32) | ring->writing_key;
  ring->writing_object = object;
  ring->writing_key = key;
  return saved;
}

static inline void obstrace_restore_writing(uint64_t saved) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL) return;
  ring->writing_object = (uint32_t)(saved >> 32);
  ring->writing_key = (uint32_t)saved;
}

static inline uint32_t obstrace_writing_object(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring == NULL ? 0 : ring->writing_object;
}

/// The calling thread's id in the trace (its ring's, never reused in a process); 0 when it has no ring.
static inline uint32_t obstrace_current_thread_id(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring == NULL ? 0 : ring->thread_id;
}

/// The serial context the calling code runs in, for telling which runs of a re-tracked scope follow each other
/// (`ScopeInstances`): the actor whose executor runs it (the main actor for any code on the main thread), else the
/// task running it (by its id, which the runtime gives no other task of the process, tagged), else its thread
/// (`obstrace_current_thread_id`, tagged); 0 when none is known (a thread without a ring, outside any task). A
/// task's and a thread's value is never another's; an actor's (its address) is its identity only while it lives.
uint64_t obstrace_run_context(void);

static inline uint32_t obstrace_writing_key(void) {
  obstrace_ring *ring = obstrace_thread_ring;
  return ring == NULL ? 0 : ring->writing_key;
}
void obstrace_suppress_access(bool suppress);

/// The first mapped address (page-aligned) of the object the dynamic linker has loaded that holds `address` in one
/// of its loaded segments; 0 when none does. Walks the loaded objects: not for the hot path.
uintptr_t obstrace_loaded_object_start(uintptr_t address);

/// Finds the loaded object (shared library) whose file is named `name`, as the dynamic linker sees it: its path
/// (into `path`, `capacity` bytes), its load bias, and its executable segments as [start, end) pairs in `ranges`
/// (at most `max_ranges`). Returns how many ranges it wrote, or -1 when no such object is loaded. A `name` of ""
/// finds the main program (its path is then /proc/self/exe's target).
int obstrace_find_loaded_object(const char *name, char *path, size_t capacity, uintptr_t *bias, uintptr_t *ranges,
                                int max_ranges);

/// Keeps the `size` bytes at `field` (a trivially copyable member, read in place: no getter, no copy of a Swift
/// value) as the value of (object, key) before a `_modify`. When every slot is taken, the oldest is given up
/// (its didSet will find nothing and say "not compared"). Owner thread only.
static inline void obstrace_snapshot_store(uint32_t object, uint32_t key, const void *field, uint32_t size) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL || size > OBSTRACE_SNAPSHOT_BYTES) return;
  if (ring->snapshot_count == OBSTRACE_SNAPSHOT_SLOTS) {
    for (uint32_t index = 1; index < OBSTRACE_SNAPSHOT_SLOTS; index++) ring->snapshots[index - 1] = ring->snapshots[index];
    ring->snapshot_count--;
  }
  obstrace_snapshot *slot = &ring->snapshots[ring->snapshot_count++];
  slot->object = object;
  slot->key = key;
  slot->size = size;
  __builtin_memcpy(slot->bytes, field, size);
}

/// Compares the bytes at `field` with the latest snapshot of (object, key) and gives the slot back: 1 when equal
/// (the write changed no bit), 2 when different, 0 when there is no snapshot (not compared).
static inline uint8_t obstrace_snapshot_compare(uint32_t object, uint32_t key, const void *field, uint32_t size) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL) return 0;
  for (uint32_t index = ring->snapshot_count; index > 0; index--) {
    obstrace_snapshot *slot = &ring->snapshots[index - 1];
    if (slot->object != object || slot->key != key) continue;
    uint8_t result = slot->size != size ? 0 : (__builtin_memcmp(slot->bytes, field, size) == 0 ? 1 : 2);
    for (uint32_t next = index; next < ring->snapshot_count; next++) ring->snapshots[next - 1] = ring->snapshots[next];
    ring->snapshot_count--;
    return result;
  }
  return 0;
}

// ── Serial numbers. ──
uint32_t obstrace_next_object_serial(void);
uint32_t obstrace_next_scope_serial(void);
/// The first of `count` consecutive scope serials, taken with one atomic add (a scope and its new instance).
uint32_t obstrace_next_scope_serials(uint32_t count);

// ── The consumer side, used by the flusher only. ──

/// Configures the recorder before a session: ring capacity (rounded up to a power of two) for rings made from now
/// on, drop mode and the stack level.
void obstrace_configure(uint64_t ring_capacity, bool drop_when_full, uint32_t stack_level, uint32_t stack_depth,
                        uint32_t compare_mode);
void obstrace_set_enabled(bool enabled);
/// Bytes of stack left below the caller on this thread (its bounds read once per thread; 0 when unknown is never
/// said: a thread whose bounds cannot be read reports its distance from address 1, that is, plenty).
size_t obstrace_stack_left(void);
/// Runs `body(context)` on a new thread with a stack of `size` bytes and waits for it to return; false, having run
/// nothing, when no thread could be made.
bool obstrace_run_with_stack(void (*body)(void *), void *context, size_t size);
/// `pthread_create` for the recorder's own threads (the flusher, the roomy-stack helper): the thread starts with
/// every signal blocked, so that none of the program's handlers ever runs on it (a thread starts with its creator's
/// mask: every signal is blocked around the creation and the caller's mask put back). The kernel still delivers a
/// fault of the thread's own to it.
int obstrace_create_quiet_thread(pthread_t *thread, const pthread_attr_t *attributes, void *(*body)(void *),
                                 void *context);

/// Installs, once per process, the handlers that keep `fork` safe while recording: the parent counts the fork
/// (`obstrace_forks_while_recording`); the child, which has no flusher (only the forking thread survives a fork),
/// switches recording off for good, so that no write of it waits for room in a ring nobody drains, and is marked
/// (`obstrace_is_forked_child`) so that it never writes into the parent's trace.
void obstrace_install_fork_handlers(void);
/// Whether this process is a child of `fork` made while its parent was recording: it does not record.
bool obstrace_is_forked_child(void);
/// Forks made while this recording ran (counted by the parent; the footer's last field).
uint64_t obstrace_forks_while_recording(void);
/// Marks the flusher as running (rings of exiting threads are then left for it) or stopped.
void obstrace_set_flusher_running(bool running);

/// Copies up to `capacity` ring pointers into `rings`; returns how many rings exist.
size_t obstrace_registry_snapshot(obstrace_ring **rings, size_t capacity);
/// Events dropped so far by every ring still registered (drop mode), summed.
uint64_t obstrace_total_dropped(void);
/// Unlinks an orphaned ring that the flusher has drained, and puts it back in the pool of prepared rings (or frees
/// it when the pool is full or the ring's capacity is not the current one).
void obstrace_registry_release(obstrace_ring *ring);
/// Fills the empty slots of the pool of prepared rings with new rings of the configured capacity, every page
/// touched: called by the flusher, so that a thread's first event takes a ring without allocating or zeroing one.
void obstrace_ring_pool_fill(void);
/// Frees the pool's rings (at a recording's start and stop: a program not recording holds none).
void obstrace_ring_pool_empty(void);
/// How many prepared rings the pool holds now.
size_t obstrace_ring_pool_count(void);
/// How many prepared rings the pool is filled to for the configured capacity: `OBSTRACE_RING_POOL_SLOTS`, fewer
/// when they would exceed `OBSTRACE_RING_POOL_BYTES`, at least one.
size_t obstrace_ring_pool_target(void);
/// How many rings were allocated on the thread that was to use them, because the pool was empty (tests).
uint64_t obstrace_rings_made_on_program_threads(void);
/// The threads whose rings are registered and not orphaned (their thread has not exited), except the thread
/// `except` (a thread serial, 0 for none): their serials into `serials`, at most `capacity`; returns how many
/// there are. Copied under the registry's lock, so a ring the flusher frees meanwhile is never read.
size_t obstrace_registry_running(uint32_t *serials, size_t capacity, uint32_t except);
/// The serial of the calling thread's ring, or 0 when the thread has never recorded.
uint32_t obstrace_current_thread_serial(void);

/// How many records the flusher can read, and where the contiguous run of them starts.
static inline size_t obstrace_ring_readable(obstrace_ring *ring, const obstrace_record **first) {
  // Acquire: pairs with the producer's release store of head in obstrace_emit.
  uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
  uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);  // only the flusher writes tail
  uint64_t available = head - tail;
  uint64_t index = tail & ring->mask;
  uint64_t contiguous = ring->mask + 1 - index;
  *first = &ring->slots[index];
  return (size_t)(available < contiguous ? available : contiguous);
}

/// How many records the ring holds for the flusher now (both sides of the wrap), and how many it can hold.
static inline size_t obstrace_ring_available(obstrace_ring *ring) {
  // Acquire: pairs with the producer's release store of head in obstrace_emit.
  uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
  return (size_t)(head - __atomic_load_n(&ring->tail, __ATOMIC_RELAXED));
}

static inline size_t obstrace_ring_capacity(const obstrace_ring *ring) { return (size_t)(ring->mask + 1); }

static inline void obstrace_ring_consume(obstrace_ring *ring, size_t count) {
  // Release: pairs with the producer's acquire load of tail in obstrace_ring_make_room.
  __atomic_store_n(&ring->tail, __atomic_load_n(&ring->tail, __ATOMIC_RELAXED) + count, __ATOMIC_RELEASE);
}

/// Hands every record in the ring back unread (a new recording starts clean). The producer's `check_at` is its own
/// and stays behind, which only makes it look at `tail` again sooner.
static inline void obstrace_ring_discard(obstrace_ring *ring) {
  // Release: pairs with the producer's acquire load of tail in obstrace_ring_make_room.
  __atomic_store_n(&ring->tail, __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

// The flusher's fields, read and written through these so that Swift never copies or stores the whole ring
// struct (whose producer fields another thread is writing).
static inline uint32_t obstrace_ring_thread_id(const obstrace_ring *ring) { return ring->thread_id; }
static inline int32_t obstrace_ring_os_thread_id(const obstrace_ring *ring) { return ring->os_thread_id; }
static inline uint64_t obstrace_ring_chunk_sequence(const obstrace_ring *ring) { return ring->chunk_sequence; }
static inline uint64_t obstrace_ring_flushed_dropped(const obstrace_ring *ring) { return ring->flushed_dropped; }

/// Starts a recording's bookkeeping for the ring: no chunk yet, drops counted from now.
static inline void obstrace_ring_begin_recording(obstrace_ring *ring) {
  ring->chunk_sequence = 0;
  ring->flushed_dropped = __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
}

/// Notes a chunk written for the ring; returns the events dropped since the previous one.
static inline uint64_t obstrace_ring_note_chunk(obstrace_ring *ring) {
  uint64_t dropped = __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
  uint64_t since = dropped - ring->flushed_dropped;
  ring->flushed_dropped = dropped;
  ring->chunk_sequence += 1;
  return since;
}

static inline uint64_t obstrace_ring_dropped(const obstrace_ring *ring) {
  return __atomic_load_n(&ring->dropped, __ATOMIC_RELAXED);
}

static inline uint64_t obstrace_ring_head(const obstrace_ring *ring) {
  return __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
}

/// Records stored and not yet consumed.
static inline uint64_t obstrace_ring_unread(const obstrace_ring *ring) {
  // Acquire: pairs with the producer's release store of head in obstrace_store.
  return __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) - __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);
}

static inline bool obstrace_ring_is_orphaned(const obstrace_ring *ring) {
  return __atomic_load_n(&ring->orphaned, __ATOMIC_ACQUIRE) != 0;
}

/// Sleeps until woken by a producer waiting for room, or until `milliseconds` pass.
void obstrace_flusher_wait(uint32_t milliseconds);
void obstrace_flusher_wake(void);
/// Tests only: holds the running flusher (it drains nothing, so a ring fills for certain) or releases it. Returns
/// once the flusher has seen the hold, or false after 10 s (no recording, so no flusher).
bool obstrace_flusher_hold(bool hold);
/// The flusher, at the top of its loop: whether a test holds it (acknowledging the hold).
bool obstrace_flusher_is_held(void);

/// One (clock ticks, CLOCK_MONOTONIC nanoseconds) pair taken back to back, for converting ticks.
void obstrace_clock_sample(uint64_t *ticks, uint64_t *nanoseconds);
/// CLOCK_REALTIME in nanoseconds since 1970.
uint64_t obstrace_wall_clock_nanoseconds(void);

// ── The flusher's encoding of common events (encode.c). ──

/// What `obstrace_encode_common` reads and advances: the state of one chunk's encoder (`ChunkEncoder` in
/// ObsTraceFormat, copied in and out around the call), the flusher's clock state for the ring's thread, and the
/// last segment of the tick mapping (`TickMapping`).
/// How many object, property and scope triples, and how many stacks, a chunk's encoder remembers as stated.
#define OBSTRACE_RECENT_STATED 4

typedef struct obstrace_encode_state {
  // The chunk's encoder: bytes of items from the buffer's front, of time deltas from its back.
  uint64_t items;
  uint64_t times;
  uint64_t events;
  uint64_t last_time;  ///< the time of the chunk's previous event (nanoseconds)
  uint32_t stated_object, stated_property, stated_scope, stated_stack;
  uint32_t previous_object, previous_key;
  /// The triples and stacks the chunk has stated in full, newest first (`ChunkEncoder.recentObjects`…; zeros: none):
  /// an event about one of them needs no definition, only to become the stated one.
  uint32_t recent_objects[OBSTRACE_RECENT_STATED];
  uint32_t recent_properties[OBSTRACE_RECENT_STATED];
  uint32_t recent_scopes[OBSTRACE_RECENT_STATED];
  uint32_t recent_stacks[OBSTRACE_RECENT_STATED];
  // The flusher's conversion state: the ticks converted last and their time, and the thread's latest time (a
  // thread's times never go back).
  uint64_t last_ticks;
  uint64_t last_ticks_time;
  uint64_t thread_time;
  // The tick mapping's segment the loop is in (`segment`: between samples `segment` and `segment + 1`): a tick in
  // [segment_ticks, segment_end_ticks) is interpolated with `slope` and held at most at `segment_end_nanoseconds`, a
  // tick from `latest_ticks` on is held at `latest_nanoseconds`; a tick of another segment moves the loop to it
  // through the mapping's samples (`samples` of them, set by the caller for the call), and a tick before the first
  // sample is left to the caller.
  uint64_t segment_ticks;
  uint64_t segment_nanoseconds;
  uint64_t latest_ticks;
  uint64_t latest_nanoseconds;
  double slope;
  uint64_t segment_end_ticks;
  uint64_t segment_end_nanoseconds;
  uint64_t segment;
  uint64_t samples;
  const uint64_t *sample_ticks;
  const uint64_t *sample_nanoseconds;
  const double *sample_slopes;
} obstrace_encode_state;

/// Encodes records from the front of `records` while each is an access, willSet or didSet that needs no definition
/// (about the object, property and scope the chunk last stated, or about a triple it stated earlier, which then
/// becomes the stated one; with no stack, the stack it last stated or one it stated earlier), its ticks are in the
/// mapping (given its samples) or past it, and the buffer has room; stops after the event that brings the chunk to
/// `target` bytes. Writes exactly what `ChunkEncoder.append` writes for the same events and leaves the state as it
/// leaves it (the flusher's `drainRecords` does the rest, one record at a time). Returns how many records it encoded.
size_t obstrace_encode_common(obstrace_encode_state *restrict state, const obstrace_record *restrict records,
                              size_t count, uint8_t *restrict buffer, uint64_t capacity, uint64_t target);

// ── Call stacks (frame-pointer walk). ──

/// Walks the caller's frame-pointer chain into `frames` (return addresses), skipping `skip` frames. A frame
/// pointer that is null, misaligned, not above the previous one or too far from it ends the walk.
int obstrace_capture_stack(uintptr_t *frames, int capacity, int skip);

/// The stack capture of an event (every write's, by default): `obstrace_capture_stack` and the thread's stack cache
/// in one call, skipping one frame (the caller's own), at the depth of the recording's options (at least
/// `minimum_depth`), into the thread's ring. Returns the stack's interned id when the thread's cache has it; else 0,
/// with the frames' count in `*count` (0: no stack) and their hash (`obstrace_hash_frames`) in `*hash`, for the caller
/// to intern and `obstrace_cache_stack`; the frames are at `obstrace_captured_frames()` until the thread's next
/// capture.
uint32_t obstrace_capture_stack_here(int minimum_depth, int *count, uint64_t *hash);

/// The frames of the calling thread's last `obstrace_capture_stack_here` (its ring's buffer).
static inline const uintptr_t *obstrace_captured_frames(void) {
  return obstrace_thread_ring == NULL ? NULL : obstrace_thread_ring->captured_frames;
}

/// Stores through `out` the return address `level` frames up the frame-pointer chain (0: where this function
/// returns to in its caller, 1: where that caller returns to, and so on), validated as `obstrace_capture_stack`
/// validates a walk; 0 when the chain does not reach it or this thread has no ring. The result goes through a
/// pointer on purpose: a caller that passes the address of one of its own locals cannot have turned this call into
/// a tail call (its frame must outlive the call), so the levels are the same in debug and optimized builds.
void obstrace_return_address_into(int level, uintptr_t *out);

/// `obstrace_return_address_into` for a thread that need not have a ring (nothing is recording), at most 2 levels up,
/// through ObsTrace's own frames only: the chain is checked step by step as a walk checks it, bounded by this
/// function's frame below and 2 MiB above it instead of the ring's stack bounds. Touches no ring, no thread-local.
void obstrace_near_return_address_into(int level, uintptr_t *out);

/// `obstrace_capture_stack_here`, into `frames`, from frame record `record` (from `obstrace_frame_record_into`, of a
/// frame still running): its return address is the first frame.
uint32_t obstrace_capture_stack_from(uintptr_t record, uintptr_t *frames, int capacity, int *count, uint64_t *hash);

/// Stores through `out` the address of the frame record `level` frames up the chain, as `obstrace_return_address_into`
/// finds it (its return address is what that function stores), or 0. With it a scope's stack is walked from its call
/// site (`obstrace_capture_stack_from`), and the call site is that stack's first frame.
void obstrace_frame_record_into(int level, uintptr_t *out);

/// The walk itself, from frame record `start` within [low, high): what `obstrace_capture_stack` does from its own
/// frame, exposed so that tests can hand it corrupt chains.
int obstrace_walk_frames(const void *start, uintptr_t low, uintptr_t high, uintptr_t *frames, int capacity,
                         int skip);

/// The walk of `obstrace_capture_stack_here` from frame record `start` within [low, high): the frames and hash of
/// `obstrace_walk_frames` with `skip` 1 and `obstrace_hash_frames`, in one pass; exposed for tests.
int obstrace_walk_frames_skipping_one(const void *start, uintptr_t low, uintptr_t high, uintptr_t *frames,
                                      int capacity, uint64_t *hash);

/// FNV-1a over the frames: the key of the per-thread stack cache.
static inline uint64_t obstrace_hash_frames(const uintptr_t *frames, int count) {
  uint64_t hash = 1469598103934665603ull;
  for (int index = 0; index < count; index++) {
    hash ^= (uint64_t)frames[index];
    hash *= 1099511628211ull;
  }
  return hash | 1;  // never 0, the empty slot
}

static inline uint32_t obstrace_cached_stack(uint64_t hash) {
  obstrace_ring *ring = obstrace_thread_ring;
  if (ring == NULL) return 0;
  size_t index = (size_t)(hash >> 7) & (OBSTRACE_STACK_CACHE_SIZE - 1);
  return ring->stack_hashes[index] == hash ? ring->stack_ids[index] : 0;
}

static inline void obstrace_cache_stack(uint64_t hash, uint32_t id) {
  obstrace_ring *ring = obstrace_current_ring();
  if (ring == NULL) return;
  size_t index = (size_t)(hash >> 7) & (OBSTRACE_STACK_CACHE_SIZE - 1);
  ring->stack_hashes[index] = hash;
  ring->stack_ids[index] = id;
}

#ifdef __cplusplus
}
#endif

#endif
