/*
 * config_read.c — readers of single configuration values (config_read.h):
 * the typed checks that config.c's key table points its rows at, and the
 * one error line they write. Nothing here knows which key it reads; the
 * caller passes the key's path ("groups[1].count") for the message.
 *
 * Divisions: error reporting; scalar readers; environment and program.
 */
#include <errno.h>
#include <libconfig.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_read.h"

/* ---- error reporting ------------------------------------------------------
 */

/* cfg_fail writes "FILE:LINE: KEY: message" and returns SV_EINVAL. */
sv_err
cfg_fail(cfg_ctx *c, const config_setting_t *s, const char *key,
    const char *fmt, ...)
{
	char    msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%d: %s: %s", c->path,
	    s != NULL ? config_setting_source_line(s) : 0, key, msg);
	/* One line, whatever the file's strings hold (a value may contain a
	 * newline or an escape sequence). */
	for (char *p = c->err; *p != '\0'; p++) {
		if ((unsigned char) *p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
	return SV_EINVAL;
}

/* cfg_oom reports an allocation failure. */
sv_err
cfg_oom(cfg_ctx *c)
{
	snprintf(c->err, c->errlen, "%s: out of memory", c->path);
	return SV_ENOMEM;
}

/* ---- scalar readers -------------------------------------------------------
 */

/* cfg_int reads an integer setting within [lo, hi]. */
sv_err
cfg_int(cfg_ctx *c, const config_setting_t *s, const char *key, int64_t lo,
    int64_t hi, int64_t *out)
{
	int64_t v;
	int     t = config_setting_type(s);

	if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
		return cfg_fail(c, s, key, "must be an integer in %lld..%lld",
		    (long long) lo, (long long) hi);
	}
	v = config_setting_get_int64(s);
	if (v < lo || v > hi) {
		return cfg_fail(c, s, key,
		    "must be an integer in %lld..%lld (got %lld)",
		    (long long) lo, (long long) hi, (long long) v);
	}
	*out = v;
	return SV_OK;
}

/* cfg_str reads a string setting of 1..max bytes into a new copy. */
sv_err
cfg_str(cfg_ctx *c, const config_setting_t *s, const char *key, size_t max,
    char **out)
{
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		return cfg_fail(c, s, key, "must be a string");
	}
	v = config_setting_get_string(s);
	if (v[0] == '\0') {
		return cfg_fail(c, s, key, "must not be empty");
	}
	if (strlen(v) > max) {
		return cfg_fail(c, s, key, "longer than %zu bytes", max);
	}
	if ((*out = strdup(v)) == NULL) {
		return cfg_oom(c);
	}
	return SV_OK;
}

/* cfg_strv reads an array of 1..max strings (min may be 0) into a new
 * NULL-terminated vector. */
sv_err
cfg_strv(cfg_ctx *c, const config_setting_t *s, const char *key, size_t min,
    size_t max, char ***out, size_t *np)
{
	int    t = config_setting_type(s);
	size_t n;
	char **v;
	char   ekey[128];

	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		return cfg_fail(c, s, key, "must be an array of strings");
	}
	n = (size_t) config_setting_length(s);
	if (n < min || n > max) {
		return cfg_fail(c, s, key,
		    "must have %zu..%zu entries (got %zu)", min, max, n);
	}
	if ((v = calloc(n + 1, sizeof(*v))) == NULL) {
		return cfg_oom(c);
	}
	*out = v; /* freed by the caller on error too */
	*np  = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(ekey, sizeof(ekey), "%s[%zu]", key, i);
		sv_err err
		    = cfg_str(c, config_setting_get_elem(s, (unsigned) i),
		        ekey, SVD_MAX_STRING, &v[i]);
		if (err != SV_OK) {
			return err;
		}
	}
	return SV_OK;
}

/* ---- choices, signals, the backoff factor --------------------------------
 */

/* Signals a group may name as its stop signal. */
static const struct {
	const char *name;
	int         signo;
} cfg_signals[] = {{"TERM", SIGTERM}, {"INT", SIGINT}, {"QUIT", SIGQUIT},
    {"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"KILL", SIGKILL},
    {"WINCH", SIGWINCH}};

/* cfg_choice reads a string setting that must be one of choices (a
 * NULL-terminated list); *idx receives its index. */
sv_err
cfg_choice(cfg_ctx *c, const config_setting_t *s, const char *key,
    const char *const *choices, int *idx)
{
	const char *v         = config_setting_get_string(s);
	char        list[160] = "";

	for (int i = 0; v != NULL && choices[i] != NULL; i++) {
		if (strcmp(v, choices[i]) == 0) {
			*idx = i;
			return SV_OK;
		}
	}
	for (int i = 0; choices[i] != NULL; i++) {
		size_t n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s\"%s\"",
		    i > 0 ? ", " : "", choices[i]);
	}
	return cfg_fail(c, s, key, "must be one of %s", list);
}

