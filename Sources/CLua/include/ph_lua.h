// A sandboxed Lua 5.4 state for profile files.
//
// Every call that can raise a Lua error runs inside lua_pcall on the C side, so lua_error's
// longjmp never crosses a Swift frame. Swift reads results only with the non-raising raw
// accessors (lua_rawgeti, lua_next, lua_type, lua_tolstring on strings, ...).
#ifndef PH_LUA_H
#define PH_LUA_H

#include <stddef.h>
#include <lua.h>
#include <lauxlib.h>

typedef struct ph_lua_sandbox ph_lua_sandbox;

/// Which limit stopped a run.
typedef enum {
    PH_LUA_LIMIT_NONE = 0,
    PH_LUA_LIMIT_INSTRUCTIONS,
    PH_LUA_LIMIT_TIME,
    PH_LUA_LIMIT_MEMORY,
} ph_lua_limit;

/// ph_lua_sandbox_run's status when a limit stopped the script, whether or not the script
/// caught the error: the limit's message ("chunk:line: profile exceeded ...") is on the stack.
#define PH_LUA_LIMIT_STATUS 100

/// Creates a state with only base, string, table, math and utf8; no io, os, require, load,
/// loadfile, dofile or collectgarbage. `stage_names` become global stage constructors; `profile`
/// is always defined. Reading an unknown global raises an error that suggests a close name.
/// Returns NULL and fills `error` on failure.
ph_lua_sandbox *ph_lua_sandbox_new(size_t memory_limit, long long instruction_limit,
                                   double seconds_limit, const char *const *stage_names,
                                   int stage_count, char *error, size_t error_size);
void ph_lua_sandbox_free(ph_lua_sandbox *sandbox);
lua_State *ph_lua_sandbox_state(ph_lua_sandbox *sandbox);

/// Loads a text chunk (binary chunks are refused) and runs it under the instruction, time and
/// memory caps. The limits are sticky: once one is passed, every later instruction raises
/// again, so pcall cannot swallow it; metatables with __gc or __close are refused, and the
/// pattern and table functions that can run long count their steps against the same limits.
/// Returns a LUA_* status or PH_LUA_LIMIT_STATUS; on failure the error object is on top of the
/// stack.
int ph_lua_sandbox_run(ph_lua_sandbox *sandbox, const char *buffer, size_t length,
                       const char *chunk_name);

/// The limit that stopped the last run, if any.
ph_lua_limit ph_lua_sandbox_tripped(const ph_lua_sandbox *sandbox);

/// Pushes the list of declared profiles: { { name, line, stages-or-nil }, ... }.
/// Each stage descriptor is { stage_name, line, params_table, marker }.
void ph_lua_push_profiles(ph_lua_sandbox *sandbox);

/// The light userdata stored at index 4 of every stage descriptor.
const void *ph_lua_descriptor_marker(void);

/// The error on top of the stack as a string, without converting non-strings (which could
/// allocate and raise). Returns NULL when the error object is not a string.
const char *ph_lua_error_string(lua_State *L, size_t *length);

// Macros Swift cannot call.
static inline void ph_lua_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline int ph_lua_isinteger(lua_State *L, int index) { return lua_isinteger(L, index); }
static inline lua_Number ph_lua_tonumber(lua_State *L, int index) { return lua_tonumberx(L, index, NULL); }
static inline lua_Integer ph_lua_tointeger(lua_State *L, int index) { return lua_tointegerx(L, index, NULL); }

#endif
