// The flusher's loop over a ring's common events: most of a trace is accesses, willSets and didSets about what
// the chunk has already stated, and this encodes them in one tight loop. Swift's `ChunkEncoder.append` is the
// reference: this writes the same bytes (tests compare the two on the same records), and everything else (an event
// that needs a definition, another kind, a tick outside the mapping's last segment) is left to it.
#include "CObsTraceRing.h"

#include <stdbool.h>
#include <string.h>

// The presence mask's bits (`EventMask` in ObsTraceFormat).
enum {
  MASK_DEPTH = 1,
  MASK_OBJECT = 2,
  MASK_KEY = 4,
  MASK_SCOPE = 8,
  MASK_AUX = 16,
  MASK_STACK = 32,
  MASK_SAME_OBJECT_AND_KEY = 64,
  MASK_SAME_TIME = 128,
};

/// The most bytes one event takes (`ChunkEncoder.maximumEventSize`): kind, flags, mask, a 64-bit delta and six
/// 32-bit fields as varints.
#define MAXIMUM_EVENT_SIZE (3 + 10 + 6 * 5)

static inline __attribute__((always_inline)) uint8_t *put_varint(uint8_t *out, uint32_t value) {
  while (value >= 0x80) {
    *out++ = (uint8_t)value | 0x80;
    value >>= 7;
  }
  *out++ = (uint8_t)value;
  return out;
}

/// The bytes that follow an event's mask when its depth is 0: the scope's varint (when the chunk's scope is not 0),
/// then the stack's (when the event has one), for the two forms an event of the loop can take.
typedef struct fixed_tail {
  uint8_t plain[16];
  uint8_t with_stack[16];
  size_t plain_length;
  size_t with_stack_length;
} fixed_tail;

/// The items of one event that has a depth or a stack (the loop writes the others itself), as `ChunkEncoder.append`
/// writes them for an event about the stated object, key and scope (the caller has checked that, and that the buffer
/// has room for `MAXIMUM_EVENT_SIZE` bytes from `out`). Returns the end of what it wrote; the delta is the caller's.
static inline __attribute__((always_inline)) uint8_t *encode_items(uint32_t head, uint32_t stack, uint8_t fixed_mask,
                                                                   const fixed_tail *tail, uint64_t delta,
                                                                   uint8_t *out) {
  uint16_t depth = (uint16_t)(head >> 16);
  uint32_t mask = fixed_mask | (depth != 0 ? MASK_DEPTH : 0) | (stack != 0 ? MASK_STACK : 0) |
                  (delta == 0 ? MASK_SAME_TIME : 0);
  // Kind, flags and mask in one store (its fourth byte is overwritten by what follows, or is past the items).
  uint32_t word = (head & 0xFFFF) | mask << 16;
  memcpy(out, &word, sizeof word);
  out += 3;
  if (depth != 0) out = put_varint(out, depth);
  // The scope's and the stack's bytes, precomputed (room: MAXIMUM_EVENT_SIZE; only their length counts).
  if (stack != 0) {
    memcpy(out, tail->with_stack, 16);
    return out + tail->with_stack_length;
  }
  memcpy(out, tail->plain, 16);
  return out + tail->plain_length;
}

/// Ticks since a segment's start to nanoseconds, as `TickMapping.nanoseconds` computes them
/// (`UInt64(Double(ticks) * slope)`), through the signed conversions: one instruction each way, where the unsigned
/// ones take about ten on x86-64. They agree for `ticks` and the product below 2^63, which `segment_is_convertible`
/// makes sure of for every segment the loop converts in.
static inline __attribute__((always_inline)) uint64_t scaled_ticks(uint64_t ticks, double slope) {
  return (uint64_t)(int64_t)((double)(int64_t)ticks * slope);
}

/// Whether the loop may convert ticks in the segment [start_ticks, end_ticks) with `scaled_ticks`: its ticks and its
/// span in nanoseconds (which bounds the product, give or take rounding) are below 2^62. Any real segment is (2^62
/// nanoseconds are 146 years); one that is not is left to `TickMapping`.
static inline bool segment_is_convertible(uint64_t start_ticks, uint64_t end_ticks, uint64_t start_nanoseconds,
                                          uint64_t end_nanoseconds) {
  return end_ticks - start_ticks < (UINT64_C(1) << 62) && end_nanoseconds - start_nanoseconds < (UINT64_C(1) << 62);
}

