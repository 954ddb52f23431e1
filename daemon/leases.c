/*
 * leases.c — the lease shell (see leases.h): its creation from the
 * config's pools, its destruction, and what the supervisor tells it from
 * the loop (a reaped worker; a connection added or gone, which starts or
 * ends a worker's disconnect grace and withdraws the waits it carried).
 *
 * Nothing in the shell decides who gets a slot: requests become core calls
 * (leases_requests.c) and what the core answers is carried out effect by
 * effect (leases_effects.c). The records and the map of the files are in
 * leases_internal.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leases_internal.h"
#include "log.h"
#include "shell/loop.h"

/* ls_pool_view composes pool id into *buf from the core's record and the
 * shell's resource, and returns buf; NULL if the core has no such pool. */
ls_pool *
ls_pool_view(svd_leases *l, uint32_t id, ls_pool *buf)
{
	sv_lease_pool_info pi;

	if (id == 0 || id > SV_LEASE_MAX_POOLS
	    || !sv_lease_pool_get(l->core, id, &pi)) {
		return NULL;
	}
	*buf = (ls_pool) {pi.id, pi.name, pi.slots, pi.ttl_ms, pi.grace_ms,
	    pi.policy, l->res[id - 1].directory, l->res[id - 1].path};
	return buf;
}

/* ls_pool_add declares a pool in the core and records its resource in
 * the shell. */
sv_err
ls_pool_add(svd_leases *l, const char *name, uint32_t slots, uint64_t ttl_ms,
    uint64_t grace_ms, const char *path, sv_lease_policy policy,
    bool directory, uint32_t *idp)
{
	uint32_t id;
	sv_err   err;
	ls_res  *r;

	err = sv_lease_pool_add(l->core, name, slots, ttl_ms, grace_ms, policy,
	    path != NULL && path[0] != '\0', &id);
	if (err != SV_OK) {
		return err;
	}
	r  = &l->res[id - 1];
	*r = (ls_res) {NULL, directory, NULL, 0};
	if (path != NULL && path[0] != '\0') {
		r->path = strdup(path);
		r->made = calloc(slots, sizeof(*r->made));
		if (r->path == NULL || r->made == NULL) {
			free(r->path);
			free(r->made);
			*r = (ls_res) {NULL, directory, NULL, 0};
			return SV_ENOMEM;
		}
		r->nmade = slots;
	}
	if (idp != NULL) {
		*idp = id;
	}
	return SV_OK;
}

/* svd_leases_create: see leases.h. */
sv_err
svd_leases_create(const svd_config *cfg, sv_loop *loop, uint64_t epoch,
    const svd_lease_host *host, svd_leases **lp, char *err, size_t errlen)
{
	svd_leases *l;
	sv_err      rv;

	if (epoch == 0 || epoch > SV_LEASE_MAX_EPOCH) {
		snprintf(err, errlen,
		    "epoch %" PRIu64 " is beyond the lease core's range "
		    "(1..%u): leases need a fresh state directory",
		    epoch, SV_LEASE_MAX_EPOCH);
		return SV_EINVAL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL
	    || (l->pipes = calloc(SVD_LEASE_MAX_PIPES, sizeof(ls_pipe)))
	        == NULL) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return SV_ENOMEM;
	}
	l->loop = loop;
	l->h    = *host;
	if ((rv = sv_lease_core_create((uint32_t) epoch, &l->core)) != SV_OK) {
		snprintf(err, errlen, "cannot create the lease core: %s",
		    sv_strerror(rv));
		svd_leases_destroy(l);
		return rv;
	}
	for (size_t i = 0; i < cfg->npools; i++) {
		const svd_pool_config *pc = &cfg->pools[i];
		rv = ls_pool_add(l, pc->name, pc->slots, pc->ttl_ms,
		    pc->grace_ms, pc->path, pc->policy, pc->directory, NULL);
		if (rv == SV_ENOMEM) {
			snprintf(err, errlen, "out of memory");
			svd_leases_destroy(l);
			return rv;
		}
		if (rv != SV_OK) {
			svd_log("pool %s: not declared: %s", pc->name,
			    sv_strerror(rv));
		}
	}
	*lp = l;
	return SV_OK;
}

