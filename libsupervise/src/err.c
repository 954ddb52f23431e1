/*
 * err.c — names and messages for sv_err, generated from SV_ERR_MAP so the
 * enum, the names and the messages can never drift apart.
 */
#include <stdarg.h>
#include <stdio.h>

#include "errf.h"
#include "supervise/supervise.h"

const char *
sv_strerror(sv_err err)
{
	switch (err) {
#define SV_ERR_MSG_(name, value, msg) \
	case SV_##name:               \
		return msg;
		SV_ERR_MAP(SV_ERR_MSG_)
#undef SV_ERR_MSG_
	}
	return "unknown error";
}

const char *
sv_err_name(sv_err err)
{
	switch (err) {
#define SV_ERR_NAME_(name, value, msg) \
	case SV_##name:                \
		return #name;
		SV_ERR_MAP(SV_ERR_NAME_)
#undef SV_ERR_NAME_
	}
	return "UNKNOWN";
}

const char *
sv_version(void)
{
	return SV_VERSION_STRING;
}

/* sv_errf: see errf.h. */
sv_err
sv_errf(char *buf, size_t len, sv_err err, const char *fmt, ...)
{
	va_list ap;

	if (buf != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return err;
}
