/*
 * config.h — supervised's configuration: the file format is libconfig's
 * (docs/config.md), parsed by libconfig and checked here key by key.
 *
 * The parsed result is a plain struct with owned strings; nothing in it
 * refers back to libconfig. Errors are one line, "FILE:LINE: KEY: what".
 */
#ifndef SVD_CONFIG_H
#define SVD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lease.h"
#include "core/supervision.h"
#include "shell/privileges.h"
#include "supervise/supervise.h"

#define SVD_MAX_GROUPS  64
#define SVD_MAX_ARGV    256
#define SVD_MAX_ENV     256
#define SVD_MAX_STRING  4096
#define SVD_MAX_PURPOSE 1024
/* sun_path is 108 bytes; leave room for "/control.sock". */
#define SVD_MAX_SOCKET_DIR 90
#define SVD_DEFAULT_MAX    1024
#define SVD_MAX_TIMEOUT_MS (24u * 3600u * 1000u)
/* Default of connection_idle_timeout_ms. */
#define SVD_CONN_IDLE_MS 60000u
/* Largest connections_per_process / connections_per_uid. */
#define SVD_MAX_CONNS_PER_PEER 4096u

/* Sockets per group, and the longest socket name (daemon/sockets.h). */
#define SVD_MAX_SOCKETS     8
#define SVD_SOCKET_NAME_MAX 32

/* A socket the group owns and hands to every worker (`sockets`). */
typedef struct svd_socket_config {
	char    *name; /* [A-Za-z0-9_-], at most SVD_SOCKET_NAME_MAX */
	char    *path; /* absolute, fits sun_path */
	int      type; /* SOCK_DGRAM, SOCK_STREAM or SOCK_SEQPACKET */
	uint32_t mode; /* of the socket file; default 0600 */
} svd_socket_config;

typedef struct svd_group_config {
	char           *name;
	char          **argv; /* NULL-terminated */
	size_t          argc;
	char          **env; /* "NAME=value", NULL-terminated */
	size_t          nenv;
	char           *purpose;
	char           *cwd; /* NULL: inherit */
	uint32_t        count;
	uint32_t        max_count;
	sv_group_policy pol; /* restart type, backoff, timeouts, ... */
	bool            admin; /* its workers may send admin requests */
	bool die_with_supervisor; /* killed when the daemon dies, never
	                           * adopted by the next one */
	bool     notify_all; /* descendants may report (Ready, notify) */
	char    *user; /* as written; NULL: the daemon's user */
	char    *group; /* as written; NULL: the user's primary group */
	sv_creds creds; /* resolved at load time (shell/privileges.h) */
	svd_socket_config *sockets; /* [nsockets], handed to every worker */
	size_t             nsockets;
	uint32_t max_subworkers; /* live sub-workers per process; 0: 256 */
	bool     activity; /* hand each worker an activity region (true) */
} svd_group_config;

/* A lease pool of the config's `pools` list (config_pools.c). */
typedef struct svd_pool_config {
	char           *name;
	uint32_t        slots;
	uint64_t        ttl_ms; /* 0: leases do not expire */
	uint64_t        grace_ms; /* disconnect grace */
	char           *path; /* NULL, or a template with {slot} */
	sv_lease_policy policy; /* on_release */
	bool            directory; /* kind = "directory" */
} svd_pool_config;

typedef struct svd_config {
	char *socket_dir;
	char *log_file; /* NULL: SOCKET_DIR/supervised.log */
	char *state_dir; /* NULL: socket_dir (durable state,
	                    docs/durability.md) */
	uint64_t          stop_timeout_ms;
	sv_strategy       strategy;
	svd_group_config *groups;
	size_t            ngroups;
	svd_pool_config  *pools; /* the `pools` list (config_pools.c) */
	size_t            npools;
	/* The control socket's bounds (conn_admit.h): an idle connection
	 * of a non-worker is closed after conn_idle_ms (0: never); 0 for
	 * the two others means the default. */
	uint64_t conn_idle_ms;
	uint32_t conns_per_process;
	uint32_t conns_per_uid;
} svd_config;

/*
 * svd_config_load reads and checks path. On SV_OK *cfgp belongs to the
 * caller: free it with svd_config_free. On failure errbuf holds one line
 * naming the file, the line and the key. Errors: SV_EINVAL (bad content),
 * SV_ENOTFOUND (cannot read the file), SV_ENOMEM.
 */
sv_err svd_config_load(
    const char *path, svd_config **cfgp, char *errbuf, size_t errlen);

/*
 * svd_config_load_text is svd_config_load for a configuration held in text
 * (groups created at runtime are checked this way, by the same rules);
 * label names it in error lines ("label:LINE: KEY: what"). socket_dir stays
 * NULL when the text has none. Ownership and errors as svd_config_load.
 */
sv_err svd_config_load_text(const char *label, const char *text,
    svd_config **cfgp, char *errbuf, size_t errlen);

/*
 * svd_default_policy fills p with the documented defaults of a group
 * (docs/config.md), with the given stop timeout. Never fails.
 */
void svd_default_policy(sv_group_policy *p, uint64_t stop_timeout_ms);

/*
 * svd_env_reserved tells whether "NAME=value" (or "NAME") names one of the
 * variables the daemon sets for each worker (SUPERVISE_URL, ...): a group
 * may not set them, and the daemon's own values of them are not passed on.
 */
bool svd_env_reserved(const char *e);

/* Longest pool path template. */
#define SVD_POOL_PATH_MAX 1024u

/*
 * svd_config_pools reads the top-level `pools` list s (a libconfig
 * setting) into cfg->pools (config_pools.c). On failure err holds
 * "FILE:LINE: KEY: what". Errors: SV_EINVAL, SV_ENOMEM.
 */
struct config_setting_t;
sv_err svd_config_pools(const char *path, const struct config_setting_t *s,
    svd_config *cfg, char *err, size_t errlen);

/* svd_config_pools_free frees cfg's pools. */
void svd_config_pools_free(svd_config *cfg);

/*
 * svd_pool_path_check checks a pool path template: "" (no resource), or
 * an absolute path of at most SVD_POOL_PATH_MAX bytes whose last component
 * holds "{slot}", without a ".." component. Errors: SV_EBADREQ.
 */
sv_err svd_pool_path_check(const char *path);

/*
 * svd_pool_dir_check judges the existing directories above pool path
 * template path (those before the first component naming {slot}) by the
 * rule of dir_trust.h: no symbolic link, each owned by root or the
 * daemon's user and writable by no one else. SV_OK (also for "" or NULL),
 * or, with why filled ("/srv/x is a symbolic link"): SV_EPERM (a symbolic
 * link, an untrusted directory), SV_EBADREQ (not a directory),
 * SV_ESYSTEM.
 */
sv_err svd_pool_dir_check(const char *path, char *why, size_t whylen);

/*
 * svd_config_spec_option tells whether key is a key of a group that a
 * GroupSpec (CreateGroup, `supervisectl spawn --set`) gives as an option:
 * a row of config_keys.def marked OPTION. The keys GroupSpec has fields
 * for (name, argv, count, ...) and unknown keys are not.
 */
bool svd_config_spec_option(const char *key);

/* svd_config_free frees a configuration. NULL is ignored. */
void svd_config_free(svd_config *cfg);

#endif /* SVD_CONFIG_H */
