/*
 * config.c — load and check supervised's configuration (see config.h).
 *
 * libconfig does the parsing; this file walks the resulting tree and checks
 * every setting against a table of known keys, so a typo is an error with a
 * line number rather than a silently ignored setting. Each check names the
 * key by its path ("groups[1].count").
 *
 * Divisions: error reporting; scalar readers; the group; the top level.
 */
#include <errno.h>
#include <libconfig.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "core/ordinal.h"
#include "core/subworker.h"
#include "paths.h"
#include "wire/wire.h"

typedef struct cfg_ctx {
	const char *path;
	char       *err;
	size_t      errlen;
} cfg_ctx;

/* ---- error reporting ------------------------------------------------------
 */

/* cfg_fail writes "FILE:LINE: KEY: message" and returns SV_EINVAL. */
static sv_err
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
static sv_err
cfg_oom(cfg_ctx *c)
{
	snprintf(c->err, c->errlen, "%s: out of memory", c->path);
	return SV_ENOMEM;
}

/* ---- scalar readers -------------------------------------------------------
 */

/* cfg_int reads an integer setting within [lo, hi]. */
static sv_err
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
static sv_err
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
static sv_err
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

/* cfg_env_name_ok checks that an env entry is NAME=value with a sane NAME. */
static bool
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

/* ---- the group ------------------------------------------------------------
 */

static const char *const cfg_group_keys[] = {"name", "argv", "count",
    "purpose", "env", "cwd", "max_count", "stop_timeout_ms", "min_uptime_ms",
    "backoff_initial_ms", "backoff_max_ms", "backoff_factor", "restart",
    "max_restarts", "max_seconds", "stop_signal", "on_unresponsive", "ready",
    "sequential_start", "start_timeout_ms", "on_start_timeout", "watchdog_ms",
    "admin", "notify_access", "user", "group", "die_with_supervisor",
    "sockets", "drain_timeout_ms", "drain_extend_max_ms", "drain_signal",
    "max_subworkers", "activity", NULL};

static const char *const cfg_top_keys[] = {"socket_dir", "state_dir",
    "stop_timeout_ms", "log_file", "strategy", "groups", "pools", NULL};

/* Signals a group may name as its stop signal. */
static const struct {
	const char *name;
	int         signo;
} cfg_signals[] = {{"TERM", SIGTERM}, {"INT", SIGINT}, {"QUIT", SIGQUIT},
    {"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"KILL", SIGKILL},
    {"WINCH", SIGWINCH}};

/* cfg_choice reads a string setting that must be one of choices (a
 * NULL-terminated list); *idx receives its index. */
static sv_err
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
static sv_err
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
static sv_err
cfg_bool(cfg_ctx *c, const config_setting_t *s, const char *key, bool *b)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		return cfg_fail(c, s, key, "must be true or false");
	}
	*b = config_setting_get_bool(s) != 0;
	return SV_OK;
}

/* cfg_factor reads the backoff factor, a number in 1.0..16.0. */
static sv_err
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

/* svd_default_policy fills the documented defaults (docs/config.md). */
void
svd_default_policy(sv_group_policy *p, uint64_t stop_timeout_ms)
{
	*p = (sv_group_policy) {
	    .restart             = SV_RESTART_PERMANENT,
	    .backoff             = {1000, 100, 30000, 2.0},
	    .max_restarts        = 0,
	    .max_window_ms       = 60000,
	    .stop_signal         = SIGTERM,
	    .stop_timeout_ms     = stop_timeout_ms,
	    .on_unresponsive     = SV_UNRESPONSIVE_ESCALATE,
	    .need_ready          = false,
	    .sequential          = false,
	    .start_timeout_ms    = 0,
	    .on_start_timeout    = SV_START_TIMEOUT_KILL,
	    .watchdog_ms         = 0,
	    .drain_timeout_ms    = 30000,
	    .drain_extend_max_ms = 60000,
	    .drain_signal        = -1, /* the stop signal */
	};
}

