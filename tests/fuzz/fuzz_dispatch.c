/*
 * fuzz_dispatch.c — libFuzzer harness for the daemon's request dispatcher,
 * svd_sup_dispatch (daemon/supervisor.c).
 *
 * Each input is one request, as the server would hand it over, from a fixed
 * peer: this process's pid and effective uid (so the administrative paths
 * are reachable). A fresh supervisor is built for every input, the way
 * tests/test_dispatch.c builds one: one group "web" (count 2, max_count 4)
 * whose program does not exist, and no loop running. Fresh, because
 * state kept across inputs would make a finding depend on the inputs before
 * it, and because a group created by one input (CreateGroup takes any argv)
 * could otherwise be started by a later one: with one request per
 * supervisor only "web" can ever be spawned, and its spawn fails.
 *
 * Properties checked, besides no crash, leak or undefined behaviour:
 *   - dispatch always succeeds and its reply is an Envelope of version 1,
 *     at most SVW_MAX_REPLY bytes;
 *   - the reply's request_id is the request's whenever the bytes decode as
 *     an Envelope, else 0 (docs/protocol.md section 2);
 *   - the refusals follow the documented checking order (not an Envelope
 *     or version 0: BAD_REQUEST; another version: UNSUPPORTED_VERSION; no
 *     body: UNKNOWN_MESSAGE; a reply sent as a request: BAD_REQUEST; over
 *     64 KiB: TOO_LARGE);
 *   - a request is answered by its own reply kind or by an Error with a
 *     known code and a message;
 *   - no process is left behind: no child to reap after each input.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "supervisor.h"
#include "wire/wire.h"

typedef Supervise__V1__ErrorCode fuzz_code;

/* Not executable: a request that spawns at once fails to. */
static char            *argv0[] = {"/nonexistent/sv-fuzz-dispatch", NULL};
static svd_group_config grp;
static svd_config       cfg;

/* LLVMFuzzerInitialize builds the configuration every input starts from.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	memset(&grp, 0, sizeof(grp));
	grp.name      = "web";
	grp.argv      = argv0;
	grp.argc      = 1;
	grp.purpose   = "serve";
	grp.count     = 2;
	grp.max_count = 4;
	svd_default_policy(&grp.pol, 100);
	cfg.socket_dir = "/nonexistent";
	cfg.groups     = &grp;
	cfg.ngroups    = 1;
	return 0;
}

/* answer_to returns the reply kind that answers request kind b, or
 * BODY__NOT_SET if b is not a request. */
static svw_body
answer_to(svw_body b)
{
	switch (b) {
	case SUPERVISE__V1__ENVELOPE__BODY_HELLO:
		return SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	case SUPERVISE__V1__ENVELOPE__BODY_WHOAMI:
		return SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS:
		return SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS:
	case SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER:
	case SUPERVISE__V1__ENVELOPE__BODY_START_WORKER:
	case SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER:
		return SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	case SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP:
	case SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP:
		return SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	case SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP:
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP:
	case SUPERVISE__V1__ENVELOPE__BODY_DELETE_GROUP:
		return SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS:
		return SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST;
	case SUPERVISE__V1__ENVELOPE__BODY_READY:
	case SUPERVISE__V1__ENVELOPE__BODY_HEARTBEAT:
	case SUPERVISE__V1__ENVELOPE__BODY_RELEASE_LEASE:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_EXTEND:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK:
		return SUPERVISE__V1__ENVELOPE__BODY_ACK;
	case SUPERVISE__V1__ENVELOPE__BODY_ACQUIRE_LEASE:
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_LEASE:
	case SUPERVISE__V1__ENVELOPE__BODY_CLAIM_LEASE:
		return SUPERVISE__V1__ENVELOPE__BODY_LEASE;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_LEASES:
		return SUPERVISE__V1__ENVELOPE__BODY_LEASE_LIST;
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_POOL:
		return SUPERVISE__V1__ENVELOPE__BODY_POOL_INFO;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_POOLS:
		return SUPERVISE__V1__ENVELOPE__BODY_POOL_LIST;
	case SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_CLOSE_SESSION:
		return SUPERVISE__V1__ENVELOPE__BODY_SESSION;
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS:
	case SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN:
	case SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART:
		return SUPERVISE__V1__ENVELOPE__BODY_DRAIN_REPORT;
	default:
		return SUPERVISE__V1__ENVELOPE__BODY__NOT_SET;
	}
}

/* expected_refusal returns the code the checking order of protocol.md
 * gives a request before it is served (raw: protobuf-c's own decoding of
 * it, NULL if none), or ERROR_CODE_UNSPECIFIED if it passes them all. */
