/*
 * sockets.c — creating, handing over and removing a group's sockets (see
 * sockets.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sockets.h"
#include "errf.h"

/* Lowest descriptor a group's socket is kept at in the daemon. */
#define SK_FD_MIN 64
/* Room for "SUPERVISE_FDS=" and "name=NN," per socket. */
#define SK_ENV_MAX (16 + SVD_MAX_SOCKETS * (SVD_SOCKET_NAME_MAX + 8))

struct svd_sockets {
	int    fds[SVD_MAX_SOCKETS];
	char  *paths[SVD_MAX_SOCKETS];
	size_t n;
	char   env[SK_ENV_MAX];
};

/* sk_one creates socket c and returns its descriptor (>= SK_FD_MIN), or
 * -1 with err filled. */
static int
sk_one(const char *group, const svd_socket_config *c, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat        st;
	int                fd, hi;

	if (lstat(c->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			(void) sv_errf(err, errlen, SV_ESYSTEM,
			    "%s: socket %s: %s exists and is not a socket; "
			    "not touching it",
			    group, c->name, c->path);
			return -1;
		}
		(void) unlink(c->path); /* left by an earlier daemon */
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	if ((fd = socket(AF_UNIX, c->type | SOCK_CLOEXEC, 0)) < 0) {
		(void) sv_errf(err, errlen, SV_ESYSTEM, "%s: socket %s: %s",
		    group, c->name, strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0
	    || chmod(c->path, (mode_t) c->mode) != 0
	    || (c->type != SOCK_DGRAM && listen(fd, SOMAXCONN) != 0)) {
		(void) sv_errf(err, errlen, SV_ESYSTEM,
		    "%s: socket %s at %s: %s", group, c->name, c->path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	/* Out of the way of 3.., where workers get it. */
	if ((hi = fcntl(fd, F_DUPFD_CLOEXEC, SK_FD_MIN)) < 0) {
		(void) sv_errf(err, errlen, SV_ESYSTEM, "%s: socket %s: %s",
		    group, c->name, strerror(errno));
		close(fd);
		(void) unlink(c->path);
		return -1;
	}
	close(fd);
	return hi;
}

sv_err
svd_sockets_open(
    const svd_group_config *g, svd_sockets **sp, char *err, size_t errlen)
{
	svd_sockets *s;
	size_t       off;

	*sp = NULL;
	if (g->nsockets == 0) {
		return SV_OK;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	off = (size_t) snprintf(s->env, sizeof(s->env), "SUPERVISE_FDS=");
	for (size_t i = 0; i < g->nsockets && i < SVD_MAX_SOCKETS; i++) {
		const svd_socket_config *c = &g->sockets[i];
		if ((s->paths[i] = strdup(c->path)) == NULL) {
			svd_sockets_close(s);
			return SV_ENOMEM;
		}
		if ((s->fds[i] = sk_one(g->name, c, err, errlen)) < 0) {
			free(s->paths[i]);
			s->paths[i] = NULL;
			svd_sockets_close(s);
			return SV_ESYSTEM;
		}
		s->n = i + 1;
		off += (size_t) snprintf(s->env + off, sizeof(s->env) - off,
		    "%s%s=%zu", i > 0 ? "," : "", c->name, 3 + i);
	}
	*sp = s;
	return SV_OK;
}

const int *
svd_sockets_fds(const svd_sockets *s, size_t *np)
{
	*np = s != NULL ? s->n : 0;
	return s != NULL ? s->fds : NULL;
}

const char *
svd_sockets_env(const svd_sockets *s)
{
	return s != NULL ? s->env : NULL;
}

void
svd_sockets_close(svd_sockets *s)
{
	if (s == NULL) {
		return;
	}
	for (size_t i = 0; i < s->n && i < SVD_MAX_SOCKETS; i++) {
		close(s->fds[i]);
		if (s->paths[i] != NULL) {
			(void) unlink(s->paths[i]);
			free(s->paths[i]);
		}
	}
	free(s);
}