/* cfg_known tells whether name is in the NULL-terminated table keys. */
static bool
cfg_known(const char *const *keys, const char *name)
{
	for (size_t i = 0; keys[i] != NULL; i++) {
		if (strcmp(keys[i], name) == 0) {
			return true;
		}
	}
	return false;
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
static sv_err
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

/* cfg_group_policy reads one supervision key of a group into p. */
static sv_err
cfg_group_policy(cfg_ctx *c, const config_setting_t *e, const char *name,
    const char *key, sv_group_policy *p)
{
	static const char *const restarts[]
	    = {"permanent", "transient", "temporary", NULL};
	static const char *const unresp[]   = {"escalate", "abandon", NULL};
	static const char *const start_to[] = {"kill", "abandon", NULL};
	int64_t                  v          = 0;
	int                      idx        = 0;
	sv_err                   err;

	if (strcmp(name, "restart") == 0) {
		err        = cfg_choice(c, e, key, restarts, &idx);
		p->restart = (sv_restart_type) idx;
	} else if (strcmp(name, "on_unresponsive") == 0) {
		err                = cfg_choice(c, e, key, unresp, &idx);
		p->on_unresponsive = (sv_on_unresponsive) idx;
	} else if (strcmp(name, "on_start_timeout") == 0) {
		err                 = cfg_choice(c, e, key, start_to, &idx);
		p->on_start_timeout = (sv_on_start_timeout) idx;
	} else if (strcmp(name, "stop_signal") == 0) {
		err = cfg_signal(c, e, key, &p->stop_signal);
	} else if (strcmp(name, "drain_signal") == 0) {
		const char *dv = config_setting_get_string(e);
		/* "none" or "": the notice only, no signal */
		if (dv != NULL && (dv[0] == '\0' || strcmp(dv, "none") == 0)) {
			p->drain_signal = 0;
			err             = SV_OK;
		} else {
			err = cfg_signal(c, e, key, &p->drain_signal);
		}
	} else if (strcmp(name, "ready") == 0) {
		err = cfg_bool(c, e, key, &p->need_ready);
	} else if (strcmp(name, "sequential_start") == 0) {
		err = cfg_bool(c, e, key, &p->sequential);
	} else if (strcmp(name, "backoff_factor") == 0) {
		err = cfg_factor(c, e, key, &p->backoff.factor);
	} else if (strcmp(name, "max_restarts") == 0) {
		err             = cfg_int(c, e, key, 0, SV_INTENSITY_MAX, &v);
		p->max_restarts = (uint32_t) v;
	} else if (strcmp(name, "max_seconds") == 0) {
		err              = cfg_int(c, e, key, 1, 86400, &v);
		p->max_window_ms = (uint64_t) v * 1000;
	} else {
		err = cfg_int(c, e, key, 0, SVD_MAX_TIMEOUT_MS, &v);
		if (strcmp(name, "stop_timeout_ms") == 0) {
			p->stop_timeout_ms = (uint64_t) v;
		} else if (strcmp(name, "min_uptime_ms") == 0) {
			p->backoff.healthy_ms = (uint64_t) v;
		} else if (strcmp(name, "backoff_initial_ms") == 0) {
			p->backoff.initial_ms = (uint64_t) v;
		} else if (strcmp(name, "backoff_max_ms") == 0) {
			p->backoff.max_ms = (uint64_t) v;
		} else if (strcmp(name, "start_timeout_ms") == 0) {
			p->start_timeout_ms = (uint64_t) v;
		} else if (strcmp(name, "drain_timeout_ms") == 0) {
			p->drain_timeout_ms = (uint64_t) v;
		} else if (strcmp(name, "drain_extend_max_ms") == 0) {
			p->drain_extend_max_ms = (uint64_t) v;
		} else {
			p->watchdog_ms = (uint64_t) v;
		}
	}
	return err;
}

/* cfg_ident reads user or group: a name, or a number given as a string or
 * an integer (0..4294967294). */
/* cfg_socket reads one entry of a group's `sockets` list into sc. */
static sv_err
cfg_socket(cfg_ctx *c, const config_setting_t *e, const char *base,
    svd_socket_config *sc)
{
	static const char *const types[]
	    = {"dgram", "stream", "seqpacket", NULL};
	static const int socktypes[]
	    = {SOCK_DGRAM, SOCK_STREAM, SOCK_SEQPACKET};
	char   key[400];
	int    idx = 0;
	sv_err err = SV_OK;

	sc->type = SOCK_DGRAM;
	sc->mode = 0600;
	if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
		return cfg_fail(c, e, base, "must be a group { name; path; }");
	}
	for (int i = 0; err == SV_OK && i < config_setting_length(e); i++) {
		const config_setting_t *f
		    = config_setting_get_elem(e, (unsigned) i);
		const char *name = config_setting_name(f);
		snprintf(key, sizeof(key), "%s.%s", base, name);
		if (strcmp(name, "name") == 0) {
			err = cfg_str(
			    c, f, key, SVD_SOCKET_NAME_MAX, &sc->name);
			if (err == SV_OK
			    && (sc->name[0] == '\0'
			        || strspn(sc->name,
			               "abcdefghijklmnopqrstuvwxyz"
			               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
			               "-")
			            != strlen(sc->name))) {
				err = cfg_fail(c, f, key,
				    "letters, digits, '_' and '-' only");
			}
		} else if (strcmp(name, "path") == 0) {
			err = cfg_str(c, f, key,
			    sizeof(((struct sockaddr_un *) 0)->sun_path) - 1,
			    &sc->path);
			if (err == SV_OK && sc->path[0] != '/') {
				err = cfg_fail(
				    c, f, key, "must be an absolute path");
			}
		} else if (strcmp(name, "type") == 0) {
			err      = cfg_choice(c, f, key, types, &idx);
			sc->type = socktypes[idx];
		} else if (strcmp(name, "mode") == 0) {
			/* A string: libconfig has no octal numbers. */
			char         *m = NULL, *end = NULL;
			unsigned long mv = 0;
			err              = cfg_str(c, f, key, 4, &m);
			if (err == SV_OK && m != NULL) {
				mv = strtoul(m, &end, 8);
				if (m[0] == '\0' || *end != '\0'
				    || mv > 0777) {
					err = cfg_fail(c, f, key,
					    "must be an octal mode such as "
					    "\"0660\"");
				}
			}
			free(m);
			sc->mode = (uint32_t) mv;
		} else {
			err = cfg_fail(c, f, key, "unknown key");
		}
	}
	if (err == SV_OK && (sc->name == NULL || sc->path == NULL)) {
		err = cfg_fail(c, e, base, "needs a name and a path");
	}
	return err;
}

