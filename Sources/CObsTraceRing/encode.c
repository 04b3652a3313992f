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

/// One event, as `ChunkEncoder.append` writes it for an event about the stated object, key and scope (the caller has
/// checked that, and that the buffer has room for `MAXIMUM_EVENT_SIZE` bytes between `*out` and `*end`).
static inline __attribute__((always_inline)) void encode_one(const obstrace_record *record, uint8_t fixed_mask,
                                                             const fixed_tail *tail, uint64_t time, uint64_t *last_time,
                                                             uint8_t **out_pointer, uint8_t **end_pointer) {
  uint8_t *out = *out_pointer;
  // Kind, flags and depth are the record's bytes 8 to 11.
  uint32_t head;
  memcpy(&head, &record->kind, sizeof head);
  uint32_t stack = record->stack;
  uint16_t depth = (uint16_t)(head >> 16);
  uint64_t delta = time - *last_time;
  *last_time = time;
  uint32_t mask = fixed_mask | (depth != 0 ? MASK_DEPTH : 0) | (stack != 0 ? MASK_STACK : 0) |
                  (delta == 0 ? MASK_SAME_TIME : 0);
  // Kind, flags and mask in one store (its fourth byte is overwritten by what follows, or is past the items).
  uint32_t word = (head & 0xFFFF) | mask << 16;
  memcpy(out, &word, sizeof word);
  out += 3;
  if (__builtin_expect(depth != 0, 0)) out = put_varint(out, depth);
  // The scope's and the stack's bytes, precomputed (room: MAXIMUM_EVENT_SIZE; only their length counts).
  if (stack != 0) {
    memcpy(out, tail->with_stack, 16);
    out += tail->with_stack_length;
  } else {
    memcpy(out, tail->plain, 16);
    out += tail->plain_length;
  }
  if (delta != 0) {
    uint8_t *end = *end_pointer;
    while (delta >= 0x80) {
      *--end = (uint8_t)delta | 0x80;
      delta >>= 7;
    }
    *--end = (uint8_t)delta;
    *end_pointer = end;
  }
  *out_pointer = out;
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
  state->segment = low;
  state->segment_ticks = sample_ticks[low];
  state->segment_nanoseconds = state->sample_nanoseconds[low];
  state->segment_end_ticks = sample_ticks[low + 1];
  state->segment_end_nanoseconds = state->sample_nanoseconds[low + 1];
  state->slope = state->sample_slopes[low];
  return true;
}

