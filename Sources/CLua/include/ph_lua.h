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

/// Bounds for reading the declared values back: nesting depth, entries per table, and values
/// in all (so a table shared many times costs its size each time, up to this).
#define PH_LUA_EXPORT_DEPTH 8
#define PH_LUA_EXPORT_ENTRIES 10000
#define PH_LUA_EXPORT_VALUES 200000
/// And bytes in all: one large string referenced from many places costs its size each time it
/// is read back, so a count of values alone lets a 10 MB string under the memory cap become gigabytes.
#define PH_LUA_EXPORT_BYTES (16 << 20)

/// The declared profiles ({ { name, line, stages-or-nil }, ... }, each stage descriptor
/// { stage_name, line, params_table, marker }) as plain data, so the caller never walks the
/// Lua state. Each value is a tag byte and its payload, in host byte order:
///   'n' nil; 'b' u8; 'i' int64; 'd' double; 's' u32 length + bytes; 'f' a function;
///   'm' the stage-descriptor marker; 'p' the `param` reference marker; 'o' u32 length + type name (anything else, or a table
///   nested too deeply or containing itself); 't' u32 n, n values, u32 m, m times
///   (u32 length + key bytes, value), u32 count of other keys.
/// `data` is malloc'd (release with ph_lua_export_free); on failure it is NULL and `error`
/// says which bound was passed.
typedef struct {
    unsigned char *data;
    size_t length;
    char error[160];
} ph_lua_export;
ph_lua_export ph_lua_export_profiles(ph_lua_sandbox *sandbox);
void ph_lua_export_free(ph_lua_export *e);

/// The error on top of the stack as a string, without converting non-strings (which could
/// allocate and raise). Returns NULL when the error object is not a string.
const char *ph_lua_error_string(lua_State *L, size_t *length);

// A macro Swift cannot call.
static inline void ph_lua_pop(lua_State *L, int n) { lua_pop(L, n); }

#endif
