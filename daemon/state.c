/*
 * state.c — the state directory, its lock and the journal file (see
 * state.h; the record format and replay are in core/journal.c).
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

/* Largest journal read at start-up. */
#define ST_MAX_FILE (64u * 1024u * 1024u)
/* How long a busy lock is waited for before another daemon is assumed. */
#define ST_LOCK_WAIT_MS 3000
/* Compact once this many records were appended beyond the mirror's size. */
#define ST_COMPACT_MIN 4096u

struct svd_state {
	char      dir[4096];
	int       lockfd;
	int       fd; /* the journal, O_APPEND; -1 before begin */
	sv_jstate mirror;
	size_t    appended; /* records appended since the last snapshot */
	size_t    base; /* records in the last snapshot */
	bool      failing; /* the last write failed (logged once) */
	char      boot[SV_BOOT_ID_LEN];
};

static sv_err st_fail(char *err, size_t errlen, sv_err rv, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

/* st_fail formats a message into err and returns rv. */
static sv_err
st_fail(char *err, size_t errlen, sv_err rv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rv;
}

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
		return st_fail(err, errlen, SV_ESYSTEM,
		    "cannot create state_dir %s: %s", dir, strerror(errno));
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		/* A link is refused even to a good directory (dir_trust.h). */
		return st_fail(err, errlen, SV_ESYSTEM, "state_dir %s is %s",
		    dir,
		    S_ISLNK(st.st_mode)
		        ? "a symbolic link: name the directory "
		          "itself"
		        : "not a directory");
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		return st_fail(err, errlen, SV_ESYSTEM,
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

/* st_read reads the journal of s into *prev; a missing one is empty. */
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

	snprintf(path, sizeof(path), "%s/state", s->dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT) {
			return sv_jstate_init(prev, "");
		}
		return st_fail(err, errlen, SV_ESYSTEM, "cannot open %s: %s",
		    path, strerror(errno));
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)
	    || (size_t) sb.st_size > ST_MAX_FILE) {
		close(fd);
		return st_fail(err, errlen, SV_EINVAL,
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
	if (rv == SV_EINVAL) {
		return st_fail(err, errlen, SV_EINVAL,
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
		return st_fail(err, errlen, SV_EINVAL, "state_dir too long");
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
		rv = st_fail(err, errlen, SV_ESYSTEM, "cannot open %s: %s",
		    path, strerror(errno));
		goto fail;
	}
	if (st_lock(s->lockfd) != 0) {
		rv = errno == EWOULDBLOCK
		    ? st_fail(err, errlen, SV_EBUSY,
		        "another supervised holds %s (its state "
		        "directory); stop it first",
		        path)
		    : st_fail(err, errlen, SV_ESYSTEM, "flock %s: %s", path,
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

/* st_snapshot writes the mirror to STATE_DIR/state.new and renames it over
 * the journal, then reopens it for appending. */
static sv_err
st_snapshot(svd_state *s, char *err, size_t errlen)
{
	char    tmp[4200], path[4200], *buf;
	size_t  len, off = 0;
	ssize_t n;
	int     fd;
	sv_err  rv;

	if ((rv = sv_journal_snapshot(&s->mirror, &buf, &len)) != SV_OK) {
		return st_fail(err, errlen, rv, "cannot format the journal");
	}
	snprintf(tmp, sizeof(tmp), "%s/state.new", s->dir);
	snprintf(path, sizeof(path), "%s/state", s->dir);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(buf);
		return st_fail(err, errlen, SV_ESYSTEM, "cannot create %s: %s",
		    tmp, strerror(errno));
	}
	while (off < len && (n = write(fd, buf + off, len - off)) > 0) {
		off += (size_t) n;
	}
	free(buf);
	if (off < len || close(fd) != 0 || rename(tmp, path) != 0) {
		rv = st_fail(err, errlen, SV_ESYSTEM, "cannot write %s: %s",
		    path, strerror(errno));
		if (off < len) {
			close(fd);
		}
		(void) unlink(tmp);
		return rv;
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	s->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (s->fd < 0) {
		return st_fail(err, errlen, SV_ESYSTEM, "cannot open %s: %s",
		    path, strerror(errno));
	}
	s->base     = s->mirror.nrecords;
	s->appended = 0;
	return SV_OK;
}

sv_err
svd_state_begin(svd_state *s, char *err, size_t errlen)
{
	return st_snapshot(s, err, errlen);
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
	if (s->fd < 0) {
		free(line);
		return;
	}
	n = write(s->fd, line, len);
	free(line);
	if (n != (ssize_t) len) {
		if (!s->failing) {
			svd_log("journal: write failed (%s); a supervisor "
			        "restart may not find every worker",
			    n < 0 ? strerror(errno) : "short write");
		}
		s->failing = true;
		return;
	}
	s->failing = false;
	s->appended++;
	if (s->appended > ST_COMPACT_MIN && s->appended > 4 * s->base) {
		if (st_snapshot(s, why, sizeof(why)) != SV_OK) {
			svd_log("journal: compaction failed: %s", why);
			s->appended = 0;
		}
	}
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
