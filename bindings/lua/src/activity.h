/*
 * activity.h — supervise.activity and supervise.activity_depth of the Lua
 * module (activity.c; the model is docs/activity.md).
 */
#ifndef LSV_ACTIVITY_H
#define LSV_ACTIVITY_H

#include <lua.h>

/*
 * lsv_activity_register sets supervise.activity and
 * supervise.activity_depth in the module table at the top of L's stack.
 */
void lsv_activity_register(lua_State *L);

#endif /* LSV_ACTIVITY_H */
