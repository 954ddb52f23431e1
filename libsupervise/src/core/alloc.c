/*
 * alloc.c — the allocation seam of the supervision core (see alloc.h): thin
 * wrappers over libc that ask an optional fault hook first.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static sv_mem_hook mem_hook;
static void       *mem_hook_arg;

/* sv_mem_set_hook: see alloc.h. */
void
sv_mem_set_hook(sv_mem_hook hook, void *arg)
{
	mem_hook     = hook;
	mem_hook_arg = arg;
}

/* mem_fails asks the hook whether this allocation is to fail. */
static bool
mem_fails(void)
{
	return mem_hook != NULL && mem_hook(mem_hook_arg);
}

/* sv_mem_malloc: malloc unless the hook says no; the caller frees. */
void *
sv_mem_malloc(size_t n)
{
	return mem_fails() ? NULL : malloc(n);
}

/* sv_mem_calloc: calloc unless the hook says no; the caller frees. */
void *
sv_mem_calloc(size_t n, size_t size)
{
	return mem_fails() ? NULL : calloc(n, size);
}

/* sv_mem_realloc: realloc unless the hook says no (p then stays as it
 * was); the caller frees. */
void *
sv_mem_realloc(void *p, size_t n)
{
	return mem_fails() ? NULL : realloc(p, n);
}

/* sv_mem_strdup: strdup unless the hook says no; the caller frees. */
char *
sv_mem_strdup(const char *s)
{
	return mem_fails() ? NULL : strdup(s);
}
