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

#endif