/* cfg_sockets reads a group's `sockets` list. */
static sv_err
cfg_sockets(cfg_ctx *c, const config_setting_t *s, const char *key,
    svd_group_config *g)
{
	int  n = config_setting_length(s);
	char base[300];

	if (config_setting_type(s) != CONFIG_TYPE_LIST || n < 1
	    || n > SVD_MAX_SOCKETS) {
		return cfg_fail(c, s, key, "must be a list of 1..%d groups",
		    SVD_MAX_SOCKETS);
	}
	if ((g->sockets = calloc((size_t) n, sizeof(*g->sockets))) == NULL) {
		return cfg_oom(c);
	}
	for (int i = 0; i < n; i++) {
		sv_err err;
		snprintf(base, sizeof(base), "%s[%d]", key, i);
		g->nsockets = (size_t) i + 1;
		err = cfg_socket(c, config_setting_get_elem(s, (unsigned) i),
		    base, &g->sockets[i]);
		if (err != SV_OK) {
			return err;
		}
		for (int j = 0; j < i; j++) {
			if (strcmp(g->sockets[j].name, g->sockets[i].name)
			    == 0) {
				return cfg_fail(c,
				    config_setting_get_elem(s, (unsigned) i),
				    base,
				    "a socket named \"%s\" is listed twice",
				    g->sockets[i].name);
			}
		}
	}
	return SV_OK;
}

