/*
 * sv_client_adapter.c — the conformance testee adapter of the C client.
 *
 * Design: glue only, between the conformance runner's harness protocol
 * (conformance/README.md, "Writing a client adapter") and libsupervise's
 * public client API (supervise/client.h). It prints a banner line, then
 * reads one JSON command per line on stdin, makes that one call against
 * the control URL given as argv[1] with the command's deadline_ms, and
 * prints one JSON result line. Commands are flat JSON objects of strings
 * and integers; the small reader below accepts exactly that and nothing
 * else (a line over LINE_MAX bytes, nesting or a malformed object is
 * reported as an "EINVAL" result, never a crash). It links libsupervise on
 * purpose: the runner links nothing of ours, the adapter is the client.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/client.h"

#define LINE_MAX_ 4096
#define KEYS_MAX  16
#define TEXT_MAX  1100

/* One "key": value pair of a flat command object. */
typedef struct {
	char    key[32];
	char    text[TEXT_MAX]; /* string value (unescaped) */
	int64_t num; /* integer value */
	int     is_num;
} kv;

typedef struct {
	kv     items[KEYS_MAX];
	size_t n;
} cmd;

/*
 * read_string reads a JSON string at *p (after the opening quote) into
 * out (size bytes, NUL-terminated); \uXXXX escapes above 0x7f are refused.
 * Returns 0, or -1 for a malformed or too long string.
 */
static int
read_string(const char **p, char *out, size_t size)
{
	size_t n = 0;
	for (const char *s = *p; *s != '\0'; s++) {
		char c = *s;
		if (c == '"') {
			out[n] = '\0';
			*p     = s + 1;
			return 0;
		}
		if (c == '\\') {
			s++;
			switch (*s) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case '"':
			case '\\':
			case '/':
				c = *s;
				break;
			default:
				return -1;
			}
		}
		if (n + 1 >= size) {
			return -1;
		}
		out[n++] = c;
	}
	return -1;
}

static void
skip_ws(const char **p)
{
	while (isspace((unsigned char) **p)) {
		(*p)++;
	}
}

/* parse_cmd reads a flat JSON object. Returns 0, or -1 when malformed. */
static int
parse_cmd(const char *line, cmd *c)
{
	const char *p = line;
	c->n          = 0;
	skip_ws(&p);
	if (*p++ != '{') {
		return -1;
	}
	skip_ws(&p);
	if (*p == '}') {
		return 0;
	}
	for (;;) {
		kv *it;
		if (c->n >= KEYS_MAX) {
			return -1;
		}
		it = &c->items[c->n];
		memset(it, 0, sizeof(*it));
		skip_ws(&p);
		if (*p++ != '"' || read_string(&p, it->key, sizeof(it->key))) {
			return -1;
		}
		skip_ws(&p);
		if (*p++ != ':') {
			return -1;
		}
		skip_ws(&p);
		if (*p == '"') {
			p++;
			if (read_string(&p, it->text, sizeof(it->text))) {
				return -1;
			}
		} else if (*p == '-' || isdigit((unsigned char) *p)) {
			char *end;
			it->num    = strtoll(p, &end, 10);
			it->is_num = 1;
			p          = end;
		} else if (strncmp(p, "null", 4) == 0) {
			p += 4;
		} else {
			return -1;
		}
		c->n++;
		skip_ws(&p);
		if (*p == ',') {
			p++;
			continue;
		}
		return *p == '}' ? 0 : -1;
	}
}

static const kv *
get(const cmd *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->items[i].key, key) == 0) {
			return &c->items[i];
		}
	}
	return NULL;
}

static int64_t
get_num(const cmd *c, const char *key, int64_t dflt)
{
	const kv *v = get(c, key);
	return v != NULL && v->is_num ? v->num : dflt;
}

static const char *
get_text(const cmd *c, const char *key)
{
	const kv *v = get(c, key);
	return v != NULL && !v->is_num ? v->text : NULL;
}