/* cfg_signal reads a signal name ("TERM" or "SIGTERM"). */
sv_err
cfg_signal(cfg_ctx *c, const config_setting_t *s, const char *key, int *sig)
{
	const char *v = config_setting_get_string(s);

	if (v != NULL && strncmp(v, "SIG", 3) == 0) {
		v += 3;
	}
	for (size_t i = 0;
	     v != NULL && i < sizeof(cfg_signals) / sizeof(cfg_signals[0]);
	     i++) {
		if (strcmp(v, cfg_signals[i].name) == 0) {
			*sig = cfg_signals[i].signo;
			return SV_OK;
		}
	}
	return cfg_fail(c, s, key,
	    "must be a signal name: TERM, INT, QUIT, HUP, USR1, USR2, KILL "
	    "or WINCH");
}

/* cfg_bool reads a boolean setting. */
sv_err
cfg_bool(cfg_ctx *c, const config_setting_t *s, const char *key, bool *b)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		return cfg_fail(c, s, key, "must be true or false");
	}
	*b = config_setting_get_bool(s) != 0;
	return SV_OK;
}

/* cfg_factor reads the backoff factor, a number in 1.0..16.0. */
sv_err
cfg_factor(cfg_ctx *c, const config_setting_t *s, const char *key, double *f)
{
	int    t = config_setting_type(s);
	double v;

	if (t == CONFIG_TYPE_FLOAT) {
		v = config_setting_get_float(s);
	} else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		v = (double) config_setting_get_int64(s);
	} else {
		return cfg_fail(c, s, key, "must be a number in 1.0..16.0");
	}
	if (!(v >= 1.0 && v <= SV_BACKOFF_MAX_FACTOR)) {
		return cfg_fail(c, s, key, "must be a number in 1.0..16.0");
	}
	*f = v;
	return SV_OK;
}

/* ---- environment and program ----------------------------------------------
 */

/* svd_env_reserved: the names the daemon sets for each worker (config.h). */
bool
svd_env_reserved(const char *e)
{
	static const char *const names[] = {"SUPERVISE_URL", "SUPERVISE_GROUP",
	    "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION", "SUPERVISE_PURPOSE",
	    "SUPERVISE_SUPERVISOR_ID", "SUPERVISE_FDS", "NOTIFY_SOCKET",
	    "SUPERVISE_ACTIVITY"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (strncmp(e, names[i], n) == 0
		    && (e[n] == '=' || e[n] == '\0')) {
			return true;
		}
	}
	return false;
}

/* cfg_env_ok checks that an env entry is NAME=value with a sane NAME. */
bool
cfg_env_ok(const char *e)
{
	const char *eq = strchr(e, '=');

	if (eq == NULL || eq == e) {
		return false;
	}
	for (const char *p = e; p < eq; p++) {
		char ch = *p;
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')
		        || ch == '_' || (p > e && ch >= '0' && ch <= '9'))) {
			return false;
		}
	}
	return !svd_env_reserved(e);
}

/* cfg_executable tells whether path is a regular file we may execute. */
static bool
cfg_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode)
	    && access(path, X_OK) == 0;
}

/* cfg_program checks that argv[0] can be executed: a path with a '/' must
 * be an executable file; a bare name must be found in the daemon's PATH
 * (where the daemon will look for it). */
sv_err
cfg_program(
    cfg_ctx *c, const config_setting_t *e, const char *key, const char *prog)
{
	const char *path = getenv("PATH");
	char        buf[SVD_MAX_STRING + 256];

	if (strchr(prog, '/') != NULL) {
		if (cfg_executable(prog)) {
			return SV_OK;
		}
		return cfg_fail(c, e, key,
		    "program \"%s\" is not an executable file", prog);
	}
	if (path == NULL) {
		path = "/usr/local/bin:/usr/bin:/bin";
	}
	while (*path != '\0') {
		const char *end = strchr(path, ':');
		size_t n = end != NULL ? (size_t) (end - path) : strlen(path);
		if (n > 0 && n < SVD_MAX_STRING) {
			snprintf(
			    buf, sizeof(buf), "%.*s/%s", (int) n, path, prog);
			if (cfg_executable(buf)) {
				return SV_OK;
			}
		}
		path += n;
		if (*path == ':') {
			path++;
		}
	}
	return cfg_fail(
	    c, e, key, "program \"%s\" not found in the daemon's PATH", prog);
}