static sv_err
cfg_ident(cfg_ctx *c, const config_setting_t *s, const char *key, char **out)
{
	int t = config_setting_type(s);

	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		int64_t v = 0;
		char    num[24];
		sv_err  err = cfg_int(c, s, key, 0, 4294967294LL, &v);
		if (err != SV_OK) {
			return err;
		}
		snprintf(num, sizeof(num), "%lld", (long long) v);
		return (*out = strdup(num)) != NULL ? SV_OK : cfg_oom(c);
	}
	if (t != CONFIG_TYPE_STRING) {
		return cfg_fail(c, s, key, "must be a name or a number");
	}
	return cfg_str(c, s, key, SV_CREDS_MAX_NAME, out);
}

/* cfg_creds resolves a group's user and group (privileges.h) into
 * g->creds; the error names the user key (us) or the group key (gs). */
static sv_err
cfg_creds(cfg_ctx *c, const config_setting_t *us, const config_setting_t *gs,
    const char *base, svd_group_config *g)
{
	char   msg[256], key[160];
	sv_err err;

	if (g->user == NULL) {
		snprintf(key, sizeof(key), "%s.group", base);
		return cfg_fail(c, gs, key,
		    "group needs user (the user to run the workers as)");
	}
	err = sv_creds_resolve(g->user, g->group, &g->creds, msg, sizeof(msg));
	if (err == SV_OK) {
		return SV_OK;
	}
	if (err == SV_ENOMEM) {
		return cfg_oom(c);
	}
	/* An unknown group is the group key's fault; the rest the user's. */
	if (gs != NULL && strstr(msg, "unknown group") != NULL) {
		snprintf(key, sizeof(key), "%s.group", base);
		return cfg_fail(c, gs, key, "%s", msg);
	}
	snprintf(key, sizeof(key), "%s.user", base);
	return cfg_fail(c, us, key, "%s", msg);
}

