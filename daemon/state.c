/*
 * state.c — the state directory, its lock and the journal file (see
 * state.h; the record format and replay are in core/journal.c).
 *
 * Durability: the journal on disk is only ever a whole snapshot followed by
 * whole records. When an append fails (a full filesystem, a read-only one,
 * an I/O error) the part of the record that did reach the file is cut off
 * again (ftruncate to the last good offset), the journal is closed and no
 * record is appended any more: appending after a record that was lost
 * would leave a journal that says something false. The in-memory mirror
 * keeps every change, so svd_state_retry (called about once a second by
 * daemon/sup_durability.c) writes it whole as a fresh snapshot, renamed
 * over the journal; the first one that succeeds restores durability. A
 * cut that fails leaves a torn last line, which replay drops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "shell/procinfo.h"
#include "state.h"
#include "errf.h"

/* Largest journal read at start-up. */
#define ST_MAX_FILE (64u * 1024u * 1024u)
/* How long a busy lock is waited for before another daemon is assumed. */
#define ST_LOCK_WAIT_MS 3000
/* Compact once this many records, and 4 times the last snapshot's, were
 * appended since it. */
#define ST_COMPACT_MIN 4096u

struct svd_state {
	char           dir[4096];
	int            lockfd;
	int            fd; /* the journal, O_APPEND; -1 before begin */
	sv_jstate      mirror;
	size_t         appended; /* records appended since the last snapshot */
	size_t         base; /* records in the last snapshot */
	off_t          off; /* bytes of whole records in the journal */
	bool           lost; /* appends stopped until a snapshot succeeds */
	svd_durability dur; /* what the journal on disk covers */
	svd_durability_cb watch; /* told of every change of dur */
	void             *watch_arg;
	char              boot[SV_BOOT_ID_LEN];
};

/* st_dir creates dir (0700) or checks that an existing one is ours and
 * closed to others. */
static sv_err
st_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0) {
		return SV_OK;
	}
	if (errno != EEXIST) {
		return sv_errf(err, errlen, SV_ESYSTEM,
		    "cannot create state_dir %s: %s", dir, strerror(errno));
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		/* A link is refused even to a good directory (dir_trust.h). */
		return sv_errf(err, errlen, SV_ESYSTEM, "state_dir %s is %s",
		    dir,
		    S_ISLNK(st.st_mode)
		        ? "a symbolic link: name the directory "
		          "itself"
		        : "not a directory");
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		return sv_errf(err, errlen, SV_ESYSTEM,
		    "state_dir %s must belong to us and be writable by no one "
		    "else (uid %u, mode %04o)",
		    dir, (unsigned) st.st_uid,
		    (unsigned) (st.st_mode & 07777));
	}
	return SV_OK;
}

/* st_lock takes the lock, waiting up to ST_LOCK_WAIT_MS for it. A
 * predecessor killed in the middle of a spawn leaves a child between clone
 * and exec that still holds the lock (it inherited the descriptor, closed
 * at exec): waiting for the lock is waiting for every such child to exec,
 * after which its environment names it (daemon/supervisor.c looks for it).
 * flock cannot time out, so this polls against a deadline. */
static int
st_lock(int fd)
{
	struct timespec step = {0, 10 * 1000 * 1000};

	for (int waited = 0;; waited += 10) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			return 0;
		}
		if (errno != EWOULDBLOCK || waited >= ST_LOCK_WAIT_MS) {
			return -1;
		}
		(void) nanosleep(&step, NULL);
	}
}

/* st_mono_ns reads CLOCK_MONOTONIC in nanoseconds. */
static int64_t
st_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* st_read reads the journal of s into *prev; a missing one is empty. It
 * logs how long reading and replaying an existing journal took (the
 * start-up cost the journal's size sets; bench/README.md, "journal"). */
static sv_err
st_read(svd_state *s, sv_jstate *prev, char *err, size_t errlen)
{
	char        path[4200], why[200];
	struct stat sb;
	char       *buf;
	size_t      got = 0;
	ssize_t     n;
	int         fd;
	sv_err      rv;
	int64_t     t0 = st_mono_ns();

	snprintf(path, sizeof(path), "%s/state", s->dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT) {
			return sv_jstate_init(prev, "");
		}
		return sv_errf(err, errlen, SV_ESYSTEM, "cannot open %s: %s",
		    path, strerror(errno));
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)
	    || (size_t) sb.st_size > ST_MAX_FILE) {
		close(fd);
		return sv_errf(err, errlen, SV_EINVAL,
		    "%s is not a regular file of at most %u bytes", path,
		    ST_MAX_FILE);
	}
	if ((buf = malloc((size_t) sb.st_size + 1)) == NULL) {
		close(fd);
		return SV_ENOMEM;
	}
	while (got < (size_t) sb.st_size
	    && (n = read(fd, buf + got, (size_t) sb.st_size - got)) > 0) {
		got += (size_t) n;
	}
	close(fd);
	rv = sv_journal_replay(buf, got, prev, why, sizeof(why));
	free(buf);
	if (rv == SV_OK) {
		svd_log("%s: %zu bytes read and replayed in %.1f ms", path,
		    got, (double) (st_mono_ns() - t0) / 1e6);
	}
	if (rv == SV_EINVAL) {
		return sv_errf(err, errlen, SV_EINVAL,
		    "%s: %s; refusing to start: the workers it lists may "
		    "still run. Move it away to start without them",
		    path, why);
	}
	if (rv == SV_OK && prev->torn) {
		svd_log("%s: the last record was cut short (the previous "
		        "supervisor died while writing it); ignored",
		    path);
	}
	return rv;
}

