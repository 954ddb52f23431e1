/*
 * journal_internal.h — what the journal's files share (private to
 * core/journal*.c; the API is core/journal.h).
 *
 * The files, one concept each:
 *   journal_codec.c     one line: fields, percent-encoding, numbers, the
 *                       checksum, and formatting a record
 *   journal.c           the journal: the state it describes (groups, seats,
 *                       processes), applying a record, replaying a file
 *   journal_leases.c    its lease mirror: live leases by (pool, slot),
 *                       interned pool and holder names, runtime pools
 *   journal_snapshot.c  compaction: a state written as a fresh journal
 */
#ifndef SV_CORE_JOURNAL_INTERNAL_H
#define SV_CORE_JOURNAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/journal.h"

/* Most fields in a record (L: kind, pool, slot, id, token, group,
 * ordinal, gen, session, uid, ttl, [dev, ino,] crc). */
#define J_MAX_FIELDS 14

/* The fields of one line: field k is f[k], n[k] bytes (not terminated). */
typedef struct j_fields {
	const char *f[J_MAX_FIELDS];
	size_t      n[J_MAX_FIELDS];
	size_t      count;
} j_fields;

/* journal_codec.c */
uint32_t svj_crc32(const char *buf, size_t len);
sv_err   svj_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *svj_encode(char *out, const char *s);
int   svj_hexval(char c);
bool  svj_decode(const char *f, size_t n, char *out, size_t cap);
bool  svj_u64(const char *f, size_t n, uint64_t max, uint64_t *vp);
bool  svj_split(const char *line, size_t len, j_fields *fs);

/* journal_leases.c */
sv_err svj_apply_lease(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen);
sv_err svj_apply_pool(sv_jstate *st, const j_fields *fs, const char *name,
    char *err, size_t errlen);
void   svj_leases_free(sv_jstate *st);

#endif
