/*
 * log.h — supervised's log: one timestamped line per call, written by a
 * thread of its own so that a slow reader of stderr (a full pipe, a stuck
 * terminal) never blocks the loop thread that serves requests.
 *
 * Lines go into a bounded buffer (256 KiB); when it is full, lines are
 * dropped and counted, and a line saying how many were lost is written once
 * there is room again. Before svd_log_start and after svd_log_stop, lines
 * are written directly (start-up errors, the last words at exit).
 */
#ifndef SVD_LOG_H
#define SVD_LOG_H

#include <stdbool.h>

/* svd_log formats one line ("TIME supervised[PID]: ...") and queues it. */
void svd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * svd_log_start starts the writer thread (stderr is its output). Call it
 * with the signals the daemon handles already blocked, so the thread never
 * takes them. Returns false (and logging stays direct) if no thread can be
 * made.
 */
bool svd_log_start(void);

/*
 * svd_log_stop lets the thread write what is queued and stop, waiting at
 * most one second (a reader that takes nothing keeps its lines), then goes
 * back to direct writes.
 */
void svd_log_stop(void);

#endif /* SVD_LOG_H */
