/*
 * test_config_doc.c — docs/config.md's key tables ("Top level", "A
 * group" and "Lease pools") against the key table the daemon reads
 * (config_keys.def): every row of the table has a row in the docs with the
 * same type, and the docs list no key the table lacks. A key added to one and
 * not the other fails here, naming it. Also: the table's OPTION rows are
 * exactly the keys a GroupSpec may give as options (svd_config_spec_option).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#ifndef SV_SOURCE_DIR
#error "SV_SOURCE_DIR must name the source tree"
#endif

/* One key: its name and the type the docs write for it. */
typedef struct doc_key {
	const char *name;
	const char *type;
	int         option; /* group keys: a GroupSpec option */
} doc_key;

#define FIELD  0
#define OPTION 1
static const doc_key group_rows[] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d) {#n, t, sp},
#define SV_TOP_KEY(n, t, d)
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
};
static const doc_key top_rows[] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d)
#define SV_TOP_KEY(n, t, d) {#n, t, 0},
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
};
static const doc_key pool_rows[] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d)
#define SV_TOP_KEY(n, t, d)
#define SV_POOL_KEY(n, t, lo, hi, m, p, ch, d) {#n, t, 0},
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
#undef SV_POOL_KEY
};
#undef FIELD
#undef OPTION

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

/* A key row read from the docs (malloc'ed strings, freed by doc_free). */
typedef struct doc_row {
	char *name;
	char *type;
} doc_row;

/*
 * doc_section reads the key table under heading `heading` of
 * docs/config.md into rows (at most max); returns how many. A row is a
 * line "| `KEY` | TYPE | ...". The caller frees the rows' strings.
 */
static size_t
doc_section(const char *heading, doc_row *rows, size_t max)
{
	char   line[8192];
	FILE  *f  = fopen(SV_SOURCE_DIR "/docs/config.md", "r");
	size_t n  = 0;
	int    on = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "## ", 3) == 0) {
			on = strncmp(line + 3, heading, strlen(heading)) == 0
			    && line[3 + strlen(heading)] == '\n';
			continue;
		}
		if (!on || strncmp(line, "| `", 3) != 0) {
			continue;
		}
		char *name = line + 3, *tick = strchr(name, '`');
		char *type, *bar;
		assert_non_null(tick);
		*tick = '\0';
		type  = strstr(tick + 1, "| ");
		assert_non_null(type);
		type += 2;
		bar = strstr(type, " |");
		assert_non_null(bar);
		*bar = '\0';
		assert_true(n < max);
		rows[n].name = strdup(name);
		rows[n].type = strdup(type);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * doc_compare checks table against the docs' rows under heading; prints
 * every difference and returns how many there were.
 */
static int
doc_compare(const char *heading, const doc_key *table, size_t ntable)
{
	doc_row rows[128];
	size_t  n    = doc_section(heading, rows, 128);
	int     diff = 0;

	for (size_t i = 0; i < ntable; i++) {
		size_t j = 0;
		while (j < n && strcmp(rows[j].name, table[i].name) != 0) {
			j++;
		}
		if (j == n) {
			printf("docs/config.md \"%s\": key %s missing\n",
			    heading, table[i].name);
			diff++;
		} else if (strcmp(rows[j].type, table[i].type) != 0) {
			printf("docs/config.md \"%s\": key %s: type \"%s\", "
			       "the table says \"%s\"\n",
			    heading, table[i].name, rows[j].type,
			    table[i].type);
			diff++;
		}
	}
	for (size_t j = 0; j < n; j++) {
		size_t i = 0;
		while (
		    i < ntable && strcmp(rows[j].name, table[i].name) != 0) {
			i++;
		}
		if (i == ntable) {
			printf("docs/config.md \"%s\": key %s is not in "
			       "config_keys.def\n",
			    heading, rows[j].name);
			diff++;
		}
		free(rows[j].name);
		free(rows[j].type);
	}
	return diff;
}

/* The group keys of the docs are the table's, with the same types. */
static void
test_group_keys(void **state)
{
	(void) state;
	assert_int_equal(
	    doc_compare("A group", group_rows, NROWS(group_rows)), 0);
}

/* The top-level keys of the docs are the table's, with the same types. */
static void
test_top_keys(void **state)
{
	(void) state;
	assert_int_equal(
	    doc_compare("Top level", top_rows, NROWS(top_rows)), 0);
}

/* The keys of a pool entry in the docs are the table's, same types. */
static void
test_pool_keys(void **state)
{
	(void) state;
	assert_int_equal(
	    doc_compare("Lease pools", pool_rows, NROWS(pool_rows)), 0);
}

/* The daemon's GroupSpec option check follows the rows' spec column, and
 * knows no key the table lacks. */
static void
test_spec_options(void **state)
{
	(void) state;
	for (size_t i = 0; i < NROWS(group_rows); i++) {
		assert_int_equal(svd_config_spec_option(group_rows[i].name),
		    group_rows[i].option);
	}
	assert_false(svd_config_spec_option("bogus_key"));
	assert_false(svd_config_spec_option("groups"));
	assert_false(svd_config_spec_option(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_group_keys),
	    cmocka_unit_test(test_top_keys),
	    cmocka_unit_test(test_pool_keys),
	    cmocka_unit_test(test_spec_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
