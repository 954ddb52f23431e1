/*
 * vector_check.c — checks the golden wire vectors with protobuf-c, the
 * project's own protobuf code (the generated supervise.pb-c.c; it links
 * the sv_proto object and libprotobuf-c, not libsupervise).
 *
 * Design: for every NAME.bin in the directory given, the message type is
 * read from NAME.txt's header line "# proto-message: supervise.v1.TYPE" and
 * looked up by full name in the table below. The bytes must unpack, pass
 * protobuf_c_message_check, and pack to exactly the same bytes (protobuf-c
 * keeps unknown fields and writes them back after the known ones). Every
 * type of the table must be covered by at least one vector, and every
 * vector's type must be in the table: a message added to the schema fails
 * here until it is added to the table (check_vectors.py, run with the
 * second implementation, checks that every schema type has a vector).
 *
 * Inputs are bounded: file names by NAME_MAX, vectors by VC_MAX_VECTOR
 * bytes, the header by VC_MAX_HEADER. Usage: vector_check DIR. Exit status
 * 0 when every vector round-trips, 1 otherwise, 2 on bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "supervise/v1/supervise.pb-c.h"

#define VC_MAX_VECTOR (1024 * 1024)
#define VC_MAX_HEADER 4096
#define VC_MAX_PATH   4096

/* Every message type of supervise.v1, by its generated descriptor. */
static const ProtobufCMessageDescriptor *const vc_types[] = {
    &supervise__v1__ack__descriptor,
    &supervise__v1__create_group__descriptor,
    &supervise__v1__delete_group__descriptor,
    &supervise__v1__envelope__descriptor,
    &supervise__v1__error__descriptor,
    &supervise__v1__event__descriptor,
    &supervise__v1__frame__descriptor,
    &supervise__v1__get_status__descriptor,
    &supervise__v1__group_change__descriptor,
    &supervise__v1__group_created__descriptor,
    &supervise__v1__group_deleted__descriptor,
    &supervise__v1__group_failed__descriptor,
    &supervise__v1__group_info__descriptor,
    &supervise__v1__group_list__descriptor,
    &supervise__v1__group_reset__descriptor,
    &supervise__v1__group_scaled__descriptor,
    &supervise__v1__group_spec__descriptor,
    &supervise__v1__heartbeat__descriptor,
    &supervise__v1__hello__descriptor,
    &supervise__v1__hello_reply__descriptor,
    &supervise__v1__identity__descriptor,
    &supervise__v1__list_groups__descriptor,
    &supervise__v1__list_workers__descriptor,
    &supervise__v1__option__descriptor,
    &supervise__v1__ready__descriptor,
    &supervise__v1__reset_group__descriptor,
    &supervise__v1__restart_scheduled__descriptor,
    &supervise__v1__restart_worker__descriptor,
    &supervise__v1__scale_group__descriptor,
    &supervise__v1__spawn_failed__descriptor,
    &supervise__v1__start_worker__descriptor,
    &supervise__v1__stop_group__descriptor,
    &supervise__v1__terminate_worker__descriptor,
    &supervise__v1__who_am_i__descriptor,
    &supervise__v1__worker_escalated__descriptor,
    &supervise__v1__worker_exited__descriptor,
    &supervise__v1__worker_list__descriptor,
    &supervise__v1__worker_ready__descriptor,
    &supervise__v1__worker_started__descriptor,
    &supervise__v1__worker_status__descriptor,
    &supervise__v1__worker_status_text__descriptor,
    &supervise__v1__worker_adopted__descriptor,
    &supervise__v1__durability__descriptor,
    &supervise__v1__worker_stopped__descriptor,
    &supervise__v1__worker_stopping__descriptor,
    &supervise__v1__worker_unresponsive__descriptor,
    /* v1.3 leases, sessions, pools */
    &supervise__v1__acquire_lease__descriptor,
    &supervise__v1__lease__descriptor,
    &supervise__v1__renew_lease__descriptor,
    &supervise__v1__release_lease__descriptor,
    &supervise__v1__list_leases__descriptor,
    &supervise__v1__lease_list__descriptor,
    &supervise__v1__claim_lease__descriptor,
    &supervise__v1__create_pool__descriptor,
    &supervise__v1__pool_info__descriptor,
    &supervise__v1__list_pools__descriptor,
    &supervise__v1__pool_list__descriptor,
    &supervise__v1__open_session__descriptor,
    &supervise__v1__session__descriptor,
    &supervise__v1__renew_session__descriptor,
    &supervise__v1__close_session__descriptor,
    &supervise__v1__register_sub_worker__descriptor,
    &supervise__v1__register_sub_worker_reply__descriptor,
    &supervise__v1__release_sub_worker__descriptor,
    &supervise__v1__release_sub_worker_reply__descriptor,
    &supervise__v1__lease_event__descriptor,
    &supervise__v1__drain_workers__descriptor,
    &supervise__v1__get_drain__descriptor,
    &supervise__v1__drain_report__descriptor,
    &supervise__v1__drained_worker__descriptor,
    &supervise__v1__drain_extend__descriptor,
    &supervise__v1__drain_ack__descriptor,
    &supervise__v1__rolling_restart__descriptor,
    &supervise__v1__drain_notice__descriptor,
};
#define VC_NTYPES (sizeof(vc_types) / sizeof(vc_types[0]))

