/*
 * gen_corpus.c — writes the seed corpus of the libFuzzer harnesses
 * (tests/fuzz/corpus/NAME/, committed; see README.md).
 *
 *   gen_corpus DIR      writes DIR/{wire,dispatch,transport,config,notify}/
 *
 * Seeds are small, valid inputs that reach deep code at once, so that the
 * fuzzers spend their time mutating meaningful inputs:
 *   wire, dispatch  one Envelope of every request kind (aimed at the group
 *                   "web" that fuzz_dispatch configures), every reply kind,
 *                   and the refusals of the checking order (version 0 and
 *                   2, no body, an unknown body field);
 *   transport       SP ipc frames answering request id 0x80000001 (the one
 *                   fuzz_transport's call uses): replies of several kinds,
 *                   a stale reply before ours, an empty body;
 *   config          configuration files using every key of docs/config.md;
 *   notify          sd_notify datagrams with every key supervised knows.
 * The output is deterministic: rerunning it rewrites the same files.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "supervise/v1/supervise.pb-c.h"

typedef Supervise__V1__Envelope env_t;

static const char *outdir;

/* die reports a failure and exits 1. */
static void __attribute__((noreturn)) die(const char *what, const char *path)
{
	fprintf(
	    stderr, "gen_corpus: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* put writes len bytes as DIR/sub/name. */
static void
put(const char *sub, const char *name, const void *buf, size_t len)
{
	char  path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, sub);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		die("cannot create", path);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	if ((f = fopen(path, "wb")) == NULL) {
		die("cannot write", path);
	}
	if ((len > 0 && fwrite(buf, 1, len, f) != len) || fclose(f) != 0) {
		die("cannot write", path);
	}
}

/* put_text writes a NUL-terminated string as DIR/sub/name. */
static void
put_text(const char *sub, const char *name, const char *text)
{
	put(sub, name, text, strlen(text));
}

/* pack encodes e into a new buffer (*lenp bytes; the caller frees it). */
static uint8_t *
pack(const env_t *e, size_t *lenp)
{
	size_t   n = supervise__v1__envelope__get_packed_size(e);
	uint8_t *b = malloc(n > 0 ? n : 1);

	if (b == NULL) {
		fprintf(stderr, "gen_corpus: out of memory\n");
		exit(1);
	}
	*lenp = supervise__v1__envelope__pack(e, b);
	return b;
}

/* frame writes an SP ipc frame (type 1, length, request id, body). */
static size_t
frame(uint8_t *out, uint32_t id, const uint8_t *body, size_t len)
{
	uint64_t n = (uint64_t) len + 4;

	out[0] = 1;
	for (int i = 0; i < 8; i++) {
		out[1 + i] = (uint8_t) (n >> (56 - 8 * i));
	}
	for (int i = 0; i < 4; i++) {
		out[9 + i] = (uint8_t) (id >> (24 - 8 * i));
	}
	memcpy(out + 13, body, len);
	return 13 + len;
}

/* envelope writes e (version 1, a request id from its name) as a seed of
 * wire and dispatch, and as an answer frame of transport if reply. */
static void
envelope(const char *name, env_t *e, bool reply)
{
	size_t   len;
	uint8_t *b;
	char     file[128];

	if (e->version == 0 && strncmp(name, "v0-", 3) != 0) {
		e->version = 1;
	}
	e->request_id = 1000 + (uint64_t) strlen(name);
	b             = pack(e, &len);
	snprintf(file, sizeof(file), "%s.bin", name);
	put("wire", file, b, len);
	put("dispatch", file, b, len);
	if (reply) {
		uint8_t *f = malloc(2 * (len + 13));
		size_t   n;

		if (f == NULL) {
			exit(1);
		}
		n = frame(f, 0x80000001u, b, len);
		put("transport", file, f, n);
		/* A late reply to an earlier request first: skipped. */
		n = frame(f, 0x80000000u, b, len);
		n += frame(f + n, 0x80000001u, b, len);
		snprintf(file, sizeof(file), "stale-%s.bin", name);
		put("transport", file, f, n);
		free(f);
	}
	free(b);
}

/*
 * SEED writes the seed name (envelope(), reply as there) from the local
 * env_t e, made afresh with the body case SUPERVISE__V1__ENVELOPE__BODY_kase
 * and its oneof member field pointing at msg. e keeps that body afterwards,
 * for a variant written by changing one field.
 */
#define SEED(name, kase, field, msg, reply)                          \
	do {                                                         \
		e           = (env_t) SUPERVISE__V1__ENVELOPE__INIT; \
		e.body_case = SUPERVISE__V1__ENVELOPE__BODY_##kase;  \
		e.field     = (msg);                                 \
		envelope((name), &e, (reply));                       \
	} while (0)

/* requests writes one envelope of every request kind. */
static void
requests(void)
{
	env_t                        e  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello         h  = SUPERVISE__V1__HELLO__INIT;
	Supervise__V1__WhoAmI        w  = SUPERVISE__V1__WHO_AM_I__INIT;
	Supervise__V1__ListWorkers   lw = SUPERVISE__V1__LIST_WORKERS__INIT;
	Supervise__V1__GetStatus     gs = SUPERVISE__V1__GET_STATUS__INIT;
	Supervise__V1__ScaleGroup    sg = SUPERVISE__V1__SCALE_GROUP__INIT;
	Supervise__V1__StopGroup     st = SUPERVISE__V1__STOP_GROUP__INIT;
	Supervise__V1__RestartWorker rw = SUPERVISE__V1__RESTART_WORKER__INIT;
	Supervise__V1__ResetGroup    rg = SUPERVISE__V1__RESET_GROUP__INIT;
	Supervise__V1__ListGroups    lg = SUPERVISE__V1__LIST_GROUPS__INIT;
	Supervise__V1__StartWorker   sw = SUPERVISE__V1__START_WORKER__INIT;
	Supervise__V1__TerminateWorker tw
	    = SUPERVISE__V1__TERMINATE_WORKER__INIT;
	Supervise__V1__Ready       rd      = SUPERVISE__V1__READY__INIT;
	Supervise__V1__Heartbeat   hb      = SUPERVISE__V1__HEARTBEAT__INIT;
	Supervise__V1__CreateGroup cg      = SUPERVISE__V1__CREATE_GROUP__INIT;
	Supervise__V1__GroupSpec   sp      = SUPERVISE__V1__GROUP_SPEC__INIT;
	Supervise__V1__Option      o1      = SUPERVISE__V1__OPTION__INIT;
	Supervise__V1__Option      o2      = SUPERVISE__V1__OPTION__INIT;
	Supervise__V1__Option     *opts[2] = {&o1, &o2};
	Supervise__V1__DeleteGroup dg      = SUPERVISE__V1__DELETE_GROUP__INIT;
	char *argv[] = {"/nonexistent/worker", "--port", "8080"};
	char *env[]  = {"LOG_LEVEL=info"};

	h.client_name = "gen_corpus/1";
	h.min_version = 1;
	h.max_version = 1;
	SEED("hello", HELLO, hello, &h, false);

	SEED("whoami", WHOAMI, whoami, &w, false);

	lw.group     = "web";
	lw.page_size = 1;
	SEED("list-workers", LIST_WORKERS, list_workers, &lw, false);
	lw.group     = "";
	lw.page_size = 0;
	envelope("list-workers-all", &e, false);

	gs.group   = "web";
	gs.ordinal = 1;
	SEED("get-status", GET_STATUS, get_status, &gs, false);

	sg.group = "web";
	sg.count = 3;
	SEED("scale-group", SCALE_GROUP, scale_group, &sg, false);

	st.group = "web";
	SEED("stop-group", STOP_GROUP, stop_group, &st, false);

	rw.group   = "web";
	rw.ordinal = 0;
	SEED("restart-worker", RESTART_WORKER, restart_worker, &rw, false);
	rw.check_generation    = 1;
	rw.expected_generation = 0;
	envelope("restart-worker-cas", &e, false);

	rg.group = "web";
	SEED("reset-group", RESET_GROUP, reset_group, &rg, false);

	lg.group = "web";
	SEED("list-groups", LIST_GROUPS, list_groups, &lg, false);

	sw.group = "web";
	SEED("start-worker", START_WORKER, start_worker, &sw, false);

	tw.group   = "web";
	tw.ordinal = 1;
	SEED("terminate-worker", TERMINATE_WORKER, terminate_worker, &tw,
	    false);

	rd.status = "warming up";
	SEED("ready", READY, ready, &rd, false);

	SEED("heartbeat", HEARTBEAT, heartbeat, &hb, false);

	sp.name      = "batch";
	sp.n_argv    = 3;
	sp.argv      = argv;
	sp.count     = 1;
	sp.purpose   = "run batch jobs";
	sp.n_env     = 1;
	sp.env       = env;
	sp.cwd       = "/tmp";
	sp.max_count = 8;
	o1.key       = "restart";
	o1.value     = "transient";
	o2.key       = "backoff_factor";
	o2.value     = "1.5";
	sp.n_options = 2;
	sp.options   = opts;
	cg.spec      = &sp;
	SEED("create-group", CREATE_GROUP, create_group, &cg, false);

	dg.group = "web";
	SEED("delete-group", DELETE_GROUP, delete_group, &dg, false);
}

/* replies writes envelopes of the reply kinds (requests to the dispatcher,
 * answers to the transport). */
static void
replies(void)
{
	env_t                        e      = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__HelloReply    hr     = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__Error         er     = SUPERVISE__V1__ERROR__INIT;
	Supervise__V1__Identity      id     = SUPERVISE__V1__IDENTITY__INIT;
	Supervise__V1__Frame         fr     = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame        *ctx[1] = {&fr};
	Supervise__V1__WorkerStatus  ws = SUPERVISE__V1__WORKER_STATUS__INIT;
	Supervise__V1__WorkerStatus *wsl[2] = {&ws, &ws};
	Supervise__V1__WorkerList    wl     = SUPERVISE__V1__WORKER_LIST__INIT;
	Supervise__V1__GroupInfo     gi     = SUPERVISE__V1__GROUP_INFO__INIT;
	Supervise__V1__GroupInfo    *gil[1] = {&gi};
	Supervise__V1__GroupList     gl     = SUPERVISE__V1__GROUP_LIST__INIT;
	Supervise__V1__GroupChange   gc  = SUPERVISE__V1__GROUP_CHANGE__INIT;
	Supervise__V1__Ack           ack = SUPERVISE__V1__ACK__INIT;
	char *features[] = {"identity", "admin.list", "events"};

	hr.version       = 1;
	hr.server_name   = "supervised/0.1.0";
	hr.supervisor_id = "0123456789abcdef0123456789abcdef";
	hr.n_features    = 3;
	hr.features      = features;
	hr.events_url    = "ipc:///tmp/supervise/events.sock";
	SEED("hello-reply", HELLO_REPLY, hello_reply, &hr, true);

	er.code    = SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_FOUND;
	er.message = "no group named \"nope\"";
	SEED("error", ERROR, error, &er, true);

	fr.kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	fr.ordinal       = 2;
	fr.name          = "web";
	id.group         = "web";
	id.ordinal       = 2;
	id.generation    = 3;
	id.kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	id.pid           = 4242;
	id.purpose       = "serve";
	id.supervisor_id = hr.supervisor_id;
	id.n_context     = 1;
	id.context       = ctx;
	id.group_size    = 3;
	SEED("identity", IDENTITY, identity, &id, true);

	ws.group          = "web";
	ws.ordinal        = 1;
	ws.generation     = 4;
	ws.pid            = 4243;
	ws.state          = SUPERVISE__V1__WORKER_STATE__WORKER_STATE_RUNNING;
	ws.uptime_ms      = 1500;
	ws.purpose        = "serve";
	ws.restarts       = 2;
	ws.last_exit_code = -1;
	ws.last_signal    = 9;
	ws.ready          = 1;
	ws.status_text    = "ok";
	SEED("worker-status", WORKER_STATUS, worker_status, &ws, true);

	wl.n_workers       = 2;
	wl.workers         = wsl;
	wl.next_page_token = "p1";
	SEED("worker-list", WORKER_LIST, worker_list, &wl, true);

	gi.name      = "web";
	gi.count     = 3;
	gi.max_count = 8;
	gi.restart   = "permanent";
	gi.strategy  = "one_for_one";
	gi.running   = 3;
	gi.purpose   = "serve";
	gl.n_groups  = 1;
	gl.groups    = gil;
	SEED("group-list", GROUP_LIST, group_list, &gl, true);
	SEED("group-info", GROUP_INFO, group_info, &gi, true);

	gc.group          = "web";
	gc.previous_count = 3;
	gc.count          = 5;
	SEED("group-change", GROUP_CHANGE, group_change, &gc, true);

	SEED("ack", ACK, ack, &ack, true);
}

/* refusals writes envelopes the checking order refuses. */
static void
refusals(void)
{
	env_t                e = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello h = SUPERVISE__V1__HELLO__INIT;
	/* version 1, request id 7, then field 499 (length-delimited, empty):
	 * a body this server does not know. */
	static const uint8_t unknown[]
	    = {0x08, 0x01, 0x10, 0x07, 0x9a, 0x1f, 0x00};

	SEED("v0-hello", HELLO, hello, &h, false);
	e.version = 2;
	envelope("v2-hello", &e, false);
	e           = (env_t) SUPERVISE__V1__ENVELOPE__INIT;
	e.body_case = SUPERVISE__V1__ENVELOPE__BODY__NOT_SET;
	envelope("no-body", &e, true);
	put("wire", "unknown-body.bin", unknown, sizeof(unknown));
	put("dispatch", "unknown-body.bin", unknown, sizeof(unknown));
}

/* transport_edges writes answer streams that end or break early. */
static void
transport_edges(void)
{
	uint8_t f[64];
	size_t  n;

	/* An empty body is a valid (version-less) reply frame. */
	n = frame(f, 0x80000001u, NULL, 0);
	put("transport", "empty-body.bin", f, n);
	/* A frame announcing more than the stream holds. */
	n = frame(f, 0x80000001u, (const uint8_t *) "\x08\x01\x10\x07", 4);
	f[8] += 16;
	put("transport", "short-body.bin", f, n);
	/* A frame of another type. */
	n    = frame(f, 0x80000001u, (const uint8_t *) "\x08\x01", 2);
	f[0] = 2;
	put("transport", "bad-type.bin", f, n);
}

static const char *const configs[][2] = {
    {"minimal.conf",
        "groups = ( { name = \"web\"; argv = [ \"/bin/true\" ];\n"
        "  count = 1; purpose = \"serve\"; } );\n"},
    {"top-level.conf",
        "# every top-level key\n"
        "socket_dir = \"/tmp/supervise-fuzz\";\n"
        "log_file = \"/tmp/supervise-fuzz/supervised.log\";\n"
        "stop_timeout_ms = 3000;\n"
        "strategy = \"rest_for_one\";\n"
        "groups = (\n"
        "  { name = \"db\"; argv = [ \"/usr/bin/env\", \"sleep\", \"60\" ];\n"
        "    count = 1; purpose = \"store\"; },\n"
        "  { name = \"web\"; argv = [ \"/bin/sleep\", \"60\" ];\n"
        "    count = 3; max_count = 16; purpose = \"serve HTTP\";\n"
        "    env = [ \"LOG_LEVEL=info\", \"PORT=8080\" ];\n"
        "    cwd = \"/tmp\"; }\n"
        ");\n"},
    {"policy.conf",
        "// every supervision key of a group\n"
        "strategy = \"one_for_all\";\n"
        "groups = ( {\n"
        "  name = \"jobs.v2\";\n"
        "  argv = [ \"worker\", \"--queue\", \"default\" ];\n"
        "  count = 2;\n"
        "  max_count = 4096;\n"
        "  purpose = \"run queued jobs\";\n"
        "  restart = \"transient\";\n"
        "  stop_signal = \"SIGINT\";\n"
        "  stop_timeout_ms = 0;\n"
        "  on_unresponsive = \"abandon\";\n"
        "  min_uptime_ms = 0;\n"
        "  backoff_initial_ms = 50;\n"
        "  backoff_factor = 1.5;\n"
        "  backoff_max_ms = 60000;\n"
        "  max_restarts = 5;\n"
        "  max_seconds = 30;\n"
        "  ready = true;\n"
        "  sequential_start = true;\n"
        "  start_timeout_ms = 10000;\n"
        "  on_start_timeout = \"abandon\";\n"
        "  watchdog_ms = 2000;\n"
        "} );\n"},
    {"temporary.conf",
        "groups = ( { name = \"once\"; argv = [ \"/bin/echo\", \"hi\" ];\n"
        "  count = 0; purpose = \"one shot\"; restart = \"temporary\";\n"
        "  stop_signal = \"KILL\"; on_start_timeout = \"kill\";\n"
        "  backoff_factor = 16.0; max_count = 1; } );\n"},
    {"syntax-error.conf",
        "groups = ( { name = \"web\"; argv = [ \"/bin/true\" ]\n"
        "  count = 1; } );\n"},
    {"bad-value.conf",
        "groups = ( { name = \"web\"; argv = [ \"/bin/true\" ];\n"
        "  count = -1; purpose = \"serve\"; } );\n"},
};

static const char *const datagrams[][2] = {
    {"ready", "READY=1"},
    {"ready-status", "READY=1\nSTATUS=listening on :8080\n"},
    {"stopping", "STOPPING=1\nSTATUS=draining"},
    {"watchdog", "WATCHDOG=1"},
    {"extend", "EXTEND_TIMEOUT_USEC=5000000\nSTATUS=migrating"},
    {"crlf", "READY=1\r\nSTATUS=ok\r\n"},
    {"ignored", "MAINPID=1\nFDSTORE=1\nREADY=0\nnot an assignment\n"},
    {"utf8-status", "STATUS=caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
    {"bad-utf8-status", "STATUS=\xc3\x28\x01\x7f\xed\xa0\x80\xc2\x85x"},
    {"huge-extend", "EXTEND_TIMEOUT_USEC=99999999999999999999999"},
    {"empty", ""},
};

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		die("cannot create", outdir);
	}
	requests();
	replies();
	refusals();
	transport_edges();
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		put_text("config", configs[i][0], configs[i][1]);
	}
	for (size_t i = 0; i < sizeof(datagrams) / sizeof(datagrams[0]); i++) {
		put_text("notify", datagrams[i][0], datagrams[i][1]);
	}
	return 0;
}