static fuzz_code
expected_refusal(const uint8_t *data, size_t size, const svw_env *raw)
{
	if (size > SVW_MAX_REQUEST) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_TOO_LARGE;
	}
	if (raw == NULL || svw_has_nul_string(data, size)
	    || raw->version == 0) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST;
	}
	if (raw->version != SV_PROTOCOL_VERSION) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNSUPPORTED_VERSION;
	}
	if (raw->body_case == SUPERVISE__V1__ENVELOPE__BODY__NOT_SET) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_MESSAGE;
	}
	if (answer_to(raw->body_case)
	    == SUPERVISE__V1__ENVELOPE__BODY__NOT_SET) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST;
	}
	return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNSPECIFIED;
}

/* check_reply checks the reply rep to the request of size bytes. */
static void
check_reply(
    const uint8_t *data, size_t size, const svw_env *raw, const svw_env *rep)
{
	fuzz_code want = expected_refusal(data, size, raw);

	FUZZ_CHECK(rep->version == SV_PROTOCOL_VERSION, "reply version 1");
	FUZZ_CHECK(rep->request_id == (raw != NULL ? raw->request_id : 0),
	    "reply carries the request id (0 if unreadable)");
	if (rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR) {
		FUZZ_CHECK(rep->error->code
		            > SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNSPECIFIED
		        && rep->error->code <= SV_SERVER_ERR_MAX,
		    "a known error code");
		FUZZ_CHECK(rep->error->message[0] != '\0', "error message");
		FUZZ_CHECK(
		    want == SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNSPECIFIED
		        || rep->error->code == want,
		    "refusal code follows the checking order");
		return;
	}
	FUZZ_CHECK(want == SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNSPECIFIED,
	    "a request refused by the checking order got an answer");
	FUZZ_CHECK(rep->body_case == answer_to(raw->body_case),
	    "a request is answered by its own reply kind");
}

/* The pid of libFuzzer's symbolizer once seen (0: none yet). libFuzzer
 * starts it to print NEW_FUNC lines and keeps it running as our child. */
static pid_t symbolizer;

/* child_is_ours tells whether child pid is not libFuzzer's symbolizer,
 * printing what it is if so. */
static bool
child_is_ours(pid_t pid)
{
	char  path[64], comm[64] = "";
	FILE *f;

	if (pid == symbolizer) {
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
	if ((f = fopen(path, "r")) != NULL) {
		size_t n = fread(comm, 1, sizeof(comm) - 1, f);
		comm[n]  = '\0';
		fclose(f);
	}
	if (strstr(comm, "symbolizer") != NULL) {
		symbolizer = pid;
		return false;
	}
	fprintf(stdout, "child process %d: %s", (int) pid, comm);
	return true;
}

/*
 * check_no_child fails if this process has a child other than libFuzzer's
 * symbolizer. waitid() answers at once when there is no child at all;
 * otherwise the children are read from /proc/self/task/TID/children.
 */
static void
check_no_child(void)
{
	siginfo_t      si;
	DIR           *d;
	struct dirent *de;

	memset(&si, 0, sizeof(si));
	errno = 0;
	if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) == -1
	    && errno == ECHILD) {
		return;
	}
	d = opendir("/proc/self/task");
	FUZZ_CHECK(d != NULL, "cannot list /proc/self/task");
	while ((de = readdir(d)) != NULL) {
		char  path[300];
		long  pid;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9') {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/children",
		    de->d_name);
		if ((f = fopen(path, "r")) == NULL) {
			continue; /* thread gone meanwhile */
		}
		while (fscanf(f, "%ld", &pid) == 1) {
			if (child_is_ours((pid_t) pid)) {
				fclose(f);
				closedir(d);
				FUZZ_CHECK(false,
				    "no process started or left behind");
			}
		}
		fclose(f);
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svd_sup *s   = NULL;
	nng_msg *msg = NULL;
	svw_env *raw = NULL, *rep;

	FUZZ_CHECK(svd_sup_create(&cfg, "ipc:///nonexistent/sv-fuzz.sock", &s)
	        == SV_OK,
	    "supervisor created (a failure here may be a descriptor leak)");
	FUZZ_CHECK(svd_sup_dispatch(s, data, size, (uint64_t) getpid(),
	               (uint64_t) geteuid(), &msg)
	        == SV_OK,
	    "dispatch always builds a reply");
	FUZZ_CHECK(
	    msg != NULL && nng_msg_len(msg) <= SVW_MAX_REPLY, "reply bounded");
	rep = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(msg), nng_msg_body(msg));
	FUZZ_CHECK(rep != NULL, "reply decodes as an Envelope");
	if (size <= SVW_MAX_REQUEST) {
		raw = supervise__v1__envelope__unpack(NULL, size, data);
	}
	check_reply(data, size, raw, rep);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	if (raw != NULL) {
		supervise__v1__envelope__free_unpacked(raw, NULL);
	}
	nng_msg_free(msg);
	svd_sup_destroy(s);
	check_no_child();
	return 0;
}