sv_err
svd_state_open(
    const char *dir, svd_state **sp, sv_jstate *prev, char *err, size_t errlen)
{
	svd_state *s;
	char       path[4200];
	sv_err     rv;

	(void) sv_jstate_init(prev, "");
	if (strlen(dir) >= sizeof(s->dir) - 32) {
		return sv_errf(err, errlen, SV_EINVAL, "state_dir too long");
	}
	if ((rv = st_dir(dir, err, errlen)) != SV_OK) {
		return rv;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	s->fd = -1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	if (sv_boot_id(s->boot, sizeof(s->boot)) != SV_OK) {
		s->boot[0] = '\0';
	}
	(void) sv_jstate_init(&s->mirror, s->boot);
	snprintf(path, sizeof(path), "%s/supervised.lock", dir);
	s->lockfd
	    = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lockfd < 0) {
		rv = sv_errf(err, errlen, SV_ESYSTEM, "cannot open %s: %s",
		    path, strerror(errno));
		goto fail;
	}
	if (st_lock(s->lockfd) != 0) {
		rv = errno == EWOULDBLOCK
		    ? sv_errf(err, errlen, SV_EBUSY,
		        "another supervised holds %s (its state "
		        "directory); stop it first",
		        path)
		    : sv_errf(err, errlen, SV_ESYSTEM, "flock %s: %s", path,
		        strerror(errno));
		goto fail;
	}
	if ((rv = st_read(s, prev, err, errlen)) != SV_OK) {
		goto fail;
	}
	*sp = s;
	return SV_OK;
fail:
	sv_jstate_free(prev);
	(void) sv_jstate_init(prev, "");
	svd_state_close(s);
	return rv;
}

const char *
svd_state_boot_id(const svd_state *s)
{
	return s->boot;
}

sv_jstate *
svd_state_mirror(svd_state *s)
{
	return &s->mirror;
}

/* st_wall_ms reads the wall clock in milliseconds since the Unix epoch. */
static uint64_t
st_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

/* st_relock makes sure the lock held is the one in dir: after the state
 * directory's filesystem was replaced (a broken one unmounted, a new one
 * mounted in its place), the lock taken at start is on the old one. Takes
 * the new one without waiting; -1 (errno set) when it cannot, EWOULDBLOCK
 * when another daemon holds it. */
