/*
 * log.c — the daemon's log, written off the loop thread (see log.h).
 *
 * A byte ring holds whole lines. svd_log appends under a mutex and signals
 * the writer; the writer takes what is there, releases the mutex, and
 * write()s it. Nothing on the caller's side ever waits for the output.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_RING (256 * 1024)
#define LOG_LINE 2048

static struct {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	pthread_t       thread;
	bool            running; /* the writer thread exists */
	bool            stopping;
	char            ring[LOG_RING];
	size_t          head, len; /* bytes queued from head, cyclically */
	unsigned long   dropped; /* lines lost since the last report */
} lg = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

/* log_write_all writes n bytes to stderr; with deadline_ms > 0 and a
 * non-blocking stderr it gives up after that long without progress. */
static void
log_write_all(const char *p, size_t n, int deadline_ms)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t) w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else if (w < 0 && errno == EAGAIN && deadline_ms > 0) {
			struct pollfd pfd = {STDERR_FILENO, POLLOUT, 0};
			if (poll(&pfd, 1, deadline_ms) <= 0) {
				return;
			}
		} else {
			return; /* nowhere to write: the line is lost */
		}
	}
}

/* log_push appends one line to the ring (caller holds the mutex). */
static void
log_push(const char *line, size_t n)
{
	size_t tail, first;

	if (LOG_RING - lg.len < n) {
		lg.dropped++;
		return;
	}
	tail  = (lg.head + lg.len) % LOG_RING;
	first = n < LOG_RING - tail ? n : LOG_RING - tail;
	memcpy(lg.ring + tail, line, first);
	memcpy(lg.ring, line + first, n - first);
	lg.len += n;
}

/* log_format writes the line for fmt into buf; returns its length. */
static size_t
log_format(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct timespec ts;
	struct tm       tm;
	int             n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, size,
	    "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ supervised[%d]: ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, (int) getpid());
	n += vsnprintf(buf + n, size - (size_t) n - 1, fmt, ap);
	if (n > (int) size - 2) {
		n = (int) size - 2;
	}
	buf[n++] = '\n';
	return (size_t) n;
}

void
svd_log(const char *fmt, ...)
{
	char    line[LOG_LINE];
	va_list ap;
	size_t  n;

	va_start(ap, fmt);
	n = log_format(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lg.mtx);
	if (!lg.running) {
		pthread_mutex_unlock(&lg.mtx);
		/* One write per line, so lines from workers do not mix. */
		log_write_all(line, n, 0);
		return;
	}
	log_push(line, n);
	pthread_cond_signal(&lg.cv);
	pthread_mutex_unlock(&lg.mtx);
}

/* log_thread writes queued bytes until stopped and drained. */
static void *
log_thread(void *arg)
{
	static char out[LOG_RING];
	char        note[128];

	(void) arg;
	pthread_mutex_lock(&lg.mtx);
	for (;;) {
		size_t n, first;
		while (lg.len == 0 && lg.dropped == 0 && !lg.stopping) {
			pthread_cond_wait(&lg.cv, &lg.mtx);
		}
		if (lg.len == 0 && lg.dropped == 0 && lg.stopping) {
			break;
		}
		n     = lg.len;
		first = n < LOG_RING - lg.head ? n : LOG_RING - lg.head;
		memcpy(out, lg.ring + lg.head, first);
		memcpy(out + first, lg.ring, n - first);
		lg.head = (lg.head + n) % LOG_RING;
		lg.len  = 0;
		note[0] = '\0';
		if (lg.dropped > 0) {
			snprintf(note, sizeof(note),
			    "supervised[%d]: %lu log lines dropped (output "
			    "too "
			    "slow)\n",
			    (int) getpid(), lg.dropped);
			lg.dropped = 0;
		}
		pthread_mutex_unlock(&lg.mtx);
		log_write_all(out, n, 0);
		log_write_all(note, strlen(note), 0);
		pthread_mutex_lock(&lg.mtx);
	}
	pthread_mutex_unlock(&lg.mtx);
	return NULL;
}

bool
svd_log_start(void)
{
	pthread_mutex_lock(&lg.mtx);
	lg.stopping = false;
	if (!lg.running
	    && pthread_create(&lg.thread, NULL, log_thread, NULL) == 0) {
		lg.running = true;
	}
	pthread_mutex_unlock(&lg.mtx);
	return lg.running;
}

void
svd_log_stop(void)
{
	bool join;

	pthread_mutex_lock(&lg.mtx);
	join        = lg.running;
	lg.stopping = true;
	pthread_cond_signal(&lg.cv);
	pthread_mutex_unlock(&lg.mtx);
	if (join) {
		/* A reader that takes nothing must not keep the daemon from
		 * exiting: wait one second, then leave the thread behind. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (pthread_timedjoin_np(lg.thread, NULL, &ts) != 0) {
			pthread_detach(lg.thread);
		}
	}
	pthread_mutex_lock(&lg.mtx);
	lg.running = false;
	pthread_mutex_unlock(&lg.mtx);
}