/* cfg_group reads one group setting into g. */
static sv_err
cfg_group(cfg_ctx *c, const config_setting_t *s, size_t idx,
    uint64_t stop_default, svd_group_config *g)
{
	char                    key[160], base[32];
	const config_setting_t *e, *us = NULL, *gs = NULL;
	int64_t                 v = 0;
	sv_err                  err;
	bool                    have_count = false, have_max = false;

	snprintf(base, sizeof(base), "groups[%zu]", idx);
	if (config_setting_type(s) != CONFIG_TYPE_GROUP) {
		return cfg_fail(c, s, base, "must be a group { ... }");
	}
	g->max_count = SVD_DEFAULT_MAX;
	g->activity  = true;
	svd_default_policy(&g->pol, stop_default);

	for (int i = 0; i < config_setting_length(s); i++) {
		e                = config_setting_get_elem(s, (unsigned) i);
		const char *name = config_setting_name(e);
		snprintf(key, sizeof(key), "%s.%s", base, name);
		if (!cfg_known(cfg_group_keys, name)) {
			return cfg_fail(c, e, key, "unknown key");
		}
		if (strcmp(name, "name") == 0) {
			err = cfg_str(c, e, key, SVW_MAX_NAME, &g->name);
			if (err == SV_OK && svw_check_name(g->name) != SV_OK) {
				err = cfg_fail(c, e, key,
				    "must be 1..64 characters of "
				    "[A-Za-z0-9_.-]");
			}
		} else if (strcmp(name, "argv") == 0) {
			err = cfg_strv(
			    c, e, key, 1, SVD_MAX_ARGV, &g->argv, &g->argc);
			if (err == SV_OK && g->argv != NULL && g->argc > 0) {
				err = cfg_program(c, e, key, g->argv[0]);
			}
		} else if (strcmp(name, "env") == 0) {
			err = cfg_strv(
			    c, e, key, 0, SVD_MAX_ENV, &g->env, &g->nenv);
			for (size_t k = 0; err == SV_OK && k < g->nenv; k++) {
				if (!cfg_env_ok(g->env[k])) {
					err = cfg_fail(c, e, key,
					    "entry \"%s\" is not NAME=value "
					    "(the SUPERVISE_ names the "
					    "daemon sets are reserved)",
					    g->env[k]);
				}
			}
		} else if (strcmp(name, "purpose") == 0) {
			err = cfg_str(c, e, key, SVD_MAX_PURPOSE, &g->purpose);
		} else if (strcmp(name, "cwd") == 0) {
			struct stat st;
			err = cfg_str(c, e, key, SVD_MAX_STRING, &g->cwd);
			if (err == SV_OK && g->cwd == NULL) {
				err = cfg_fail(c, e, key, "must be a string");
			} else if (err == SV_OK && stat(g->cwd, &st) != 0) {
				err = cfg_fail(c, e, key,
				    "cannot use \"%s\": %s", g->cwd,
				    strerror(errno));
			} else if (err == SV_OK && !S_ISDIR(st.st_mode)) {
				err = cfg_fail(c, e, key,
				    "\"%s\" is not a directory", g->cwd);
			}
		} else if (strcmp(name, "count") == 0) {
			err      = cfg_int(c, e, key, 0, SV_ORDINALS_MAX, &v);
			g->count = (uint32_t) v;
			have_count = true;
		} else if (strcmp(name, "max_count") == 0) {
			err = cfg_int(c, e, key, 1, SV_ORDINALS_MAX, &v);
			g->max_count = (uint32_t) v;
			have_max     = true;
		} else if (strcmp(name, "max_subworkers") == 0) {
			err = cfg_int(c, e, key, 1, SV_SUBW_MAX, &v);
			g->max_subworkers = (uint32_t) v;
		} else if (strcmp(name, "admin") == 0) {
			err = cfg_bool(c, e, key, &g->admin);
		} else if (strcmp(name, "die_with_supervisor") == 0) {
			err = cfg_bool(c, e, key, &g->die_with_supervisor);
		} else if (strcmp(name, "activity") == 0) {
			err = cfg_bool(c, e, key, &g->activity);
		} else if (strcmp(name, "sockets") == 0) {
			err = cfg_sockets(c, e, key, g);
		} else if (strcmp(name, "user") == 0) {
			us  = e;
			err = cfg_ident(c, e, key, &g->user);
		} else if (strcmp(name, "group") == 0) {
			gs  = e;
			err = cfg_ident(c, e, key, &g->group);
		} else if (strcmp(name, "notify_access") == 0) {
			static const char *const access[]
			    = {"main", "all", NULL};
			int choice    = 0;
			err           = cfg_choice(c, e, key, access, &choice);
			g->notify_all = choice == 1;
		} else {
			err = cfg_group_policy(c, e, name, key, &g->pol);
		}
		if (err != SV_OK) {
			return err;
		}
	}
	if (g->name == NULL) {
		return cfg_fail(c, s, base, "missing required key \"name\"");
	}
	if (g->argv == NULL) {
		return cfg_fail(
		    c, s, g->name, "missing required key \"argv\"");
	}
	if (g->purpose == NULL) {
		return cfg_fail(
		    c, s, g->name, "missing required key \"purpose\"");
	}
	if (!have_count) {
		return cfg_fail(
		    c, s, g->name, "missing required key \"count\"");
	}
	if (!have_max && g->count > g->max_count) {
		g->max_count = g->count;
	}
	if (g->count > g->max_count) {
		return cfg_fail(c, s, g->name,
		    "count %u is above max_count %u", g->count, g->max_count);
	}
	if (g->pol.backoff.max_ms < g->pol.backoff.initial_ms) {
		return cfg_fail(c, s, g->name,
		    "backoff_max_ms is below backoff_initial_ms");
	}
	if (us != NULL || gs != NULL) {
		return cfg_creds(c, us, gs, base, g);
	}
	return SV_OK;
}

