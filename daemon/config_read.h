/*
 * config_read.h — the readers of one libconfig setting that config.c's
 * key table names: integers, strings, string arrays, booleans, choices,
 * signal names, the backoff factor, and the error line they all write.
 *
 * Every reader checks one value and, on failure, writes
 * "FILE:LINE: KEY: what" into the context's buffer and returns SV_EINVAL
 * (SV_ENOMEM when a copy cannot be made). Internal to the daemon.
 */
#ifndef SVD_CONFIG_READ_H
#define SVD_CONFIG_READ_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* Where a reader reports: the file's name and the error buffer. */
typedef struct cfg_ctx {
	const char *path;
	char       *err;
	size_t      errlen;
} cfg_ctx;

/* cfg_fail writes "FILE:LINE: KEY: message" and returns SV_EINVAL. */
sv_err cfg_fail(cfg_ctx *c, const config_setting_t *s, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* cfg_oom reports an allocation failure and returns SV_ENOMEM. */
sv_err cfg_oom(cfg_ctx *c);

/* cfg_int reads an integer setting within [lo, hi] into *out. */
sv_err cfg_int(cfg_ctx *c, const config_setting_t *s, const char *key,
    int64_t lo, int64_t hi, int64_t *out);

/* cfg_str reads a string of 1..max bytes into a new copy *out (the
 * caller frees it, also after an error). */
sv_err cfg_str(cfg_ctx *c, const config_setting_t *s, const char *key,
    size_t max, char **out);

/* cfg_strv reads an array of min..max strings into a new NULL-terminated
 * vector *out of *np entries; the caller frees it, also after an error. */
sv_err cfg_strv(cfg_ctx *c, const config_setting_t *s, const char *key,
    size_t min, size_t max, char ***out, size_t *np);

/* cfg_bool reads a boolean setting. */
sv_err cfg_bool(
    cfg_ctx *c, const config_setting_t *s, const char *key, bool *b);

/* cfg_choice reads a string that must be one of choices (NULL-terminated);
 * *idx receives its index. */
sv_err cfg_choice(cfg_ctx *c, const config_setting_t *s, const char *key,
    const char *const *choices, int *idx);

/* cfg_signal reads a signal name ("TERM" or "SIGTERM") into *sig. */
sv_err cfg_signal(
    cfg_ctx *c, const config_setting_t *s, const char *key, int *sig);

/* cfg_factor reads the backoff factor, a number in 1.0..16.0. */
sv_err cfg_factor(
    cfg_ctx *c, const config_setting_t *s, const char *key, double *f);

/* cfg_env_ok tells whether an env entry is NAME=value with a sane NAME
 * that the daemon does not reserve. */
bool cfg_env_ok(const char *e);

/* cfg_program checks that argv[0] can be executed: a path with a '/' must
 * be an executable file; a bare name must be found in the daemon's PATH. */
sv_err cfg_program(
    cfg_ctx *c, const config_setting_t *e, const char *key, const char *prog);

struct svd_group_config;

/* cfg_sockets reads a group's `sockets` list s into g->sockets and
 * g->nsockets (config_sockets.c); g owns them, also after an error. */
sv_err cfg_sockets(cfg_ctx *c, const config_setting_t *s, const char *key,
    struct svd_group_config *g);

#endif /* SVD_CONFIG_READ_H */