/// Moves `state` to the segment of the mapping that holds `ticks` (below the latest sample): forward from the current
/// one (a thread's records come in time order, and a drain's span many of the flusher's samples), or searched from the
/// first when `ticks` is earlier. False when `ticks` is before the first sample or no samples are given.
static bool move_to_segment(obstrace_encode_state *state, uint64_t ticks) {
  const uint64_t *sample_ticks = state->sample_ticks;
  uint64_t samples = state->samples;
  if (sample_ticks == NULL || samples < 2 || ticks < sample_ticks[0]) return false;
  uint64_t low = state->segment;
  if (low + 1 >= samples || ticks < sample_ticks[low]) {
    // Binary search: the segment [low, low + 1] with sample_ticks[low] <= ticks < sample_ticks[low + 1].
    uint64_t lower = 0, upper = samples - 2;
    while (lower < upper) {
      uint64_t middle = (lower + upper + 1) / 2;
      if (sample_ticks[middle] <= ticks) lower = middle;
      else upper = middle - 1;
    }
    low = lower;
  } else {
    while (low + 2 < samples && sample_ticks[low + 1] <= ticks) low++;
  }
  if (!segment_is_convertible(sample_ticks[low], sample_ticks[low + 1], state->sample_nanoseconds[low],
                              state->sample_nanoseconds[low + 1]))
    return false;
  state->segment = low;
  state->segment_ticks = sample_ticks[low];
  state->segment_nanoseconds = state->sample_nanoseconds[low];
  state->segment_end_ticks = sample_ticks[low + 1];
  state->segment_end_nanoseconds = state->sample_nanoseconds[low + 1];
  state->slope = state->sample_slopes[low];
  return true;
}

/// Whether (object, key, scope) is one of the triples the chunk has stated in full (`ChunkEncoder.recentObjects`…).
static inline __attribute__((always_inline)) bool is_recent_triple(const obstrace_encode_state *state,
                                                                   uint32_t object, uint32_t key, uint32_t scope) {
  bool found = false;
  for (int index = 0; index < OBSTRACE_RECENT_STATED; index++) {
    found |= state->recent_objects[index] == object && state->recent_properties[index] == key &&
             state->recent_scopes[index] == scope;
  }
  return found;
}

/// Whether `stack` is one of the stacks the chunk has stated (`ChunkEncoder.recentStacks`).
static inline __attribute__((always_inline)) bool is_recent_stack(const obstrace_encode_state *state,
                                                                  uint32_t stack) {
  bool found = false;
  for (int index = 0; index < OBSTRACE_RECENT_STATED; index++) found |= state->recent_stacks[index] == stack;
  return found;
}

/// The loop's clock: the flusher's conversion state and the mapping's segment, in locals (the byte stores of the
/// loop could alias `state` for the compiler, which would then reload each field per event).
typedef struct clock_locals {
  uint64_t last_ticks, last_ticks_time, thread_time, last_time;
  uint64_t latest_ticks, latest_nanoseconds;
  uint64_t segment_ticks, segment_span, segment_nanoseconds, segment_end_nanoseconds;
  double slope;
} clock_locals;

