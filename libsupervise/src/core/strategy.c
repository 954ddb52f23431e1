/*
 * strategy.c — restart strategies (rules in strategy.h).
 */
#include <string.h>

#include "core/strategy.h"

static const char *const strategy_names[]
    = {"one_for_one", "one_for_all", "rest_for_one"};

int
sv_position_cmp(sv_position a, sv_position b)
{
	if (a.group != b.group) {
		return a.group < b.group ? -1 : 1;
	}
	if (a.ordinal != b.ordinal) {
		return a.ordinal < b.ordinal ? -1 : 1;
	}
	return 0;
}

sv_position
sv_strategy_first(sv_strategy s, sv_position failed)
{
	sv_position all = {0, 0};

	return s == SV_STRATEGY_ONE_FOR_ALL ? all : failed;
}

bool
sv_strategy_has_plan(sv_strategy s)
{
	return s == SV_STRATEGY_ONE_FOR_ALL || s == SV_STRATEGY_REST_FOR_ONE;
}

const char *
sv_strategy_name(sv_strategy s)
{
	if ((size_t) s < sizeof(strategy_names) / sizeof(strategy_names[0])) {
		return strategy_names[s];
	}
	return "?";
}

bool
sv_strategy_parse(const char *name, sv_strategy *s)
{
	for (size_t i = 0;
	     i < sizeof(strategy_names) / sizeof(strategy_names[0]); i++) {
		if (strcmp(name, strategy_names[i]) == 0) {
			*s = (sv_strategy) i;
			return true;
		}
	}
	return false;
}
