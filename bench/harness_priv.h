/*
 * harness_priv.h — what the harness files (harness_*.c) share among
 * themselves and the scenarios do not call: the report socket's bind and
 * close, the orphan sweep and the kill-and-reap step, the config writer
 * and tree removal, and the daemon stop counts.
 *
 * Design: harness.h is the harness's contract with the scenarios; this
 * header only lets its one-concept files reach each other's pieces that
 * the scenarios have no use for. Nothing here is for a scenario.
 */
#ifndef SV_BENCH_HARNESS_PRIV_H
#define SV_BENCH_HARNESS_PRIV_H

#include <stdio.h>

#include "harness.h"

/*
 * rx_open binds the non-blocking report socket at path with a large
 * receive buffer; it becomes the socket every rx_* function reads.
 * Returns its fd, or -1.
 */
int rx_open(const char *path);

/* rx_close closes the report socket, if open. */
void rx_close(void);

/*
 * kill_reap SIGKILLs our child pid and reaps it. Returns its wait status.
 */
int kill_reap(pid_t pid);

/*
 * sweep_orphans SIGKILLs and reaps our children that sv-bench did not
 * start (workers a daemon left behind) and returns how many there were.
 */
int sweep_orphans(void);

/* write_config writes a supervised config with groups g[0..ng) to path. */
int write_config(const char *path, const char *sockdir,
    const struct group_cfg *g, size_t ng);

/* rm_rf removes the tree at path, depth first, not following links. */
void rm_rf(const char *path);

/* daemon_stop_counts reads how many daemon stops there were, how many clean.
 */
void daemon_stop_counts(int *stopsp, int *cleanp);

#endif /* SV_BENCH_HARNESS_PRIV_H */
