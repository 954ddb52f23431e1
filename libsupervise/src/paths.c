/*
 * paths.c — default control socket location (see paths.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"
#include "supervise/client.h"

/* paths_fit turns an snprintf result into an sv_err. */
static sv_err
paths_fit(int n, size_t size)
{
	return (n < 0 || (size_t) n >= size) ? SV_ETOOLARGE : SV_OK;
}

sv_err
svi_default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg != NULL && xdg[0] == '/') {
		return paths_fit(
		    snprintf(buf, size, "%s/supervise", xdg), size);
	}
	if (geteuid() == 0) {
		return paths_fit(snprintf(buf, size, "/run/supervise"), size);
	}
	return paths_fit(
	    snprintf(buf, size, "/tmp/supervise-%u", (unsigned) geteuid()),
	    size);
}

sv_err
svi_url_for_dir(const char *dir, char *buf, size_t size)
{
	return paths_fit(
	    snprintf(buf, size, "ipc://%s/%s", dir, SV_SOCKET_NAME), size);
}

sv_err
sv_default_url(char *buf, size_t size)
{
	char   dir[512];
	sv_err rv;

	if (buf == NULL) {
		return SV_EINVAL;
	}
	if ((rv = svi_default_dir(dir, sizeof(dir))) != SV_OK) {
		return rv;
	}
	return svi_url_for_dir(dir, buf, size);
}
