/*
 * alloc.h — the allocation seam of the pure cores: every allocation the
 * supervision core makes (its record, groups, seats, ordinals, intensity
 * windows, drain reports, the effect queue) and every one the lease core
 * makes (its record, pools, slots, waiters, sessions, the lease id index,
 * the effect queue) goes through these wrappers, so that a test can make
 * the Nth allocation fail (tests/test_core_faults.c,
 * tests/test_lease_faults.c) and check that the core then fails cleanly
 * (SV_ENOMEM, nothing changed).
 *
 * In production the hook is NULL and each wrapper costs one pointer test
 * on top of the libc call. Memory from these wrappers is released with
 * plain free(); who frees is said where each is called.
 */
#ifndef SV_CORE_ALLOC_H
#define SV_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* A fault hook: called before each allocation; returning true makes that
 * allocation fail (NULL) without calling libc. */
typedef bool (*sv_mem_hook)(void *arg);

/* sv_mem_set_hook installs hook (NULL: none) with its argument. For tests;
 * not thread-safe (the core is single-threaded). */
void sv_mem_set_hook(sv_mem_hook hook, void *arg);

/* malloc, calloc, realloc and strdup through the hook. On NULL nothing was
 * allocated (realloc: p is untouched). The caller frees with free(). */
void *sv_mem_malloc(size_t n);
void *sv_mem_calloc(size_t n, size_t size);
void *sv_mem_realloc(void *p, size_t n);
char *sv_mem_strdup(const char *s);

#endif