/// An event's time delta from the chunk's previous event, advancing the clock: what `ChunkEncoder.append` does with
/// the time the flusher converts from its ticks. False, with the clock as it was, when its ticks are before the
/// mapping's first sample (`TickMapping`'s answer, the caller's to give).
static inline __attribute__((always_inline)) bool event_delta(clock_locals *clock, obstrace_encode_state *state,
                                                              uint64_t ticks, uint64_t *delta) {
  *delta = 0;
  // An event that took its thread's previous ticks (a didSet, most reads) takes the chunk's previous time: no
  // conversion, no delta. (Only a call's first event can find the thread's time past the chunk's.)
  if (ticks == clock->last_ticks && clock->thread_time <= clock->last_time) return true;
  if (ticks != clock->last_ticks) {
    uint64_t nanoseconds;
    // In the segment (most ticks of a drain): one test of both ends, as the segment ends at or before the latest
    // sample.
    if (__builtin_expect(ticks - clock->segment_ticks < clock->segment_span, 1)) {
      nanoseconds = clock->segment_nanoseconds + scaled_ticks(ticks - clock->segment_ticks, clock->slope);
      if (nanoseconds > clock->segment_end_nanoseconds) nanoseconds = clock->segment_end_nanoseconds;
    } else if (ticks >= clock->latest_ticks) {
      nanoseconds = clock->latest_nanoseconds;
    } else {
      if (!move_to_segment(state, ticks)) return false;  // before the first sample: TickMapping's answer
      clock->segment_ticks = state->segment_ticks;
      clock->segment_span = state->segment_end_ticks - clock->segment_ticks;
      clock->segment_nanoseconds = state->segment_nanoseconds;
      clock->segment_end_nanoseconds = state->segment_end_nanoseconds;
      clock->slope = state->slope;
      nanoseconds = clock->segment_nanoseconds + scaled_ticks(ticks - clock->segment_ticks, clock->slope);
      if (nanoseconds > clock->segment_end_nanoseconds) nanoseconds = clock->segment_end_nanoseconds;
    }
    clock->last_ticks = ticks;
    clock->last_ticks_time = nanoseconds;
    if (clock->last_ticks_time > clock->thread_time) clock->thread_time = clock->last_ticks_time;
  }
  // From here, what ChunkEncoder.append does: the time never goes back.
  if (clock->thread_time > clock->last_time) {
    *delta = clock->thread_time - clock->last_time;
    clock->last_time = clock->thread_time;
  }
  return true;
}

/// The items of an event the loop takes one at a time (`ChunkEncoder.append`'s layout for an access, willSet or
/// didSet whose object's type the chunk has stated, so without aux): its object and key unless the previous event
/// was about them, its scope and stack when it has them. Returns the end of what it wrote.
static inline uint8_t *encode_one(uint32_t head, uint32_t object, uint32_t key, uint32_t scope, uint32_t stack,
                                  bool same_object_and_key, uint64_t delta, uint8_t *out) {
  uint16_t depth = (uint16_t)(head >> 16);
  uint8_t mask = (uint8_t)((depth != 0 ? MASK_DEPTH : 0) |
                           (same_object_and_key ? MASK_SAME_OBJECT_AND_KEY
                                                : (object != 0 ? MASK_OBJECT : 0) | (key != 0 ? MASK_KEY : 0)) |
                           (scope != 0 ? MASK_SCOPE : 0) | (stack != 0 ? MASK_STACK : 0) |
                           (delta == 0 ? MASK_SAME_TIME : 0));
  out[0] = (uint8_t)head;
  out[1] = (uint8_t)(head >> 8);
  out[2] = mask;
  out += 3;
  if (depth != 0) out = put_varint(out, depth);
  if (!same_object_and_key) {
    if (object != 0) out = put_varint(out, object);
    if (key != 0) out = put_varint(out, key);
  }
  if (scope != 0) out = put_varint(out, scope);
  if (stack != 0) out = put_varint(out, stack);
  return out;
}

