/*
 * main.c — smoke test of an installed libsupervise, used by
 * tests/install/install_test.sh through both CMake (find_package) and
 * pkg-config. Only the public headers are included. It prints what it checks
 * and exits 0 when every check passes.
 *
 * Usage: app URL   where nobody listens on URL (an ipc:// path in a scratch
 * directory), so sv_client_open must fail with SV_ECONNECT.
 */
#include <stdio.h>
#include <string.h>

#include <supervise/supervise.h>
#include <supervise/client.h>

int
main(int argc, char **argv)
{
	const char *url;
	const char *msg;
	sv_client  *client = NULL;
	sv_err      rv;
	int         failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s URL\n", argv[0]);
		return 2;
	}
	url = argv[1];

	printf("sv_version() = %s\n", sv_version());
	if (strcmp(sv_version(), SV_VERSION_STRING) != 0) {
		fprintf(stderr, "FAIL: sv_version() != header's %s\n",
		    SV_VERSION_STRING);
		failed = 1;
	}

	msg = sv_strerror(SV_ENOTFOUND);
	printf("sv_strerror(SV_ENOTFOUND) = %s\n", msg);
	if (msg == NULL || strcmp(msg, "not found") != 0) {
		fprintf(
		    stderr, "FAIL: unexpected sv_strerror(SV_ENOTFOUND)\n");
		failed = 1;
	}

	rv = sv_client_open(&client, url, 0);
	printf("sv_client_open(%s, 0) = %s (%s)\n", url, sv_err_name(rv),
	    sv_strerror(rv));
	if (rv != SV_ECONNECT) {
		fprintf(stderr, "FAIL: expected ECONNECT, got %s\n",
		    sv_err_name(rv));
		failed = 1;
	}
	if (rv == SV_OK)
		sv_client_close(client);

	printf("%s\n", failed ? "consumer: FAILED" : "consumer: OK");
	return failed;
}
