/*
 * config.c — load and check supervised's configuration (see config.h).
 *
 * libconfig does the parsing; this file walks the resulting tree and reads
 * every setting through one table of known keys, built from the rows of
 * config_keys.def (shared with supervisectl spawn and the docs check): a
 * row names the key, its type, range, the member of svd_group_config it
 * sets and the reader of its value. One loop looks each setting up in the
 * table and calls the row's reader; a key without a row is an error with a
 * line number ("unknown key") and sets nothing. Each check names the key
 * by its path ("groups[1].count").
 *
 * Divisions: the key table and its readers; sockets and credentials; the
 * group; the top level; loading and freeing.
 */
#include <errno.h>
#include <libconfig.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "config_read.h"
#include "core/intensity.h"
#include "core/ordinal.h"
#include "core/subworker.h"
#include "paths.h"
#include "room.h"
#include "wire/wire.h"

/* ---- the key table and its readers ----------------------------------------
 */

typedef struct cfg_key cfg_key;

/*
 * A reader of one group key: checks setting e (named key in messages)
 * against row k and stores it at field, the row's member of g. Special
 * readers (argv, env, sockets) also set g's companion members.
 */
typedef sv_err     cfg_parse(cfg_ctx *c, const config_setting_t *e,
        const char *key, const cfg_key *k, void *field, svd_group_config *g);
typedef cfg_parse *cfg_parse_fn;

/* One row of the group key table (config_keys.def). */
struct cfg_key {
	const char        *name;
	const char        *type; /* as docs/config.md writes it */
	int64_t            min, max; /* integer range, or length bounds */
	size_t             off; /* of the member in svd_group_config */
	size_t             size; /* of that member */
	cfg_parse_fn       parse;
	const char *const *choices; /* NULL-terminated, or NULL */
	bool               option; /* a GroupSpec option, not a field */
	const char        *doc;
};

static cfg_parse cfg_p_name, cfg_p_argv, cfg_p_int, cfg_p_str, cfg_p_env,
    cfg_p_cwd, cfg_p_choice, cfg_p_signal, cfg_p_seconds, cfg_p_factor,
    cfg_p_bool, cfg_p_ident, cfg_p_drain_signal, cfg_p_sockets;

/* Row indices, in table order. */
enum {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d) CFG_K_##n,
#define SV_TOP_KEY(n, t, d)
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
	CFG_NKEYS
};

#define CFG_SPEC_FIELD   false
#define CFG_SPEC_OPTION  true
#define CFG_CHOICES(...) ((const char *const[]) {__VA_ARGS__, NULL})

/* The keys of a group: the one list of what a group may set. */
static const cfg_key cfg_group_keys[CFG_NKEYS] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d) \
	{#n, t, (int64_t) (lo), (int64_t) (hi),     \
	    offsetof(svd_group_config, m),          \
	    sizeof(((svd_group_config *) 0)->m), p, ch, CFG_SPEC_##sp, d},
#define SV_TOP_KEY(n, t, d)
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
};

/* Top-level row indices, in table order. */
enum {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d)
#define SV_TOP_KEY(n, t, d) CFG_T_##n,
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
	CFG_NTOP
};

/* The top-level keys (read by cfg_top, one case each). */
static const char *const cfg_top_keys[CFG_NTOP] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d)
#define SV_TOP_KEY(n, t, d) #n,
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
};

/* cfg_group_key finds name's row of the group table, or returns NULL. */
static const cfg_key *
cfg_group_key(const char *name)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (strcmp(cfg_group_keys[i].name, name) == 0) {
			return &cfg_group_keys[i];
		}
	}
	return NULL;
}

/* svd_config_spec_option: a group key a GroupSpec gives as an option. */
bool
svd_config_spec_option(const char *key)
{
	const cfg_key *k = key != NULL ? cfg_group_key(key) : NULL;

	return k != NULL && k->option;
}

/* cfg_top_key finds name's index in the top-level table, or -1. */
static int
cfg_top_key(const char *name)
{
	for (int i = 0; i < CFG_NTOP; i++) {
		if (strcmp(cfg_top_keys[i], name) == 0) {
			return i;
		}
	}
	return -1;
}

/* cfg_p_int reads an integer in the row's range into a uint32_t or a
 * uint64_t member. */
