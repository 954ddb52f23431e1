/*
 * config_sockets.c — a group's `sockets` list (docs/config.md): the
 * sockets the daemon owns and hands to every worker of the group. Reads
 * and checks each entry (name, path, type, mode) and refuses a name listed
 * twice; the sockets themselves are made in daemon/sockets.c.
 */
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "config.h"
#include "config_read.h"

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

/* cfg_sockets reads a group's `sockets` list (config_read.h). */
sv_err
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
			/* cfg_socket() failed above unless both are set. */
			if (g->sockets[j].name != NULL
			    && g->sockets[i].name != NULL
			    && strcmp(g->sockets[j].name, g->sockets[i].name)
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
