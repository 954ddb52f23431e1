/*
 * req_groups.c — the group admin requests: ListGroups, ResetGroup,
 * CreateGroup (with the group spec rendered as config text) and
 * DeleteGroup.
 */
#include "sup_internal.h"

void
group_info(svd_sup *s, const sv_cgroup *g, Supervise__V1__GroupInfo *gi)
{
	svd_gsh *gsh = gsh_find(s, g->id);

	supervise__v1__group_info__init(gi);
	gi->name           = g->name;
	gi->count          = sv_core_group_count(g);
	gi->max_count      = g->max_count;
	gi->failed         = g->failed;
	gi->failure_reason = g->failed ? (char *) g->reason : (char *) "";
	gi->restart        = (char *) sv_restart_type_name(g->pol.restart);
	gi->strategy       = (char *) sv_strategy_name(s->cfg->strategy);
	gi->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	for (uint32_t o = 0; o < g->nseats; o++) {
		sv_seat_view v;
		sv_seat_view_of(s->core, g, o, &v);
		switch (v.state) {
		case SV_SEAT_RUNNING:
			gi->running++;
			gi->ready += v.current.ready;
			break;
		case SV_SEAT_STARTING:
			gi->starting++;
			gi->running += v.current.pid > 0;
			break;
		case SV_SEAT_STOPPING:
			gi->stopping++;
			gi->running++;
			break;
		case SV_SEAT_BACKOFF:
			gi->backoff++;
			break;
		default:
			break;
		}
	}
}

/* req_groups answers ListGroups. */
sv_err
req_groups(req_ctx *c)
{
	Supervise__V1__GroupList  *gl   = &c->out.gl;
	const char                *name = c->req->list_groups->group;
	const sv_cgroup           *only = NULL;
	size_t                     n = sv_core_ngroups(c->s->core), k = 0;
	Supervise__V1__GroupInfo  *items;
	Supervise__V1__GroupInfo **ptrs;
	sv_err                     err;

	if (name[0] != '\0' && (err = req_group(c, name, &only)) != SV_OK) {
		return err;
	}
	items       = calloc(n + 1, sizeof(*items));
	ptrs        = calloc(n + 1, sizeof(Supervise__V1__GroupInfo *));
	c->arena[0] = items;
	c->arena[1] = ptrs;
	if (items == NULL || ptrs == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const sv_cgroup *g = sv_core_group_at(c->s->core, i);
		if (only == NULL || only == g) {
			group_info(c->s, g, &items[k]);
			ptrs[k] = &items[k];
			k++;
		}
	}
	gl->n_groups      = k;
	gl->groups        = ptrs;
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST;
	c->rep.group_list = gl;
	return SV_OK;
}