static sv_err
cfg_p_int(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	int64_t v   = 0;
	sv_err  err = cfg_int(c, e, key, k->min, k->max, &v);

	(void) g;
	if (err == SV_OK && k->size == sizeof(uint32_t)) {
		*(uint32_t *) field = (uint32_t) v;
	} else if (err == SV_OK) {
		*(uint64_t *) field = (uint64_t) v;
	}
	return err;
}

/* cfg_p_seconds reads a number of seconds in the row's range into a
 * uint64_t member in milliseconds. */
static sv_err
cfg_p_seconds(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	int64_t v   = 0;
	sv_err  err = cfg_int(c, e, key, k->min, k->max, &v);

	(void) g;
	if (err == SV_OK) {
		*(uint64_t *) field = (uint64_t) v * 1000;
	}
	return err;
}

/* cfg_p_bool reads a boolean member. */
static sv_err
cfg_p_bool(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	(void) k;
	(void) g;
	return cfg_bool(c, e, key, (bool *) field);
}

/* cfg_p_choice reads one of the row's words; its index goes into an enum
 * member (int-sized), or into a bool member (index 1 is true). */
static sv_err
cfg_p_choice(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	int    idx = 0;
	sv_err err = cfg_choice(c, e, key, k->choices, &idx);

	(void) g;
	if (err == SV_OK && k->size == sizeof(bool)) {
		*(bool *) field = idx == 1;
	} else if (err == SV_OK) {
		*(int *) field = idx;
	}
	return err;
}

/* cfg_p_signal reads a signal name into an int member. */
static sv_err
cfg_p_signal(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	(void) k;
	(void) g;
	return cfg_signal(c, e, key, (int *) field);
}

/* cfg_p_drain_signal reads a signal name, or "none" or "" (the notice
 * only, no signal: 0). */
static sv_err
cfg_p_drain_signal(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	const char *dv = config_setting_get_string(e);

	if (dv != NULL && (dv[0] == '\0' || strcmp(dv, "none") == 0)) {
		*(int *) field = 0;
		return SV_OK;
	}
	return cfg_p_signal(c, e, key, k, field, g);
}

/* cfg_p_factor reads the backoff factor into a double member. */
static sv_err
cfg_p_factor(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	(void) k;
	(void) g;
	return cfg_factor(c, e, key, (double *) field);
}

/* cfg_p_str reads a string of at most max bytes into a char * member (a
 * copy g owns). */
static sv_err
cfg_p_str(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	(void) g;
	return cfg_str(c, e, key, (size_t) k->max, (char **) field);
}

