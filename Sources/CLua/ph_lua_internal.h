// Shared between the sandbox (ph_lua.c) and the library replacements that must stay inside its
// limits (ph_lua_patterns.c, ph_lua_tables.c). Not part of the module's public header.
#ifndef PH_LUA_INTERNAL_H
#define PH_LUA_INTERNAL_H

#include <lua.h>
#include <lauxlib.h>

/// Counts `cost` instructions of work done inside a C library function (a pattern-matching
/// step, a table element moved) against the profile's budget. When a limit is passed it trips
/// the sandbox's sticky limit and raises; once tripped it raises on every call, so a script
/// that catches the error with pcall cannot go on. Outside a profile run it does nothing.
void ph_lua_tick(lua_State *L, long long cost);

/// Installs the ticking replacements into the `string` and `table` libraries.
void ph_lua_replace_patterns(lua_State *L);
void ph_lua_replace_tables(lua_State *L);

#endif