/* svd_leases_stop: see leases.h. */
void
svd_leases_stop(svd_leases *l)
{
	if (l == NULL) {
		return;
	}
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		ls_deferred *d = &l->deferred[i];
		if (d->used) {
			d->used = false;
			d->done(d->arg, NULL);
		}
	}
}

/* svd_leases_destroy: see leases.h. */
void
svd_leases_destroy(svd_leases *l)
{
	if (l == NULL) {
		return;
	}
	ls_timers_destroy(l);
	for (size_t i = 0; i < SV_LEASE_MAX_POOLS; i++) {
		free(l->res[i].path);
		free(l->res[i].made);
	}
	sv_lease_core_destroy(l->core);
	free(l->pipes);
	free(l);
}

/* svd_leases_count: see leases.h. */
size_t
svd_leases_count(const svd_leases *l)
{
	return l != NULL ? sv_lease_count(l->core) : 0;
}

/* svd_leases_worker_gone: see leases.h. */
void
svd_leases_worker_gone(svd_leases *l, sv_wkey key)
{
	if (l == NULL) {
		return;
	}
	LS_CORE_RETRY("a reaped holder",
	    sv_lease_holder_gone(l->core, key, sv_loop_now_ms()));
	ls_effects(l);
}

/* ls_pipe_count counts the tracked connections of worker key. */
static size_t
ls_pipe_count(svd_leases *l, sv_wkey key)
{
	size_t n = 0;

	for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
		const ls_pipe *p = &l->pipes[i];
		n += p->pipe != 0 && p->key.group_id == key.group_id
		    && p->key.ordinal == key.ordinal
		    && p->key.generation == key.generation;
	}
	return n;
}

/* svd_leases_pipe: see leases.h. */
void
svd_leases_pipe(svd_leases *l, uint32_t pipe, int64_t pid, bool added)
{
	uint64_t now = sv_loop_now_ms();

	if (l == NULL || pipe == 0) {
		return;
	}
	if (added) {
		sv_wkey key;
		if (pid <= 0 || !l->h.find_worker(l->h.arg, pid, &key)) {
			return;
		}
		for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
			if (l->pipes[i].pipe == 0) {
				l->pipes[i] = (ls_pipe) {pipe, key};
				if (ls_pipe_count(l, key) == 1) {
					sv_lease_holder h
					    = {SV_HOLDER_WORKER, key, 0};
					LS_CORE_RETRY("a reconnection",
					    sv_lease_holder_reconnected(
					        l->core, &h, now));
					ls_effects(l);
				}
				return;
			}
		}
		return;
	}
	/* Waiting acquires of this connection: nobody to answer. */
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		ls_deferred *d = &l->deferred[i];
		if (d->used && d->pipe == pipe) {
			d->used = false;
			LS_CORE_RETRY("a withdrawn wait",
			    sv_lease_cancel_wait(l->core, d->waiter, now));
			d->done(d->arg, NULL);
		}
	}
	for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
		if (l->pipes[i].pipe == pipe) {
			sv_wkey key      = l->pipes[i].key;
			l->pipes[i].pipe = 0;
			/* A worker that died closed its connections on its
			 * way out: its reap (holder gone) follows at once. */
			if (ls_pipe_count(l, key) == 0
			    && (l->h.worker_exited == NULL
			        || !l->h.worker_exited(l->h.arg, key))) {
				sv_lease_holder h = {SV_HOLDER_WORKER, key, 0};
				LS_CORE_RETRY("a disconnection",
				    sv_lease_holder_disconnected(
				        l->core, &h, now));
			}
			break;
		}
	}
	ls_effects(l);
}