size_t obstrace_encode_common(obstrace_encode_state *restrict state, const obstrace_record *restrict records,
                              size_t count, uint8_t *restrict buffer, uint64_t capacity, uint64_t target) {
  // Two ways. Runs: while each event is about the stated object, property and scope, as was the chunk's previous
  // event, it codes neither object, key nor aux (`EventMask.sameObjectAndKey`; aux is the object's type), and its
  // scope, when it has one, and its stack, when it has one (the stated one), are the same bytes every time: a tight
  // loop. One at a time: any other access, willSet or didSet that `append` would encode without a definition (about
  // the stated triple after an event about something else, or about a triple the chunk stated earlier, which then
  // becomes the stated one, as `append` makes it; with no stack, the stated one or one stated earlier, which then
  // becomes the stated one). What needs a definition is left to `append`.
  uint32_t object = state->stated_object, key = state->stated_property, scope = state->stated_scope;
  uint32_t stated_stack = state->stated_stack;
  uint64_t previous_object_and_key = (uint64_t)state->previous_object | (uint64_t)state->previous_key << 32;
  // Items grow from the front (`out`), deltas from the back (`end`, going down).
  uint8_t *out = buffer + state->items;
  uint8_t *end = buffer + capacity - state->times;
  // The room left when the chunk reaches `target` bytes.
  const uint64_t full = capacity > target ? capacity - target : 0;
  clock_locals clock = {
      .last_ticks = state->last_ticks,
      .last_ticks_time = state->last_ticks_time,
      .thread_time = state->thread_time,
      .last_time = state->last_time,
      .latest_ticks = state->latest_ticks,
      .latest_nanoseconds = state->latest_nanoseconds,
      .segment_ticks = state->segment_ticks,
      .segment_span = state->segment_end_ticks - state->segment_ticks,
      .segment_nanoseconds = state->segment_nanoseconds,
      .segment_end_nanoseconds = state->segment_end_nanoseconds,
      .slope = state->slope,
  };
  // A segment too long for `scaled_ticks` (none is, in practice): made empty, so that a tick in it goes through
  // `move_to_segment`, which refuses it, and the event to `append`.
  if (!segment_is_convertible(clock.segment_ticks, state->segment_end_ticks, clock.segment_nanoseconds,
                              clock.segment_end_nanoseconds))
    clock.segment_span = 0;
  const obstrace_record *record = records, *records_end = records + count;
  bool reached_target = false;
  while (record < records_end && !reached_target) {
    if (object != 0 && previous_object_and_key == ((uint64_t)object | (uint64_t)key << 32)) {
      // A run, for as long as it lasts.
      const uint64_t object_and_key = previous_object_and_key;
      fixed_tail tail;
      memset(&tail, 0, sizeof tail);
      tail.plain_length = scope != 0 ? (size_t)(put_varint(tail.plain, scope) - tail.plain) : 0;
      memcpy(tail.with_stack, tail.plain, sizeof tail.plain);
      tail.with_stack_length =
          stated_stack != 0
              ? (size_t)(put_varint(tail.with_stack + tail.plain_length, stated_stack) - tail.with_stack)
              : tail.plain_length;
      const uint8_t fixed_mask = MASK_SAME_OBJECT_AND_KEY | (scope != 0 ? MASK_SCOPE : 0);
      // The word of kind, flags and mask of an event at depth 0 without a stack, but for its kind and flags and
      // `EventMask.sameTime` (bit 23: the mask's bit 7).
      const uint32_t fixed_word = (uint32_t)fixed_mask << 16;
      const uint32_t stack_word = (uint32_t)(fixed_mask | MASK_STACK) << 16;
      const uint64_t plain_length = tail.plain_length, with_stack_length = tail.with_stack_length;
      const uint32_t run_scope = scope, run_stack = stated_stack;
      while (record < records_end && !reached_target) {
        // Events that cannot bring the chunk to `target` (each takes at most MAXIMUM_EVENT_SIZE bytes) need no room
        // check; near the target, one event at a time, checked before and after as `append`'s caller does.
        uint64_t room = (uint64_t)(end - out);
        uint64_t safe = room > full ? (room - full - 1) / MAXIMUM_EVENT_SIZE : 0;
        bool checked = safe == 0;
        if (checked) {
          if (room < MAXIMUM_EVENT_SIZE) goto done;
          safe = 1;
        }
        const obstrace_record *batch_end = (uint64_t)(records_end - record) > safe ? record + safe : records_end;
        for (; record < batch_end; record++) {
          // Access, willSet, didSet (kinds 1-3), about the stated object, property and scope, with no stack or the
          // stated one: one test of all four. The stack's term is 0 exactly when the stack is 0 or the stated one (a
          // product of two 32-bit values in 64 bits, which cannot wrap to 0).
          uint64_t record_object_and_key;
          memcpy(&record_object_and_key, &record->object, sizeof record_object_and_key);
          uint32_t head;  // kind, flags and depth: the record's bytes 8 to 11
          memcpy(&head, &record->kind, sizeof head);
          const uint32_t stack = record->stack;
          const uint64_t refused = (uint64_t)((uint8_t)((uint8_t)head - 1) > 2) |
                                   (record_object_and_key ^ object_and_key) | (record->scope ^ run_scope) |
                                   (uint64_t)stack * (uint64_t)(stack ^ run_stack);
          if (refused) goto one_at_a_time;
          uint64_t delta;
          if (!event_delta(&clock, state, record->time, &delta)) goto done;
          if (__builtin_expect((head >> 16) == 0 && stack == 0, 1)) {
            // Depth 0, no stack (most events): kind, flags and mask in one store (its fourth byte is overwritten by
            // what follows, or is past the items), then the scope's bytes, precomputed (room: MAXIMUM_EVENT_SIZE;
            // only their length counts).
            const uint32_t word = (head & 0xFFFF) | fixed_word | (uint32_t)(delta == 0) << 23;
            memcpy(out, &word, sizeof word);
            memcpy(out + 3, tail.plain, 16);
            out += 3 + plain_length;
          } else if ((head >> 16) == 0) {
            // Depth 0 with the stated stack (a write's willSet): the same, with the stack's bytes.
            const uint32_t word = head | stack_word | (uint32_t)(delta == 0) << 23;
            memcpy(out, &word, sizeof word);
            memcpy(out + 3, tail.with_stack, 16);
            out += 3 + with_stack_length;
          } else {
            out = encode_items(head, stack, fixed_mask, &tail, delta, out);
          }
          // The delta, at the back, its bytes going down (`payload` reverses the column).
          if (delta != 0) {
            while (delta >= 0x80) {
              *--end = (uint8_t)delta | 0x80;
              delta >>= 7;
            }
            *--end = (uint8_t)delta;
          }
        }
        if (checked && (uint64_t)(end - out) <= full) reached_target = true;
      }
      break;
    }
  one_at_a_time:;
    // One event, as `append` encodes it when it needs no definition; room for it checked as near the target.
    if ((uint64_t)(end - out) < MAXIMUM_EVENT_SIZE) break;
    uint32_t head;
    memcpy(&head, &record->kind, sizeof head);
    const uint32_t record_object = record->object, record_key = record->key, record_scope = record->scope;
    const uint32_t stack = record->stack;
    if ((uint8_t)((uint8_t)head - 1) > 2 || record_object == 0) break;
    const bool stated = record_object == object && record_key == key && record_scope == scope;
    if (!stated && (record->aux == 0 || !is_recent_triple(state, record_object, record_key, record_scope))) break;
    if (stack != 0 && stack != stated_stack && !is_recent_stack(state, stack)) break;
    uint64_t delta;
    if (!event_delta(&clock, state, record->time, &delta)) break;
    const uint64_t record_object_and_key = (uint64_t)record_object | (uint64_t)record_key << 32;
    out = encode_one(head, record_object, record_key, record_scope, stack,
                     record_object_and_key == previous_object_and_key, delta, out);
    if (delta != 0) {
      while (delta >= 0x80) {
        *--end = (uint8_t)delta | 0x80;
        delta >>= 7;
      }
      *--end = (uint8_t)delta;
    }
    object = record_object;
    key = record_key;
    scope = record_scope;
    if (stack != 0) stated_stack = stack;
    previous_object_and_key = record_object_and_key;
    record++;
    if ((uint64_t)(end - out) <= full) reached_target = true;
  }
done:;
  size_t index = (size_t)(record - records);
  state->items = (uint64_t)(out - buffer);
  state->times = (uint64_t)(buffer + capacity - end);
  state->events += index;
  state->last_time = clock.last_time;
  state->last_ticks = clock.last_ticks;
  state->last_ticks_time = clock.last_ticks_time;
  state->thread_time = clock.thread_time;
  // What `append` leaves: the stated object, property, scope and stack, and the previous event's object and key.
  state->stated_object = object;
  state->stated_property = key;
  state->stated_scope = scope;
  state->stated_stack = stated_stack;
  state->previous_object = (uint32_t)previous_object_and_key;
  state->previous_key = (uint32_t)(previous_object_and_key >> 32);
  return index;
}
