/*
 * procinfo.h — telling one process from another across a supervisor
 * restart (internal, effect shell).
 *
 * A pid alone names a process only while it is unreaped; a supervisor that
 * crashed and came back cannot know whether the pid its predecessor wrote
 * down still belongs to the same process. The kernel's start time of a
 * process (/proc/PID/stat field 22, clock ticks since boot) together with
 * the pid does name it for the life of one boot; the boot id
 * (/proc/sys/kernel/random/boot_id) tells boots apart.
 */
#ifndef SV_SHELL_PROCINFO_H
#define SV_SHELL_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* Length of a boot id, terminator included (36 characters in practice). */
#define SV_BOOT_ID_LEN 64

/*
 * sv_proc_start_time reads the start time of pid (clock ticks after boot).
 * Errors: SV_ENOTFOUND (no such process), SV_ESYSTEM (unreadable or
 * malformed /proc entry).
 */
sv_err sv_proc_start_time(pid_t pid, uint64_t *ticksp);

/*
 * sv_boot_id writes this boot's id into buf (len bytes, terminated).
 * Errors: SV_ESYSTEM (not readable: no /proc), SV_EINVAL (len too small).
 */
sv_err sv_boot_id(char *buf, size_t len);

/*
 * sv_proc_claim opens a pidfd of pid if, and only if, pid is still the
 * process that started at start_time: the pidfd is opened first, the start
 * time read second, and the process checked alive through the pidfd third,
 * so the start time read is that of the pidfd's process. On SV_OK *pidfdp
 * (close-on-exec) belongs to the caller. Errors: SV_ENOTFOUND (gone, or the
 * pid now names another process), SV_ESYSTEM (errno says why).
 */
sv_err sv_proc_claim(pid_t pid, uint64_t start_time, int *pidfdp);

/*
 * sv_proc_find_env looks through /proc for a process whose environment
 * holds every one of the n "NAME=value" strings of want (n at most 8), and
 * writes its pid to *pidp. It finds a process its caller spawned but did not
 * get to record (a supervisor killed between the spawn and its journal
 * record): the spawn's environment names supervisor, group, ordinal and
 * generation. Processes whose environment we may not read are skipped.
 * Errors: SV_ENOTFOUND, SV_EINVAL (n out of range), SV_ESYSTEM (no /proc).
 */
sv_err sv_proc_find_env(const char *const *want, size_t n, pid_t *pidp);

#endif