/* cfg_p_name reads the group's name, which must be a valid group name. */
static sv_err
cfg_p_name(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	sv_err err = cfg_str(c, e, key, SVW_MAX_NAME, (char **) field);

	(void) k;
	if (err == SV_OK && svw_check_name(g->name) != SV_OK) {
		err = cfg_fail(
		    c, e, key, "must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	return err;
}

/* cfg_p_argv reads argv (and argc) and checks that its program can be
 * executed. */
static sv_err
cfg_p_argv(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	sv_err err = cfg_strv(c, e, key, (size_t) k->min, (size_t) k->max,
	    (char ***) field, &g->argc);

	if (err == SV_OK && g->argv != NULL && g->argc > 0) {
		err = cfg_program(c, e, key, g->argv[0]);
	}
	return err;
}

/* cfg_p_env reads env (and nenv); every entry must be NAME=value with a
 * name the daemon does not reserve. */
static sv_err
cfg_p_env(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	sv_err err = cfg_strv(c, e, key, (size_t) k->min, (size_t) k->max,
	    (char ***) field, &g->nenv);

	for (size_t i = 0; err == SV_OK && i < g->nenv; i++) {
		if (!cfg_env_ok(g->env[i])) {
			err = cfg_fail(c, e, key,
			    "entry \"%s\" is not NAME=value (the SUPERVISE_ "
			    "names the daemon sets are reserved)",
			    g->env[i]);
		}
	}
	return err;
}

/* cfg_p_cwd reads cwd, which must be an existing directory. */
static sv_err
cfg_p_cwd(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	struct stat st;
	sv_err      err = cfg_str(c, e, key, (size_t) k->max, (char **) field);

	if (err == SV_OK && g->cwd == NULL) {
		err = cfg_fail(c, e, key, "must be a string");
	} else if (err == SV_OK && stat(g->cwd, &st) != 0) {
		err = cfg_fail(c, e, key, "cannot use \"%s\": %s", g->cwd,
		    strerror(errno));
	} else if (err == SV_OK && !S_ISDIR(st.st_mode)) {
		err = cfg_fail(c, e, key, "\"%s\" is not a directory", g->cwd);
	}
	return err;
}

/* cfg_p_ident reads user or group: a name, or a number given as a string
 * or an integer (0..4294967294), kept as written. */
static sv_err
cfg_p_ident(cfg_ctx *c, const config_setting_t *s, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	int    t   = config_setting_type(s);
	char **out = field;

	(void) k;
	(void) g;
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

/* ---- sockets and credentials ----------------------------------------------
 */

/* cfg_p_sockets reads the group's `sockets` list (and nsockets). */
static sv_err
cfg_p_sockets(cfg_ctx *c, const config_setting_t *e, const char *key,
    const cfg_key *k, void *field, svd_group_config *g)
{
	(void) k;
	(void) field;
	return cfg_sockets(c, e, key, g);
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

/* ---- the group ------------------------------------------------------------
 */

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

/* cfg_group_check checks what no single key can: the required keys (seen
 * holds each row's setting, NULL when absent), count against max_count,
 * an explicit max_count against the machine's limits (room.c), the
 * backoff bounds, and the credentials. */
static sv_err
cfg_group_check(cfg_ctx *c, const config_setting_t *s, const char *base,
    const config_setting_t *const *seen, svd_group_config *g)
{
	static const struct {
		const char *key;
		size_t      row;
	} required[] = {{"name", CFG_K_name}, {"argv", CFG_K_argv},
	    {"purpose", CFG_K_purpose}, {"count", CFG_K_count}};
	char k[64];

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (seen[required[i].row] == NULL) {
			(void) snprintf(
			    k, sizeof(k), "%s.%s", base, required[i].key);
			return cfg_fail(c, s, k,
			    "missing required key \"%s\"%s%s", required[i].key,
			    g->name != NULL ? " in group " : "",
			    g->name != NULL ? g->name : "");
		}
	}
	if (seen[CFG_K_max_count] == NULL && g->count > g->max_count) {
		g->max_count = g->count;
	}
	if (g->count > g->max_count) {
		(void) snprintf(k, sizeof(k), "%s.count", base);
		return cfg_fail(c, seen[CFG_K_count], k,
		    "%u is above max_count %u", g->count, g->max_count);
	}
	if (seen[CFG_K_max_count] != NULL) {
		/* A ceiling the machine cannot hold is refused, not left to
		 * fail worker by worker (room.c). */
		svd_room room;
		char     why[256];
		svd_room_read(&room);
		if (!svd_room_fits(&room, g->max_count, why, sizeof(why))) {
			(void) snprintf(k, sizeof(k), "%s.max_count", base);
			return cfg_fail(c, seen[CFG_K_max_count], k,
			    "%u is above what this machine allows: %s",
			    g->max_count, why);
		}
	}
	if (g->pol.backoff.max_ms < g->pol.backoff.initial_ms) {
		return cfg_fail(c, s, g->name,
		    "backoff_max_ms is below backoff_initial_ms");
	}
	if (seen[CFG_K_user] != NULL || seen[CFG_K_group] != NULL) {
		return cfg_creds(
		    c, seen[CFG_K_user], seen[CFG_K_group], base, g);
	}
	return SV_OK;
}

/* cfg_group reads one group setting into g: the defaults, then each key
 * through its row of the table, then the checks across keys. */
static sv_err
cfg_group(cfg_ctx *c, const config_setting_t *s, size_t idx,
    uint64_t stop_default, svd_group_config *g)
{
	const config_setting_t *seen[CFG_NKEYS] = {NULL};
	char                    key[160], base[32];

	snprintf(base, sizeof(base), "groups[%zu]", idx);
	if (config_setting_type(s) != CONFIG_TYPE_GROUP) {
		return cfg_fail(c, s, base, "must be a group { ... }");
	}
	g->max_count = SVD_DEFAULT_MAX;
	g->activity  = true;
	svd_default_policy(&g->pol, stop_default);

	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e
		    = config_setting_get_elem(s, (unsigned) i);
		const char    *name = config_setting_name(e);
		const cfg_key *k    = cfg_group_key(name);
		sv_err         err;

		snprintf(key, sizeof(key), "%s.%s", base, name);
		if (k == NULL) {
			return cfg_fail(c, e, key, "unknown key");
		}
		seen[k - cfg_group_keys] = e;
		err = k->parse(c, e, key, k, (char *) g + k->off, g);
		if (err != SV_OK) {
			return err;
		}
	}
	return cfg_group_check(c, s, base, seen, g);
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
				char k[48];
				(void) snprintf(
				    k, sizeof(k), "groups[%zu].name", i);
				return cfg_fail(c, g, k,
				    "duplicate group name \"%s\" (also "
				    "groups[%zu])",
				    cfg->groups[i].name, j);
			}
		}
	}
	return SV_OK;
}