/* put_str writes s as a JSON string (NULL as ""). */
static void
put_str(const char *s)
{
	putchar('"');
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char ch = (unsigned char) *s;
		if (ch == '"' || ch == '\\') {
			printf("\\%c", ch);
		} else if (ch < 0x20) {
			printf("\\u%04x", ch);
		} else {
			putchar(ch);
		}
	}
	putchar('"');
}

static void
put_worker(const sv_workers *w, size_t i)
{
	sv_state st = sv_workers_state(w, i);
	printf("{\"group\":");
	put_str(sv_workers_group(w, i));
	printf(",\"ordinal\":%" PRIu32 ",\"generation\":%" PRIu64
	       ",\"pid\":%" PRId64 ",\"state\":",
	    sv_workers_ordinal(w, i), sv_workers_generation(w, i),
	    sv_workers_pid(w, i));
	put_str(sv_state_name(st));
	printf(",\"state_number\":%d,\"ready\":%s,\"purpose\":", (int) st,
	    sv_workers_ready(w, i) ? "true" : "false");
	put_str(sv_workers_purpose(w, i));
	putchar('}');
}

static void
put_error(sv_client *cl, sv_err err)
{
	const char *name = sv_err_name(err);
	printf("{\"ok\":false,\"error\":");
	put_str(name);
	printf(",\"code\":%d,\"message\":", (int) err);
	put_str(sv_client_error_message(cl));
	printf(",\"generic\":%s}\n",
	    strcmp(name, "UNKNOWN") == 0 ? "true" : "false");
}

/* run makes the call c names; prints its result line. */
static void
run(sv_client *cl, const cmd *c)
{
	const char *op = get_text(c, "op");
	int         ms = (int) get_num(c, "deadline_ms", 5000);
	sv_err      err;

	if (op == NULL) {
		printf("{\"ok\":false,\"error\":\"EINVAL\",\"code\":100,"
		       "\"message\":\"no op\",\"generic\":false}\n");
		return;
	}
	if (strcmp(op, "hello") == 0) {
		sv_hello *h = NULL;
		if ((err = sv_client_hello(cl, ms, &h)) != SV_OK) {
			put_error(cl, err);
			return;
		}
		printf("{\"ok\":true,\"result\":{\"version\":%" PRIu32
		       ",\"minor_version\":%" PRIu32 ",\"server_name\":",
		    sv_hello_version(h), sv_hello_minor_version(h));
		put_str(sv_hello_server_name(h));
		printf(",\"supervisor_id\":");
		put_str(sv_hello_supervisor_id(h));
		printf(",\"events_url\":");
		put_str(sv_hello_events_url(h));
		printf(",\"features\":[");
		for (size_t i = 0; i < sv_hello_feature_count(h); i++) {
			printf(i ? "," : "");
			put_str(sv_hello_feature(h, i));
		}
		printf("],\"durability\":{\"known\":%s,\"ok\":%s,\"reason\":",
		    sv_hello_durability_known(h) ? "true" : "false",
		    sv_hello_durability_ok(h) ? "true" : "false");
		put_str(sv_hello_durability_reason(h));
		printf(",\"since_ms\":%" PRIu64 ",\"message\":",
		    sv_hello_durability_since_ms(h));
		put_str(sv_hello_durability_message(h));
		printf("}}}\n");
		sv_hello_free(h);
	} else if (strcmp(op, "whoami") == 0) {
		sv_identity *id = NULL;
		if ((err = sv_client_whoami(cl, ms, &id)) != SV_OK) {
			put_error(cl, err);
			return;
		}
		printf("{\"ok\":true,\"result\":{\"group\":");
		put_str(sv_identity_group(id));
		printf(",\"ordinal\":%" PRIu32 ",\"generation\":%" PRIu64
		       ",\"pid\":%" PRId64 ",\"group_size\":%" PRIu32
		       ",\"purpose\":",
		    sv_identity_ordinal(id), sv_identity_generation(id),
		    sv_identity_pid(id), sv_identity_group_size(id));
		put_str(sv_identity_purpose(id));
		printf(",\"supervisor_id\":");
		put_str(sv_identity_supervisor_id(id));
		printf("}}\n");
		sv_identity_free(id);
	} else if (strcmp(op, "list") == 0 || strcmp(op, "status") == 0) {
		sv_workers *w      = NULL;
		int         status = strcmp(op, "status") == 0;
		if (status) {
			err = sv_client_status(cl, get_text(c, "group"),
			    (uint32_t) get_num(c, "ordinal", 0), ms, &w);
		} else {
			err = sv_client_list(cl, get_text(c, "group"), ms, &w);
		}
		if (err != SV_OK) {
			put_error(cl, err);
			return;
		}
		printf("{\"ok\":true,\"result\":");
		if (status) {
			put_worker(w, 0);
		} else {
			printf("{\"workers\":[");
			for (size_t i = 0; i < sv_workers_count(w); i++) {
				printf(i ? "," : "");
				put_worker(w, i);
			}
			printf("]}");
		}
		printf("}\n");
		sv_workers_free(w);
	} else if (strcmp(op, "restart") == 0) {
		const char *g   = get_text(c, "group");
		uint32_t    ord = (uint32_t) get_num(c, "ordinal", 0);
		if (get(c, "expected_generation") != NULL
		    && get(c, "expected_generation")->is_num) {
			err = sv_client_restart_if(cl, g, ord,
			    (uint64_t) get_num(c, "expected_generation", 0),
			    ms);
		} else {
			err = sv_client_restart(cl, g, ord, ms);
		}
		if (err != SV_OK) {
			put_error(cl, err);
		} else {
			printf("{\"ok\":true,\"result\":{}}\n");
		}
	} else if (strcmp(op, "ready") == 0) {
		if ((err = sv_client_ready(cl, get_text(c, "status"), ms))
		    != SV_OK) {
			put_error(cl, err);
		} else {
			printf("{\"ok\":true,\"result\":{}}\n");
		}
	} else {
		printf("{\"ok\":false,\"error\":\"EINVAL\",\"code\":100,"
		       "\"message\":\"unknown op\",\"generic\":false}\n");
	}
}