/* ---- the top level --------------------------------------------------------
 */

/* cfg_groups reads the groups list. */
static sv_err
cfg_groups(cfg_ctx *c, const config_setting_t *s, svd_config *cfg)
{
	size_t n;
	int    t = config_setting_type(s);

	if (t != CONFIG_TYPE_LIST) {
		return cfg_fail(
		    c, s, "groups", "must be a list ( { ... }, ... )");
	}
	n = (size_t) config_setting_length(s);
	if (n < 1 || n > SVD_MAX_GROUPS) {
		return cfg_fail(c, s, "groups",
		    "must have 1..%d entries (got %zu)", SVD_MAX_GROUPS, n);
	}
	if ((cfg->groups = calloc(n, sizeof(*cfg->groups))) == NULL) {
		return cfg_oom(c);
	}
	cfg->ngroups = n;
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *g
		    = config_setting_get_elem(s, (unsigned) i);
		sv_err err = cfg_group(
		    c, g, i, cfg->stop_timeout_ms, &cfg->groups[i]);
		if (err != SV_OK) {
			return err;
		}
		for (size_t j = 0; j < i; j++) {
			if (cfg->groups[j].name != NULL
			    && strcmp(cfg->groups[j].name, cfg->groups[i].name)
			        == 0) {
				return cfg_fail(c, g, cfg->groups[i].name,
				    "duplicate group name");
			}
		}
	}
	return SV_OK;
}

/* cfg_top reads the root setting. */
static sv_err
cfg_top(cfg_ctx *c, const config_setting_t *root, svd_config *cfg)
{
	const config_setting_t *groups = NULL;
	int64_t                 v      = 0;
	sv_err                  err    = SV_OK;

	cfg->stop_timeout_ms = 5000;
	/* stop_timeout_ms first: groups inherit it. */
	for (int i = 0; i < config_setting_length(root); i++) {
		const config_setting_t *e
		    = config_setting_get_elem(root, (unsigned) i);
		const char *name = config_setting_name(e);
		if (!cfg_known(cfg_top_keys, name)) {
			return cfg_fail(c, e, name, "unknown key");
		}
		if (strcmp(name, "socket_dir") == 0) {
			err = cfg_str(
			    c, e, name, SVD_MAX_SOCKET_DIR, &cfg->socket_dir);
			if (err == SV_OK && cfg->socket_dir != NULL
			    && cfg->socket_dir[0] != '/') {
				err = cfg_fail(
				    c, e, name, "must be an absolute path");
			}
		} else if (strcmp(name, "state_dir") == 0) {
			err = cfg_str(
			    c, e, name, SVD_MAX_STRING, &cfg->state_dir);
			if (err == SV_OK && cfg->state_dir != NULL
			    && cfg->state_dir[0] != '/') {
				err = cfg_fail(
				    c, e, name, "must be an absolute path");
			}
		} else if (strcmp(name, "log_file") == 0) {
			err = cfg_str(
			    c, e, name, SVD_MAX_STRING, &cfg->log_file);
		} else if (strcmp(name, "stop_timeout_ms") == 0) {
			err = cfg_int(c, e, name, 0, SVD_MAX_TIMEOUT_MS, &v);
			cfg->stop_timeout_ms = (uint64_t) v;
		} else if (strcmp(name, "strategy") == 0) {
			static const char *const names[] = {"one_for_one",
			    "one_for_all", "rest_for_one", NULL};
			int                      idx     = 0;
			err           = cfg_choice(c, e, name, names, &idx);
			cfg->strategy = (sv_strategy) idx;
		} else if (strcmp(name, "pools") == 0) {
			err = svd_config_pools(
			    c->path, e, cfg, c->err, c->errlen);
		} else {
			groups = e;
		}
		if (err != SV_OK) {
			return err;
		}
	}
	if (groups == NULL) {
		snprintf(c->err, c->errlen,
		    "%s: groups: missing required key \"groups\"", c->path);
		return SV_EINVAL;
	}
	return cfg_groups(c, groups, cfg);
}

