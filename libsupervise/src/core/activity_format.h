/*
 * activity_format.h — the byte layout of an activity region, version 1.
 *
 * An activity region is a small shared file (the resource of a lease, see
 * docs/leases.md) that one worker process writes and the supervisor reads.
 * The writer is libsupervise/src/client/activity.c, the reader
 * libsupervise/src/core/activity_view.c; docs/activity.md describes the
 * same layout for other implementations.
 *
 * Layout (every field in host byte order; offsets in bytes):
 *
 *   header, 64 bytes at offset 0
 *     0  u32 magic       SV_ACT_MAGIC ("SVAR" in a little-endian file)
 *     4  u16 version     1
 *     6  u16 header_size 64
 *     8  u16 slots       64    (SV_ACTIVITY_MAX_THREADS)
 *    10  u16 levels      16    (SV_ACTIVITY_MAX_NAMED)
 *    12  u16 name_size   48    (SV_ACTIVITY_NAME_MAX + 1)
 *    14  u16 reserved    0
 *    16  u32 slot_size   960
 *    20  u32 flags       bit 0: disabled (read with a relaxed load)
 *    24  u32 pid         the writer's pid when it opened the region
 *    28  u32 reserved    0
 *    32  u64 open_ns     CLOCK_MONOTONIC at open, nanoseconds
 *    40  24 bytes reserved, 0
 *   slots[64], 960 bytes each, slot i at offset 64 + 960 * i
 *     0  u32 seq         even: stable; odd: being written
 *     4  u32 depth       open scopes of the thread (may exceed 16)
 *     8  u32 tid         the owning thread's id, 0 when free (information)
 *    12  u32 reserved
 *    16  entries[16], 56 bytes each
 *          0  u64 start_ns  CLOCK_MONOTONIC when the scope was entered
 *          8  48 bytes name, NUL-padded, at most 47 bytes of text
 *   912  48 bytes reserved
 *   total SV_ACT_REGION_SIZE = 64 + 64 * 960 = 61504 bytes
 *
 * Every word a reader and a writer share is a C11 atomic: 32-bit fields
 * and 64-bit words (names are written as six 64-bit words), so the reader
 * in another thread or process never performs a racy plain access.
 * Entry e of a slot is meaningful only while e < min(depth, 16).
 */
#ifndef SV_CORE_ACTIVITY_FORMAT_H
#define SV_CORE_ACTIVITY_FORMAT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/activity.h"

#define SV_ACT_MAGIC       0x52415653u /* "SVAR" read as little-endian */
#define SV_ACT_VERSION     1u
#define SV_ACT_HEADER_SIZE 64u
#define SV_ACT_SLOTS       SV_ACTIVITY_MAX_THREADS
#define SV_ACT_LEVELS      SV_ACTIVITY_MAX_NAMED
#define SV_ACT_NAME_SIZE   (SV_ACTIVITY_NAME_MAX + 1u)
#define SV_ACT_NAME_WORDS  (SV_ACT_NAME_SIZE / 8u)
#define SV_ACT_SLOT_SIZE   960u
#define SV_ACT_REGION_SIZE SV_ACTIVITY_REGION_SIZE

/* Header flags. */
#define SV_ACT_FLAG_DISABLED 1u

typedef struct sv_act_header {
	_Atomic uint32_t magic;
	_Atomic uint16_t version;
	_Atomic uint16_t header_size;
	_Atomic uint16_t slots;
	_Atomic uint16_t levels;
	_Atomic uint16_t name_size;
	_Atomic uint16_t reserved0;
	_Atomic uint32_t slot_size;
	_Atomic uint32_t flags;
	_Atomic uint32_t pid;
	_Atomic uint32_t reserved1;
	_Atomic uint64_t open_ns;
	_Atomic uint64_t reserved2[3];
} sv_act_header;

typedef struct sv_act_entry {
	_Atomic uint64_t start_ns;
	_Atomic uint64_t name[SV_ACT_NAME_WORDS];
} sv_act_entry;

typedef struct sv_act_slot {
	_Atomic uint32_t seq;
	_Atomic uint32_t depth;
	_Atomic uint32_t tid;
	_Atomic uint32_t reserved;
	sv_act_entry     entry[SV_ACT_LEVELS];
	_Atomic uint64_t pad[6];
} sv_act_slot;

typedef struct sv_act_region_map {
	sv_act_header hdr;
	sv_act_slot   slot[SV_ACT_SLOTS];
} sv_act_region_map;

_Static_assert(SV_ACT_NAME_SIZE % 8 == 0, "names are written as words");
_Static_assert(sizeof(sv_act_header) == SV_ACT_HEADER_SIZE, "header size");
_Static_assert(sizeof(sv_act_entry) == 56, "entry size");
_Static_assert(offsetof(sv_act_slot, entry) == 16, "entries offset");
_Static_assert(sizeof(sv_act_slot) == SV_ACT_SLOT_SIZE, "slot size");
_Static_assert(sizeof(sv_act_region_map) == SV_ACT_REGION_SIZE, "region size");
_Static_assert(offsetof(sv_act_header, flags) == 20, "flags offset");
_Static_assert(offsetof(sv_act_header, open_ns) == 32, "open_ns offset");
/* The layout is shared with other processes: the atomics must be plain
 * memory words, not lock-based emulations. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics are lock-free");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics are lock-free");

#endif /* SV_CORE_ACTIVITY_FORMAT_H */
