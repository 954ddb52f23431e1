/*
 * subworkers.h — supervised's sub-worker shell: the effect shell around the
 * pure sub-worker core (core/subworker.h, docs/subworkers.md) that serves
 * RegisterSubWorker / ReleaseSubWorker (body kinds 200..203) and a
 * registered child's own WhoAmI.
 *
 * The supervisor (supervisor.c) owns one svd_subw and calls into it from
 * the loop thread only: a worker spawned or adopted (attach), a worker
 * reaped (reclaim), a request. Who asks is always what the kernel says (the
 * connection's peer pid, its parent pid and its pidfd), resolved by the
 * supervisor into an svd_subw_caller; nothing is read from message
 * content. A registered child is watched through a pidfd of its own, so
 * its number is released when it exits, whoever reaps it.
 */
#ifndef SVD_SUBWORKERS_H
#define SVD_SUBWORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/subworker.h"
#include "shell/loop.h"
#include "supervise/supervise.h"
#include "wire/wire.h"

typedef struct svd_subw svd_subw;

/* The caller of a sub-worker request, as the kernel tells it. */
typedef struct svd_subw_caller {
	int64_t pid; /* peer pid; 0: unknown or exited */
	int64_t ppid; /* its kernel parent pid, or -1 */
	int     pidfd; /* of the connecting process, or -1: unknown */
	bool    is_worker; /* pid itself is a worker process: key valid */
	bool    parent_is_worker; /* ppid is a live worker process */
	sv_wkey key;
	char   *emsg; /* where an error message goes */
	size_t  emsglen;
} svd_subw_caller;

/*
 * svd_subw_create makes an empty shell whose child watches run in loop. On
 * SV_OK *swp belongs to the caller: free it with svd_subw_destroy.
 * Errors: SV_ENOMEM.
 */
sv_err svd_subw_create(sv_loop *loop, svd_subw **swp);

/* svd_subw_destroy stops every watch and frees sw. NULL is ignored. */
void svd_subw_destroy(svd_subw *sw);

/*
 * svd_subw_attach declares worker process key (pid from the spawn or the
 * adoption) with its group's bound max (0: 256); the supervisor calls it
 * before each sub-worker request of the worker or of a child of it
 * (req_subworkers.c), and again is a no-op. A refusal is logged; the
 * worker then cannot register sub-workers (NOT_A_WORKER) and is otherwise
 * unaffected.
 */
void svd_subw_attach(svd_subw *sw, sv_wkey key, int64_t pid, uint32_t max);

/*
 * svd_subw_worker_gone reclaims every sub-worker number of the reaped worker
 * key and stops watching its children (now orphans).
 */
void svd_subw_worker_gone(svd_subw *sw, sv_wkey key);

/* svd_subw_is_request tells whether req is a sub-worker request. */
bool svd_subw_is_request(const svw_env *req);

/*
 * svd_subw_handle carries out the sub-worker request req of caller c. For a
 * RegisterSubWorker on SV_OK *g is the grant (g->again: a re-claim); for a
 * ReleaseSubWorker *g is untouched. On error the message is in c->emsg.
 * Errors (wire codes): as docs/subworkers.md, section 2 (SV_EBADREQ,
 * SV_ENOTWORKER, SV_ETOOLARGE, SV_EPERM, SV_ECONFLICT, SV_EEXHAUSTED,
 * SV_ENOTFOUND, SV_EINTERNAL).
 */
sv_err svd_subw_handle(svd_subw *sw, const svw_env *req,
    const svd_subw_caller *c, sv_subw_grant *g);

/*
 * svd_subw_fill makes id (already filled for the process by WhoAmI) the
 * identity of sub-worker g: ordinal, generation, kind, pid, context [process
 * p, thread or process n] and parent. The frames are allocated in one block
 * stored in *arenap (which must be NULL; the caller frees it after
 * encoding). Errors: SV_ENOTFOUND (g is not current), SV_ENOMEM.
 */
sv_err svd_subw_fill(const svd_subw *sw, const sv_subw_grant *g,
    const char *group, Supervise__V1__Identity *id, void **arenap);

/*
 * svd_subw_whoami makes id the identity of the registered child pid, as
 * svd_subw_fill does, and returns true; false (id untouched) when pid is not
 * a registered child or the frames cannot be allocated.
 */
bool svd_subw_whoami(const svd_subw *sw, int64_t pid, const char *group,
    Supervise__V1__Identity *id, void **arenap);

#endif /* SVD_SUBWORKERS_H */