/* cfg_top_one reads top-level setting e, row t of the top-level table,
 * into cfg; *groups gets the groups list, read after the rest. */
static sv_err
cfg_top_one(cfg_ctx *c, const config_setting_t *e, int t, svd_config *cfg,
    const config_setting_t **groups)
{
	static const char *const strategies[]
	    = {"one_for_one", "one_for_all", "rest_for_one", NULL};
	const char *name = cfg_top_keys[t];
	int64_t     v    = 0;
	int         idx  = 0;
	sv_err      err  = SV_OK;

	switch (t) {
	case CFG_T_socket_dir:
		err = cfg_str(
		    c, e, name, SVD_MAX_SOCKET_DIR, &cfg->socket_dir);
		if (err == SV_OK && cfg->socket_dir[0] != '/') {
			err = cfg_fail(c, e, name, "must be an absolute path");
		}
		break;
	case CFG_T_state_dir:
		err = cfg_str(c, e, name, SVD_MAX_STRING, &cfg->state_dir);
		if (err == SV_OK && cfg->state_dir[0] != '/') {
			err = cfg_fail(c, e, name, "must be an absolute path");
		}
		break;
	case CFG_T_log_file:
		err = cfg_str(c, e, name, SVD_MAX_STRING, &cfg->log_file);
		break;
	case CFG_T_stop_timeout_ms:
		err = cfg_int(c, e, name, 0, SVD_MAX_TIMEOUT_MS, &v);
		cfg->stop_timeout_ms = (uint64_t) v;
		break;
	case CFG_T_connection_idle_timeout_ms:
		err = cfg_int(c, e, name, 0, SVD_MAX_TIMEOUT_MS, &v);
		cfg->conn_idle_ms = (uint64_t) v;
		break;
	case CFG_T_connections_per_process:
		err = cfg_int(c, e, name, 1, SVD_MAX_CONNS_PER_PEER, &v);
		cfg->conns_per_process = (uint32_t) v;
		break;
	case CFG_T_connections_per_uid:
		err = cfg_int(c, e, name, 1, SVD_MAX_CONNS_PER_PEER, &v);
		cfg->conns_per_uid = (uint32_t) v;
		break;
	case CFG_T_strategy:
		err           = cfg_choice(c, e, name, strategies, &idx);
		cfg->strategy = (sv_strategy) idx;
		break;
	case CFG_T_pools:
		err = svd_config_pools(c->path, e, cfg, c->err, c->errlen);
		break;
	case CFG_T_groups:
		*groups = e;
		break;
	default:
		err = cfg_fail(c, e, name, "unknown key");
		break;
	}
	return err;
}

/* cfg_top reads the root setting: every key through the top-level table,
 * then the groups (which inherit stop_timeout_ms wherever it stands). */
static sv_err
cfg_top(cfg_ctx *c, const config_setting_t *root, svd_config *cfg)
{
	const config_setting_t *groups = NULL;

	cfg->stop_timeout_ms = 5000;
	cfg->conn_idle_ms    = SVD_CONN_IDLE_MS;
	for (int i = 0; i < config_setting_length(root); i++) {
		const config_setting_t *e
		    = config_setting_get_elem(root, (unsigned) i);
		const char *name = config_setting_name(e);
		int         t    = cfg_top_key(name);
		sv_err      err;

		if (t < 0) {
			return cfg_fail(c, e, name, "unknown key");
		}
		if ((err = cfg_top_one(c, e, t, cfg, &groups)) != SV_OK) {
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

/* ---- loading and freeing --------------------------------------------------
 */

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
