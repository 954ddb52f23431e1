/*
 * strategy.h — which siblings restart with a failed worker (pure decision
 * core, OTP's restart strategies).
 *
 * The supervisor's children are every seat of every group, in start order:
 * groups in configuration (or creation) order, then ordinals ascending. A
 * position is (group position, ordinal), compared lexicographically.
 *   one_for_one   only the failed seat restarts;
 *   one_for_all   every seat stops (reverse start order) and starts again
 *                 (start order);
 *   rest_for_one  the failed seat and every seat after it do.
 */
#ifndef SV_CORE_STRATEGY_H
#define SV_CORE_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sv_strategy {
	SV_STRATEGY_ONE_FOR_ONE  = 0,
	SV_STRATEGY_ONE_FOR_ALL  = 1,
	SV_STRATEGY_REST_FOR_ONE = 2,
} sv_strategy;

/* A seat's start position. */
typedef struct sv_position {
	size_t   group; /* position of the group in start order */
	uint32_t ordinal;
} sv_position;

/* sv_position_cmp orders positions: <0, 0, >0 like strcmp. */
int sv_position_cmp(sv_position a, sv_position b);

/*
 * sv_strategy_first returns the first position of the range that restarts
 * together when the seat at failed fails: the range is every position >=
 * the result. For one_for_one the range is the failed seat alone, which the
 * caller handles without a plan (sv_strategy_has_plan is false).
 */
sv_position sv_strategy_first(sv_strategy s, sv_position failed);

/* sv_strategy_has_plan tells whether s ever stops siblings. */
bool sv_strategy_has_plan(sv_strategy s);

/* sv_strategy_name returns "one_for_one", ... ("?" when unknown). */
const char *sv_strategy_name(sv_strategy s);

/*
 * sv_strategy_parse sets *s from its name. Returns false for an unknown
 * name (*s untouched).
 */
bool sv_strategy_parse(const char *name, sv_strategy *s);

#endif /* SV_CORE_STRATEGY_H */