/* req_reset clears a failed group and starts it again. */
sv_err
req_reset(req_ctx *c)
{
	Supervise__V1__GroupInfo *gi = &c->out.gi;
	const sv_cgroup          *g  = NULL;
	sv_err                    err;

	if ((err = req_group(c, c->req->reset_group->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if ((err = sv_core_reset(c->s->core, g->id, sv_loop_now_ms()))
	    != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	group_info(c->s, g, gi);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}

/* spec_quote writes str to f as a libconfig string literal. */
static void
spec_quote(FILE *f, const char *str)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *) str; *p != 0;
	     p++) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\x%02x", *p);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* spec_literal tells whether an option value can be written as is: an
 * integer, a decimal number, true or false. */
static bool
spec_literal(const char *v)
{
	size_t digits = 0, dots = 0;

	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		return true;
	}
	for (const char *p = v + (*v == '-'); *p != '\0'; p++) {
		if (*p >= '0' && *p <= '9') {
			digits++;
		} else if (*p == '.' && dots == 0) {
			dots++;
		} else {
			return false;
		}
	}
	return digits > 0 && digits <= 20;
}

/* spec_render writes a GroupSpec as the text of a config file with one
 * group, so that svd_config_load_text checks it by the file's rules.
 * Returns a malloc'ed string (the caller frees it) or NULL, with a message
 * in c for what cannot even be written. */
static char *
spec_render(req_ctx *c, const Supervise__V1__GroupSpec *sp)
{
	char  *text = NULL;
	size_t len  = 0;
	FILE  *f    = open_memstream(&text, &len);

	if (f == NULL) {
		req_err(c, SV_EINTERNAL, "out of memory");
		return NULL;
	}
	fprintf(f, "stop_timeout_ms = %" PRIu64 ";\ngroups = ( {\n  name = ",
	    c->s->cfg->stop_timeout_ms);
	spec_quote(f, sp->name);
	fprintf(f, ";\n  argv = [");
	for (size_t i = 0; i < sp->n_argv; i++) {
		fputs(i > 0 ? ", " : " ", f);
		spec_quote(f, sp->argv[i]);
	}
	fprintf(f, " ];\n  count = %" PRIu32 ";\n  purpose = ", sp->count);
	spec_quote(f, sp->purpose);
	fputs(";\n", f);
	if (sp->n_env > 0) {
		fputs("  env = [", f);
		for (size_t i = 0; i < sp->n_env; i++) {
			fputs(i > 0 ? ", " : " ", f);
			spec_quote(f, sp->env[i]);
		}
		fputs(" ];\n", f);
	}
	if (sp->cwd[0] != '\0') {
		fputs("  cwd = ", f);
		spec_quote(f, sp->cwd);
		fputs(";\n", f);
	}
	if (sp->max_count > 0) {
		fprintf(f, "  max_count = %" PRIu32 ";\n", sp->max_count);
	}
	for (size_t i = 0; i < sp->n_options; i++) {
		const char *k = sp->options[i]->key;
		/* Only a row of config_keys.def marked OPTION can be set
		 * here: GroupSpec's own fields, top-level keys and words that
		 * are no key are refused before anything is rendered. */
		if (!svd_config_spec_option(k)) {
			fclose(f);
			free(text);
			req_err(c, SV_EBADREQ,
			    "spec: groups[0].%.40s: unknown key, or one "
			    "that GroupSpec has a field for",
			    k != NULL ? k : "");
			return NULL;
		}
		fprintf(f, "  %s = ", k);
		if (spec_literal(sp->options[i]->value)) {
			fputs(sp->options[i]->value, f);
		} else {
			spec_quote(f, sp->options[i]->value);
		}
		fputs(";\n", f);
	}
	fputs("} );\n", f);
	if (fclose(f) != 0) {
		free(text);
		req_err(c, SV_EINTERNAL, "out of memory");
		return NULL;
	}
	return text;
}

/* req_create_group checks a GroupSpec by the config file's rules and adds
 * the group. */
sv_err
req_create_group(req_ctx *c)
{
	const Supervise__V1__GroupSpec *sp  = c->req->create_group->spec;
	Supervise__V1__GroupInfo       *gi  = &c->out.gi;
	svd_config                     *cfg = NULL;
	char                           *text;
	char                            msg[SVW_MAX_TEXT];
	sv_err                          err;

	if (sp == NULL) {
		return req_err(c, SV_EBADREQ, "CreateGroup needs a spec");
	}
	if ((text = spec_render(c, sp)) == NULL) {
		return SV_EBADREQ;
	}
	err = svd_config_load_text("spec", text, &cfg, msg, sizeof(msg));
	if (err != SV_OK) {
		free(text);
		return req_err(c, err == SV_ENOMEM ? SV_EINTERNAL : SV_EBADREQ,
		    "%s", msg);
	}
	if (sv_core_group_named(c->s->core, cfg->groups[0].name) != NULL) {
		free(text);
		svd_config_free(cfg);
		return req_err(
		    c, SV_EBADREQ, "a group named \"%s\" exists", sp->name);
	}
	if ((err
	        = req_room(c, cfg->groups[0].name, NULL, cfg->groups[0].count))
	    != SV_OK) {
		free(text);
		svd_config_free(cfg);
		return err;
	}
	/* The text goes to the journal with the group (a successor
	 * recreates the group from it). */
	if ((err = gsh_add(c->s, &cfg->groups[0], cfg, text)) != SV_OK) {
		free(text);
		svd_config_free(cfg);
		return req_err(c, err == SV_EEXHAUSTED ? err : SV_EINTERNAL,
		    err == SV_EEXHAUSTED ? "at most %d groups"
		                         : "cannot create the group (%d)",
		    SV_CORE_MAX_GROUPS);
	}
	sup_drain_effects(c->s);
	group_info(c->s, sv_core_group_named(c->s->core, sp->name), gi);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}

/* req_delete_group stops a group's workers and removes it once they are
 * reaped. The reply describes the group as it was taken (copied, since the
 * group may be gone by the time the reply is encoded). */
sv_err
req_delete_group(req_ctx *c)
{
	Supervise__V1__GroupInfo *gi = &c->out.gi;
	const sv_cgroup          *g  = NULL;
	sv_err                    err;

	if ((err = req_group(c, c->req->delete_group->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	group_info(c->s, g, gi);
	c->arena[0] = strdup(gi->name);
	c->arena[1] = strdup(gi->purpose);
	c->arena[2] = strdup(gi->failure_reason);
	if (c->arena[0] == NULL || c->arena[1] == NULL
	    || c->arena[2] == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	gi->name           = c->arena[0];
	gi->purpose        = c->arena[1];
	gi->failure_reason = c->arena[2];
	if ((err = sv_core_delete_group(c->s->core, g->id, sv_loop_now_ms()))
	    != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}
