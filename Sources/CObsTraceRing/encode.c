// The flusher's loop over a ring's common events: most of a trace is accesses, willSets and didSets about what
// the chunk has already stated, and this encodes them in one tight loop. Swift's `ChunkEncoder.append` is the
// reference: this writes the same bytes (tests compare the two on the same records), and everything else (an event
// that needs a definition, another kind, a tick outside the mapping's last segment) is left to it.
#include "CObsTraceRing.h"

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

size_t obstrace_encode_common(obstrace_encode_state *state, const obstrace_record *records, size_t count,
                              uint8_t *buffer, uint64_t capacity, uint64_t target) {
  // The loop's invariants: every event it takes is about the stated object, property and scope, and so was the
  // chunk's previous event (else the first event is left to `append`, which makes it so). An event about an object
  // then codes neither object, key nor aux (`EventMask.sameObjectAndKey`; aux is the object's type), and its scope,
  // when it has one, is the same bytes every time.
  const uint32_t object = state->stated_object, key = state->stated_property, scope = state->stated_scope;
  if (object == 0 || state->previous_object != object || state->previous_key != key) return 0;
  const uint32_t stated_stack = state->stated_stack;
  uint8_t scope_bytes[8] = {0};
  uint8_t *scope_end = put_varint(scope_bytes, scope);
  const size_t scope_length = scope != 0 ? (size_t)(scope_end - scope_bytes) : 0;
  const uint8_t fixed_mask = MASK_SAME_OBJECT_AND_KEY | (scope != 0 ? MASK_SCOPE : 0);
  // Items grow from the front (`out`), deltas from the back (`end`, going down).
  uint8_t *out = buffer + state->items;
  uint8_t *end = buffer + capacity - state->times;
  // The room left when the chunk reaches `target` bytes.
  const uint64_t full = capacity > target ? capacity - target : 0;
  uint64_t last_ticks = state->last_ticks, last_ticks_time = state->last_ticks_time;
  uint64_t thread_time = state->thread_time, last_time = state->last_time;
  const obstrace_record *record = records, *records_end = records + count;
  for (; record < records_end; record++) {
    // Access, willSet, didSet (kinds 1-3), about the stated object, property and scope, with no stack or the
    // stated one; room for the longest event.
    uint8_t kind = record->kind;
    uint32_t stack = record->stack;
    if ((uint8_t)(kind - 1) > 2) break;
    if ((record->object ^ object) | (record->key ^ key) | (record->scope ^ scope)) break;
    if ((stack != 0) & (stack != stated_stack)) break;
    if ((uint64_t)(end - out) < MAXIMUM_EVENT_SIZE) break;
    uint64_t ticks = record->time;
    if (ticks != last_ticks) {
      uint64_t nanoseconds;
      if (ticks >= state->latest_ticks) {
        nanoseconds = state->latest_nanoseconds;
      } else if (ticks >= state->segment_ticks) {
        uint64_t offset = (uint64_t)((double)(ticks - state->segment_ticks) * state->slope);
        nanoseconds = state->segment_nanoseconds + offset;
        if (nanoseconds > state->latest_nanoseconds) nanoseconds = state->latest_nanoseconds;
      } else {
        break;  // an earlier segment: TickMapping searches for it
      }
      last_ticks = ticks;
      last_ticks_time = nanoseconds;
      if (last_ticks_time > thread_time) thread_time = last_ticks_time;
    }
    // From here, what ChunkEncoder.append does.
    uint64_t time = thread_time > last_time ? thread_time : last_time;
    uint64_t delta = time - last_time;
    last_time = time;
    uint16_t depth = record->depth;
    uint8_t mask = fixed_mask | (depth != 0 ? MASK_DEPTH : 0) | (stack != 0 ? MASK_STACK : 0) |
                   (delta == 0 ? MASK_SAME_TIME : 0);
    out[0] = kind;
    out[1] = record->flags;
    out[2] = mask;
    out += 3;
    if (__builtin_expect(depth != 0, 0)) out = put_varint(out, depth);
    memcpy(out, scope_bytes, 8);  // room: MAXIMUM_EVENT_SIZE; only scope_length bytes count
    out += scope_length;
    if (stack != 0) out = put_varint(out, stack);
    if (delta != 0) {
      while (delta >= 0x80) {
        *--end = (uint8_t)delta | 0x80;
        delta >>= 7;
      }
      *--end = (uint8_t)delta;
    }
    if ((uint64_t)(end - out) <= full) {
      record++;
      break;
    }
  }
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
