/*
 * fuzz_config.c — libFuzzer harness for the configuration loader,
 * svd_config_load_text (daemon/config.c).
 *
 * The input is the text of a configuration (cut at its first NUL, as a C
 * string would be). The loader must return a configuration or one error
 * line, never crash, leak or hang. Properties checked (daemon/config.h,
 * docs/config.md):
 *   - SV_OK, SV_EINVAL or SV_ENOMEM, nothing else;
 *   - an error is one non-empty line starting with the label ("fuzz:");
 *   - an accepted configuration respects the documented bounds: 1..64
 *     groups with distinct valid names, 1..256 argv entries (NULL-
 *     terminated, argv[0] non-empty), a non-empty purpose, count <=
 *     max_count <= 4096, env entries "NAME=value" that are not reserved,
 *     socket_dir absolute and short enough for a socket path.
 *
 * Inputs with "@include" are skipped: libconfig reads the named file (any
 * file on this machine, a device, a FIFO), and libconfig 1.5 ends the whole
 * process with exit(2) ("input in flex scanner failed") when the file is a
 * directory; neither is the loader's own code (README.md, "Known
 * findings"). The one known leak of libconfig 1.5 (a string token in a
 * syntax error) is suppressed by tests/fuzz/lsan.supp.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/ordinal.h"
#include "fuzz_util.h"
#include "wire/wire.h"

/* Longest configuration text tried: far above any real file. */
#define FUZZ_CONFIG_MAX (64u * 1024u)

/* check_group checks one accepted group against docs/config.md. */
static void
check_group(const svd_group_config *g)
{
	FUZZ_CHECK(g->name != NULL && svw_check_name(g->name) == SV_OK,
	    "group name valid");
	FUZZ_CHECK(g->argv != NULL && g->argc >= 1 && g->argc <= SVD_MAX_ARGV,
	    "1..256 argv entries");
	FUZZ_CHECK(g->argv[g->argc] == NULL, "argv NULL-terminated");
	for (size_t i = 0; i < g->argc; i++) {
		FUZZ_CHECK(g->argv[i] != NULL, "argv entries present");
	}
	FUZZ_CHECK(g->argv[0][0] != '\0', "a program is named");
	FUZZ_CHECK(g->purpose != NULL && g->purpose[0] != '\0'
	        && strlen(g->purpose) <= SVD_MAX_PURPOSE,
	    "purpose non-empty and bounded");
	FUZZ_CHECK(g->count <= g->max_count, "count <= max_count");
	FUZZ_CHECK(g->max_count >= 1 && g->max_count <= SV_ORDINALS_MAX,
	    "max_count within 1..4096");
	FUZZ_CHECK(g->nenv <= SVD_MAX_ENV, "env bounded");
	FUZZ_CHECK(
	    g->nenv == 0 || g->env[g->nenv] == NULL, "env NULL-terminated");
	for (size_t i = 0; i < g->nenv; i++) {
		FUZZ_CHECK(g->env[i] != NULL && strchr(g->env[i], '=') != NULL
		        && g->env[i][0] != '=',
		    "env entries are NAME=value");
		FUZZ_CHECK(!svd_env_reserved(g->env[i]),
		    "reserved variables refused");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svd_config *cfg = NULL;
	char        err[1024];
	char       *text;
	sv_err      rv;

	if (size > FUZZ_CONFIG_MAX
	    || memmem(data, size, "@include", 8) != NULL) {
		return 0;
	}
	if ((text = malloc(size + 1)) == NULL) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	memset(err, 'x', sizeof(err));
	err[sizeof(err) - 1] = '\0';
	rv = svd_config_load_text("fuzz", text, &cfg, err, sizeof(err));
	free(text);
	FUZZ_CHECK(rv == SV_OK || rv == SV_EINVAL || rv == SV_ENOMEM,
	    "documented result");
	if (rv != SV_OK) {
		FUZZ_CHECK(cfg == NULL, "nothing handed back on error");
		FUZZ_CHECK(
		    strncmp(err, "fuzz:", 5) == 0, "error names the label");
		FUZZ_CHECK(strchr(err, '\n') == NULL, "error is one line");
		FUZZ_CHECK(strlen(err) > 5, "error says what");
		return 0;
	}
	FUZZ_CHECK(cfg != NULL, "a configuration on success");
	FUZZ_CHECK(cfg->ngroups >= 1 && cfg->ngroups <= SVD_MAX_GROUPS,
	    "1..64 groups");
	FUZZ_CHECK(cfg->socket_dir == NULL
	        || (cfg->socket_dir[0] == '/'
	            && strlen(cfg->socket_dir) <= SVD_MAX_SOCKET_DIR),
	    "socket_dir absolute and bounded");
	FUZZ_CHECK(cfg->stop_timeout_ms <= SVD_MAX_TIMEOUT_MS,
	    "stop timeout bounded");
	for (size_t i = 0; i < cfg->ngroups; i++) {
		check_group(&cfg->groups[i]);
		for (size_t j = 0; j < i; j++) {
			FUZZ_CHECK(
			    strcmp(cfg->groups[i].name, cfg->groups[j].name)
			        != 0,
			    "group names distinct");
		}
	}
	svd_config_free(cfg);
	return 0;
}