static int
st_relock(svd_state *s)
{
	char        path[4200];
	struct stat a, b;
	int         fd;

	snprintf(path, sizeof(path), "%s/supervised.lock", s->dir);
	if (stat(path, &a) == 0 && fstat(s->lockfd, &b) == 0
	    && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		return 0;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(s->lockfd);
	s->lockfd = fd;
	return 0;
}

/* st_snapshot writes the mirror to STATE_DIR/state.new (opened for
 * appending) and renames it over the journal; that descriptor then appends
 * the records that follow. On failure the old journal and descriptor are
 * left as they were, *errp is the errno, and state.new is removed. */
static sv_err
st_snapshot(svd_state *s, int *errp, char *err, size_t errlen)
{
	char    tmp[4200], path[4200], *buf;
	size_t  len, off = 0, records = 0;
	ssize_t n = 0;
	int     fd, e;
	sv_err  rv;

	*errp = 0;
	if ((rv = sv_journal_snapshot(&s->mirror, &buf, &len)) != SV_OK) {
		*errp = ENOMEM;
		return sv_errf(err, errlen, rv, "cannot format the journal");
	}
	/* The snapshot's own records are the live state compaction compares
	 * with; the mirror's nrecords counts every record it ever took, and
	 * with it each compaction came 5 times later than the one before. */
	for (size_t i = 0; i < len; i++) {
		records += buf[i] == '\n';
	}
	snprintf(tmp, sizeof(tmp), "%s/state.new", s->dir);
	snprintf(path, sizeof(path), "%s/state", s->dir);
	fd = open(tmp,
	    O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		*errp = errno;
		free(buf);
		return sv_errf(err, errlen, SV_ESYSTEM, "cannot create %s: %s",
		    tmp, strerror(errno));
	}
	while (off < len && (n = write(fd, buf + off, len - off)) > 0) {
		off += (size_t) n;
	}
	free(buf);
	if (off < len || rename(tmp, path) != 0) {
		/* A write that returns 0 or short without an error is a
		 * full filesystem. */
		e     = off < len && n >= 0 ? ENOSPC : errno;
		*errp = e;
		rv    = sv_errf(err, errlen, SV_ESYSTEM, "cannot write %s: %s",
		       path, strerror(e));
		close(fd);
		(void) unlink(tmp);
		return rv;
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	s->fd       = fd;
	s->off      = (off_t) len;
	s->base     = records;
	s->appended = 0;
	return SV_OK;
}

sv_err
svd_state_begin(svd_state *s, char *err, size_t errlen)
{
	int    e;
	sv_err rv = st_snapshot(s, &e, err, errlen);

	if (rv == SV_OK) {
		s->dur.ok       = true;
		s->dur.since_ms = st_wall_ms();
	}
	return rv;
}

/* st_tell tells the watcher (if any) that s->dur changed. */
static void
st_tell(svd_state *s)
{
	if (s->watch != NULL) {
		s->watch(s->watch_arg, &s->dur);
	}
}

/* st_detail keeps what (cut to fit) as the reason's one-line detail. */
static void
st_detail(svd_state *s, const char *what)
{
	size_t n = strnlen(what, sizeof(s->dur.detail) - 1);

	memcpy(s->dur.detail, what, n);
	s->dur.detail[n] = '\0';
}

/* st_lose stops appending: the journal is closed as it is (whole records
 * only, or a torn last line when the cut failed), and durability is lost
 * for reason e until a snapshot succeeds (svd_state_retry). */
static void
st_lose(svd_state *s, int e, const char *what)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	s->lost         = true;
	s->dur.ok       = false;
	s->dur.err      = e;
	s->dur.since_ms = st_wall_ms();
	st_detail(s, what);
	st_tell(s);
}

void
svd_state_record(svd_state *s, const sv_jrec *r)
{
	char   *line, why[200];
	size_t  len;
	ssize_t n;

	if (s == NULL) {
		return;
	}
	if (sv_journal_format(r, &line, &len) != SV_OK) {
		svd_log(
		    "journal: cannot record a '%c' record", (char) r->kind);
		return;
	}
	if (sv_journal_apply(&s->mirror, line, len - 1, why, sizeof(why))
	    != SV_OK) {
		svd_log("journal: record refused: %s", why);
		free(line);
		return;
	}
	if (s->fd < 0 || s->lost) {
		/* Not begun yet, or appends stopped: the mirror has it, and
		 * the next snapshot writes it. */
		free(line);
		return;
	}
	n = write(s->fd, line, len);
	free(line);
	if (n != (ssize_t) len) {
		/* A short write is a full filesystem. */
		int  e = n < 0 ? errno : ENOSPC;
		char what[4400];

		if (n > 0 && ftruncate(s->fd, s->off) != 0) {
			svd_log("journal: cannot cut the partial record off "
			        "%s/state (%s); a replay drops it as a torn "
			        "last line",
			    s->dir, strerror(errno));
		}
		snprintf(what, sizeof(what), "cannot append to %s/state: %s",
		    s->dir, strerror(e));
		st_lose(s, e, what);
		return;
	}
	s->off += (off_t) len;
	s->appended++;
	if (s->appended > ST_COMPACT_MIN && s->appended > 4 * s->base) {
		int e;
		/* A failed compaction leaves the journal whole and open:
		 * appends go on, and compaction is tried again later. */
		if (st_snapshot(s, &e, why, sizeof(why)) != SV_OK) {
			svd_log("journal: compaction failed: %s", why);
			s->appended = 0;
		}
	}
}

void
svd_state_watch(svd_state *s, svd_durability_cb cb, void *arg)
{
	s->watch     = cb;
	s->watch_arg = arg;
}

const svd_durability *
svd_state_durability(const svd_state *s)
{
	return &s->dur;
}

bool
svd_state_retry(svd_state *s)
{
	char what[4400], why[4300];
	int  e;

	if (!s->lost) {
		return true;
	}
	if (st_relock(s) != 0) {
		e = errno;
		snprintf(what, sizeof(what),
		    e == EWOULDBLOCK
		        ? "another supervised holds %s/supervised.lock"
		        : "cannot lock %s/supervised.lock",
		    s->dir);
	} else if (st_snapshot(s, &e, why, sizeof(why)) == SV_OK) {
		s->lost          = false;
		s->dur.ok        = true;
		s->dur.err       = 0;
		s->dur.since_ms  = st_wall_ms();
		s->dur.detail[0] = '\0';
		st_tell(s);
		return true;
	} else {
		snprintf(what, sizeof(what), "%s", why);
	}
	if (e != s->dur.err) {
		/* Still lost, for another reason: say so (since stays). */
		s->dur.err = e;
		st_detail(s, what);
		st_tell(s);
	}
	return false;
}

void
svd_state_close(svd_state *s)
{
	if (s == NULL) {
		return;
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	if (s->lockfd >= 0) {
		close(s->lockfd); /* releases the lock */
	}
	sv_jstate_free(&s->mirror);
	free(s);
}