sv_err
svd_config_load(
    const char *path, svd_config **cfgp, char *errbuf, size_t errlen)
{
	config_t    lc;
	svd_config *cfg;
	cfg_ctx     c = {path, errbuf, errlen};
	sv_err      err;
	FILE       *f;

	/* Open it ourselves for a clear error; libconfig then parses. */
	if ((f = fopen(path, "re")) == NULL) {
		snprintf(errbuf, errlen, "%s: cannot read: %s", path,
		    strerror(errno));
		return SV_ENOTFOUND;
	}
	{
		struct stat st;
		if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
			snprintf(errbuf, errlen, "%s: cannot read: %s", path,
			    S_ISDIR(st.st_mode) ? "is a directory"
			                        : "not a regular file");
			fclose(f);
			return SV_ENOTFOUND;
		}
	}
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL) {
		fclose(f);
		return cfg_oom(&c);
	}
	config_init(&lc);
	if (config_read(&lc, f) != CONFIG_TRUE) {
		snprintf(errbuf, errlen, "%s:%d: syntax error: %s", path,
		    config_error_line(&lc), config_error_text(&lc));
		err = SV_EINVAL;
	} else {
		err = cfg_top(&c, config_root_setting(&lc), cfg);
	}
	config_destroy(&lc);
	fclose(f);
	if (err == SV_OK && cfg->socket_dir == NULL) {
		char dir[512];
		if (svi_default_dir(dir, sizeof(dir)) != SV_OK
		    || (cfg->socket_dir = strdup(dir)) == NULL) {
			err = cfg_oom(&c);
		}
	}
	if (err != SV_OK) {
		svd_config_free(cfg);
		return err;
	}
	*cfgp = cfg;
	return SV_OK;
}

sv_err
svd_config_load_text(const char *label, const char *text, svd_config **cfgp,
    char *errbuf, size_t errlen)
{
	config_t    lc;
	svd_config *cfg;
	cfg_ctx     c = {label, errbuf, errlen};
	sv_err      err;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL) {
		return cfg_oom(&c);
	}
	config_init(&lc);
	if (config_read_string(&lc, text) != CONFIG_TRUE) {
		snprintf(errbuf, errlen, "%s:%d: syntax error: %s", label,
		    config_error_line(&lc), config_error_text(&lc));
		err = SV_EINVAL;
	} else {
		err = cfg_top(&c, config_root_setting(&lc), cfg);
	}
	config_destroy(&lc);
	if (err != SV_OK) {
		svd_config_free(cfg);
		return err;
	}
	*cfgp = cfg;
	return SV_OK;
}

/* cfg_free_strv frees a NULL-terminated vector. */
static void
cfg_free_strv(char **v)
{
	if (v != NULL) {
		for (size_t i = 0; v[i] != NULL; i++) {
			free(v[i]);
		}
		free(v);
	}
}

void
svd_config_free(svd_config *cfg)
{
	if (cfg == NULL) {
		return;
	}
	for (size_t i = 0; i < cfg->ngroups; i++) {
		svd_group_config *g = &cfg->groups[i];
		free(g->name);
		cfg_free_strv(g->argv);
		cfg_free_strv(g->env);
		free(g->purpose);
		free(g->cwd);
		free(g->user);
		free(g->group);
		for (size_t k = 0; k < g->nsockets; k++) {
			free(g->sockets[k].name);
			free(g->sockets[k].path);
		}
		free(g->sockets);
	}
	free(cfg->groups);
	svd_config_pools_free(cfg);
	free(cfg->socket_dir);
	free(cfg->log_file);
	free(cfg->state_dir);
	free(cfg);
}
