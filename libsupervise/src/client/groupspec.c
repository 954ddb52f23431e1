/*
 * groupspec.c — a group described at runtime (supervise/client.h,
 * sv_groupspec) and its CreateGroup request. The spec is the protocol's
 * GroupSpec built in place: fixed arrays of CL_SPEC_MAX_ITEMS argv, env
 * and option entries, every string copied into a list the spec owns and
 * frees. The supervisor checks the spec exactly like a group of the config
 * file; nothing here knows the config keys.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

/* Bounds of a spec built here (the supervisor checks the rest). */
#define CL_SPEC_MAX_ITEMS 256

struct sv_groupspec {
	Supervise__V1__GroupSpec spec;
	Supervise__V1__Option    options[CL_SPEC_MAX_ITEMS];
	Supervise__V1__Option   *option_ptrs[CL_SPEC_MAX_ITEMS];
	char                    *argv[CL_SPEC_MAX_ITEMS];
	char                    *env[CL_SPEC_MAX_ITEMS];
	char                   **strings; /* every string allocated here */
	size_t                   nstrings;
};

/* spec_dup copies str into the spec's string list. */
static char *
spec_dup(sv_groupspec *s, const char *str)
{
	char **l = realloc(s->strings, (s->nstrings + 1) * sizeof(*l));
	char  *d;

	if (l == NULL) {
		return NULL;
	}
	s->strings = l;
	if ((d = strdup(str)) == NULL) {
		return NULL;
	}
	s->strings[s->nstrings++] = d;
	return d;
}

sv_err
sv_groupspec_new(const char *name, const char *purpose, uint32_t count,
    sv_groupspec **specp)
{
	sv_groupspec *s;

	if (name == NULL || purpose == NULL || specp == NULL) {
		return SV_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	supervise__v1__group_spec__init(&s->spec);
	s->spec.argv    = s->argv;
	s->spec.env     = s->env;
	s->spec.options = s->option_ptrs;
	s->spec.count   = count;
	s->spec.cwd     = "";
	if ((s->spec.name = spec_dup(s, name)) == NULL
	    || (s->spec.purpose = spec_dup(s, purpose)) == NULL) {
		sv_groupspec_free(s);
		return SV_ENOMEM;
	}
	*specp = s;
	return SV_OK;
}

/* spec_push appends str to a string vector of the spec. */
static sv_err
spec_push(sv_groupspec *s, char **vec, size_t *n, const char *str)
{
	if (s == NULL || str == NULL) {
		return SV_EINVAL;
	}
	if (*n >= CL_SPEC_MAX_ITEMS) {
		return SV_ETOOLARGE;
	}
	if ((vec[*n] = spec_dup(s, str)) == NULL) {
		return SV_ENOMEM;
	}
	(*n)++;
	return SV_OK;
}

sv_err
sv_groupspec_add_arg(sv_groupspec *spec, const char *arg)
{
	return spec == NULL
	    ? SV_EINVAL
	    : spec_push(spec, spec->argv, &spec->spec.n_argv, arg);
}

sv_err
sv_groupspec_add_env(sv_groupspec *spec, const char *entry)
{
	return spec == NULL
	    ? SV_EINVAL
	    : spec_push(spec, spec->env, &spec->spec.n_env, entry);
}

sv_err
sv_groupspec_set_cwd(sv_groupspec *spec, const char *cwd)
{
	if (spec == NULL || cwd == NULL) {
		return SV_EINVAL;
	}
	if ((spec->spec.cwd = spec_dup(spec, cwd)) == NULL) {
		spec->spec.cwd = "";
		return SV_ENOMEM;
	}
	return SV_OK;
}

sv_err
sv_groupspec_set_max_count(sv_groupspec *spec, uint32_t max_count)
{
	if (spec == NULL) {
		return SV_EINVAL;
	}
	spec->spec.max_count = max_count;
	return SV_OK;
}

sv_err
sv_groupspec_set(sv_groupspec *spec, const char *key, const char *value)
{
	Supervise__V1__Option *o;

	if (spec == NULL || key == NULL || value == NULL) {
		return SV_EINVAL;
	}
	if (spec->spec.n_options >= CL_SPEC_MAX_ITEMS) {
		return SV_ETOOLARGE;
	}
	o = &spec->options[spec->spec.n_options];
	supervise__v1__option__init(o);
	if ((o->key = spec_dup(spec, key)) == NULL
	    || (o->value = spec_dup(spec, value)) == NULL) {
		return SV_ENOMEM;
	}
	spec->option_ptrs[spec->spec.n_options++] = o;
	return SV_OK;
}

void
sv_groupspec_free(sv_groupspec *spec)
{
	if (spec != NULL) {
		for (size_t i = 0; i < spec->nstrings; i++) {
			free(spec->strings[i]);
		}
		free(spec->strings);
		free(spec);
	}
}

sv_err
sv_client_create_group(
    sv_client *client, const sv_groupspec *spec, int timeout_ms)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__CreateGroup cg  = SUPERVISE__V1__CREATE_GROUP__INIT;

	if (client == NULL || spec == NULL) {
		return SV_EINVAL;
	}
	cg.spec          = (Supervise__V1__GroupSpec *) &spec->spec;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP;
	req.create_group = &cg;
	/* A resent copy finds the group there and is refused: not resent. */
	return svc_send(client, &req, timeout_ms);
}