static bool vc_seen[VC_NTYPES];

/* vc_read reads at most max bytes of path into a new buffer (caller frees).
 * Returns NULL on error or when the file is larger than max. */
static unsigned char *
vc_read(const char *path, size_t max, size_t *len)
{
	FILE          *f = fopen(path, "rb");
	unsigned char *buf;
	size_t         n;

	if (f == NULL)
		return NULL;
	buf = malloc(max + 1);
	if (buf == NULL) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, max + 1, f);
	if (ferror(f) || n > max) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* vc_type finds the descriptor named in a .txt header; -1 if none. */
static int
vc_type(const char *txt_path)
{
	static const char key[] = "# proto-message: ";
	size_t            len;
	unsigned char    *head = vc_read(txt_path, VC_MAX_HEADER, &len);
	char             *line, *end;
	int               found = -1;

	if (head == NULL) {
		/* a vector's text form may be longer than the header bound:
		 * read just its first VC_MAX_HEADER bytes */
		FILE *f = fopen(txt_path, "rb");
		if (f == NULL)
			return -1;
		head = malloc(VC_MAX_HEADER + 1);
		if (head == NULL) {
			fclose(f);
			return -1;
		}
		len = fread(head, 1, VC_MAX_HEADER, f);
		fclose(f);
	}
	head[len] = '\0';
	line      = strstr((char *) head, key);
	if (line != NULL) {
		line += sizeof(key) - 1;
		end = strchr(line, '\n');
		if (end != NULL)
			*end = '\0';
		for (size_t i = 0; i < VC_NTYPES; i++)
			if (strcmp(vc_types[i]->name, line) == 0)
				found = (int) i;
	}
	free(head);
	return found;
}

/* vc_path writes dir/name.ext into path (VC_MAX_PATH bytes); returns -1
 * when it does not fit. */
static int
vc_path(char *path, const char *dir, const char *name, const char *ext)
{
	int n = snprintf(path, VC_MAX_PATH, "%s/%s.%s", dir, name, ext);

	return n < 0 || n >= VC_MAX_PATH ? -1 : 0;
}

/* vc_check_one checks dir/name.bin; returns 0 when it round-trips. */
static int
vc_check_one(const char *dir, const char *name)
{
	char              path[VC_MAX_PATH];
	size_t            len, packed_len;
	unsigned char    *data, *again;
	ProtobufCMessage *msg;
	int               t, rc = 1;

	if (vc_path(path, dir, name, "txt") != 0) {
		printf("FAIL %s: path too long\n", name);
		return 1;
	}
	t = vc_type(path);
	if (t < 0) {
		printf("FAIL %s: type missing from %s or not in the table\n",
		    name, path);
		return 1;
	}
	if (vc_path(path, dir, name, "bin") != 0) {
		printf("FAIL %s: path too long\n", name);
		return 1;
	}
	data = vc_read(path, VC_MAX_VECTOR, &len);
	if (data == NULL) {
		printf("FAIL %s: cannot read %s\n", name, path);
		return 1;
	}
	msg = protobuf_c_message_unpack(vc_types[t], NULL, len, data);
	if (msg == NULL) {
		printf("FAIL %s: protobuf-c cannot unpack it as %s\n", name,
		    vc_types[t]->name);
		free(data);
		return 1;
	}
	vc_seen[t] = true;
	packed_len = protobuf_c_message_get_packed_size(msg);
	again      = malloc(packed_len + 1);
	if (again == NULL) {
		printf("FAIL %s: out of memory\n", name);
	} else if (!protobuf_c_message_check(msg)) {
		printf("FAIL %s: protobuf_c_message_check failed\n", name);
	} else if (protobuf_c_message_pack(msg, again) != packed_len
	    || packed_len != len || memcmp(again, data, len) != 0) {
		printf("FAIL %s: packs to %zu different bytes (want %zu)\n",
		    name, packed_len, len);
	} else {
		rc = 0;
	}
	free(again);
	protobuf_c_message_free_unpacked(msg, NULL);
	free(data);
	return rc;
}

int
main(int argc, char **argv)
{
	DIR           *d;
	struct dirent *e;
	int            failed = 0, n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: vector_check DIR\n");
		return 2;
	}
	d = opendir(argv[1]);
	if (d == NULL) {
		fprintf(stderr, "vector_check: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	while ((e = readdir(d)) != NULL) {
		char   name[VC_MAX_PATH];
		size_t l = strlen(e->d_name);

		if (l <= 4 || strcmp(e->d_name + l - 4, ".bin") != 0
		    || l - 4 >= sizeof(name))
			continue;
		memcpy(name, e->d_name, l - 4);
		name[l - 4] = '\0';
		failed += vc_check_one(argv[1], name);
		n++;
	}
	closedir(d);
	for (size_t i = 0; i < VC_NTYPES; i++) {
		if (!vc_seen[i]) {
			printf("FAIL no vector for %s\n", vc_types[i]->name);
			failed++;
		}
	}
	printf("protobuf-c: %d vectors, %zu message types, %d problems\n", n,
	    VC_NTYPES, failed);
	return failed == 0 ? 0 : 1;
}