/*
 * main: argv[1] is the control URL. The client is opened without waiting
 * (timeout 0: the fake supervisor listens before the adapter starts).
 * Exit status 0 at end of input, 2 when the client cannot be opened.
 */
int
main(int argc, char **argv)
{
	static char line[LINE_MAX_ + 2];
	sv_client  *cl = NULL;
	sv_err      err;
	cmd         c;

	if (argc != 2) {
		fprintf(
		    stderr, "usage: %s ipc:///path/control.sock\n", argv[0]);
		return 2;
	}
	if ((err = sv_client_open(&cl, argv[1], 2000)) != SV_OK) {
		fprintf(stderr, "sv_client_open: %s: %s\n", sv_err_name(err),
		    sv_client_error_message(NULL));
		return 2;
	}
	printf("{\"adapter\":\"c\",\"features\":[\"hello\",\"whoami\","
	       "\"list\",\"status\",\"restart\",\"ready\","
	       "\"hello.durability\"]}\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strchr(line, '\n') == NULL && !feof(stdin)) {
			int ch;
			while ((ch = getchar()) != EOF && ch != '\n') {
			}
			printf(
			    "{\"ok\":false,\"error\":\"EINVAL\",\"code\":100,"
			    "\"message\":\"line too long\","
			    "\"generic\":false}\n");
		} else if (parse_cmd(line, &c) != 0) {
			printf(
			    "{\"ok\":false,\"error\":\"EINVAL\",\"code\":100,"
			    "\"message\":\"malformed command\","
			    "\"generic\":false}\n");
		} else {
			run(cl, &c);
		}
		fflush(stdout);
	}
	sv_client_close(cl);
	return 0;
}