size_t obstrace_encode_common(obstrace_encode_state *restrict state, const obstrace_record *restrict records,
                              size_t count, uint8_t *restrict buffer, uint64_t capacity, uint64_t target) {
  // The loop's invariants: every event it takes is about the stated object, property and scope, and so was the
  // chunk's previous event (else the first event is left to `append`, which makes it so). An event about an object
  // then codes neither object, key nor aux (`EventMask.sameObjectAndKey`; aux is the object's type), and its scope,
  // when it has one, and its stack, when it has one (the stated one), are the same bytes every time.
  const uint32_t object = state->stated_object, key = state->stated_property, scope = state->stated_scope;
  if (object == 0 || state->previous_object != object || state->previous_key != key) return 0;
  const uint32_t stated_stack = state->stated_stack;
  const uint64_t object_and_key = (uint64_t)object | (uint64_t)key << 32;
  fixed_tail tail;
  memset(&tail, 0, sizeof tail);
  tail.plain_length = scope != 0 ? (size_t)(put_varint(tail.plain, scope) - tail.plain) : 0;
  memcpy(tail.with_stack, tail.plain, tail.plain_length);
  tail.with_stack_length =
      stated_stack != 0
          ? (size_t)(put_varint(tail.with_stack + tail.plain_length, stated_stack) - tail.with_stack)
          : tail.plain_length;
  const uint8_t fixed_mask = MASK_SAME_OBJECT_AND_KEY | (scope != 0 ? MASK_SCOPE : 0);
  // Items grow from the front (`out`), deltas from the back (`end`, going down).
  uint8_t *out = buffer + state->items;
  uint8_t *end = buffer + capacity - state->times;
  // The room left when the chunk reaches `target` bytes.
  const uint64_t full = capacity > target ? capacity - target : 0;
  uint64_t last_ticks = state->last_ticks, last_ticks_time = state->last_ticks_time;
  uint64_t thread_time = state->thread_time, last_time = state->last_time;
  // The mapping's segment in locals: the byte stores below could alias `state` for the compiler, which would then
  // reload each field per event.
  const uint64_t latest_ticks = state->latest_ticks, latest_nanoseconds = state->latest_nanoseconds;
  uint64_t segment_ticks = state->segment_ticks, segment_end_ticks = state->segment_end_ticks;
  uint64_t segment_nanoseconds = state->segment_nanoseconds, segment_end_nanoseconds = state->segment_end_nanoseconds;
  double slope = state->slope;
  const obstrace_record *record = records, *records_end = records + count;
  bool reached_target = false;
  while (record < records_end && !reached_target) {
    // Events that cannot bring the chunk to `target` (each takes at most MAXIMUM_EVENT_SIZE bytes) need no room
    // check; near the target, one event at a time, checked before and after as `append`'s caller does.
    uint64_t room = (uint64_t)(end - out);
    uint64_t safe = room > full ? (room - full - 1) / MAXIMUM_EVENT_SIZE : 0;
    bool checked = safe == 0;
    if (checked) {
      if (room < MAXIMUM_EVENT_SIZE) break;
      safe = 1;
    }
    const obstrace_record *batch_end = (uint64_t)(records_end - record) > safe ? record + safe : records_end;
    for (; record < batch_end; record++) {
      // Access, willSet, didSet (kinds 1-3), about the stated object, property and scope, with no stack or the
      // stated one.
      uint64_t record_object_and_key;
      memcpy(&record_object_and_key, &record->object, sizeof record_object_and_key);
      uint32_t stack = record->stack;
      if ((uint8_t)(record->kind - 1) > 2) goto done;
      if ((record_object_and_key ^ object_and_key) | (record->scope ^ scope)) goto done;
      if ((stack != 0) & (stack != stated_stack)) goto done;
      uint64_t ticks = record->time;
      // The most common event of all: one that took its thread's previous time (a read, a didSet) at depth 0 and
      // without a stack. Its time is `last_time` again, so it is kind, flags, a mask saying "same time" and the scope's
      // bytes: the general path below writes exactly these, in four times the instructions.
      if (ticks == last_ticks && thread_time <= last_time && stack == 0) {
        uint32_t head;
        memcpy(&head, &record->kind, sizeof head);
        if ((head >> 16) == 0) {
          uint32_t word = (head & 0xFFFF) | (uint32_t)(fixed_mask | MASK_SAME_TIME) << 16;
          memcpy(out, &word, sizeof word);
          out += 3;
          memcpy(out, tail.plain, 16);
          out += tail.plain_length;
          continue;
        }
      }
      if (ticks != last_ticks) {
        uint64_t nanoseconds;
        if (ticks >= latest_ticks) {
          nanoseconds = latest_nanoseconds;
        } else {
          if (__builtin_expect(ticks < segment_ticks || ticks >= segment_end_ticks, 0)) {
            if (!move_to_segment(state, ticks)) goto done;  // before the first sample: TickMapping's answer
            segment_ticks = state->segment_ticks;
            segment_end_ticks = state->segment_end_ticks;
            segment_nanoseconds = state->segment_nanoseconds;
            segment_end_nanoseconds = state->segment_end_nanoseconds;
            slope = state->slope;
          }
          uint64_t offset = (uint64_t)((double)(ticks - segment_ticks) * slope);
          nanoseconds = segment_nanoseconds + offset;
          if (nanoseconds > segment_end_nanoseconds) nanoseconds = segment_end_nanoseconds;
        }
        last_ticks = ticks;
        last_ticks_time = nanoseconds;
        if (last_ticks_time > thread_time) thread_time = last_ticks_time;
      }
      // From here, what ChunkEncoder.append does.
      uint64_t time = thread_time > last_time ? thread_time : last_time;
      encode_one(record, fixed_mask, &tail, time, &last_time, &out, &end);
    }
    if (checked && (uint64_t)(end - out) <= full) reached_target = true;
  }
done:;
  size_t index = (size_t)(record - records);
  state->items = (uint64_t)(out - buffer);
  state->times = (uint64_t)(buffer + capacity - end);
  state->events += index;
  state->last_time = last_time;
  state->last_ticks = last_ticks;
  state->last_ticks_time = last_ticks_time;
  state->thread_time = thread_time;
  // previous_object and previous_key stay: they were the stated ones, and so is every event encoded here.
  return index;
}
