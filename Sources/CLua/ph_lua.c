#include "ph_lua.h"
#include "ph_lua_internal.h"

#include <lualib.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

enum { HOOK_EVERY = 1000 };

struct ph_lua_sandbox {
    lua_State *L;
    size_t used;
    size_t memory_limit;        // 0 while the trusted setup runs
    size_t memory_cap;          // the configured limit, for messages
    long long instructions;
    long long instruction_limit;
    double seconds_limit;
    struct timespec deadline;
    int profiles_ref;
    int running;                // inside ph_lua_sandbox_run: limits apply
    int memory_refused;         // the allocator refused growth during this run
    ph_lua_limit tripped;       // sticky: once set, every instruction raises again
    char message[256];          // "chunk:line: profile exceeded ..." for the tripped limit
};

static const char descriptor_marker = 0;
const void *ph_lua_descriptor_marker(void) { return &descriptor_marker; }

// The allocator counts every live byte and refuses growth past the cap, which Lua turns into a
// "not enough memory" error inside the protected call.
static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    ph_lua_sandbox *sb = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        sb->used -= old;
        free(ptr);
        return NULL;
    }
    if (sb->memory_limit && nsize > old && sb->used - old + nsize > sb->memory_limit) {
        // Remembered, so a script that catches "not enough memory" with pcall is still stopped.
        if (sb->running) sb->memory_refused = 1;
        return NULL;
    }
    void *block = realloc(ptr, nsize);
    if (block) sb->used = sb->used - old + nsize;
    return block;
}

static ph_lua_sandbox *sandbox_of(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

static int past_deadline(const ph_lua_sandbox *sb) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > sb->deadline.tv_sec ||
           (now.tv_sec == sb->deadline.tv_sec && now.tv_nsec > sb->deadline.tv_nsec);
}

// The first "chunk:line" on the stack, without allocating (the memory cap may be what tripped).
static void where(lua_State *L, char *out, size_t size) {
    lua_Debug ar;
    out[0] = 0;
    for (int level = 0; level < 4 && lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(out, size, "%s:%d: ", ar.short_src, ar.currentline);
            return;
        }
    }
}

static ph_lua_limit exceeded(ph_lua_sandbox *sb, int check_clock) {
    if (sb->memory_refused) return PH_LUA_LIMIT_MEMORY;
    if (sb->instructions > sb->instruction_limit) return PH_LUA_LIMIT_INSTRUCTIONS;
    if (check_clock && past_deadline(sb)) return PH_LUA_LIMIT_TIME;
    return PH_LUA_LIMIT_NONE;
}

static void count_hook(lua_State *L, lua_Debug *ar);

// Records the limit once and makes the hook fire at every instruction from now on: a pcall or
// xpcall that swallows the error returns into Lua code, whose next instruction raises again.
static void trip(lua_State *L, ph_lua_sandbox *sb, ph_lua_limit limit) {
    if (sb->tripped) return;
    sb->tripped = limit;
    char at[160];
    where(L, at, sizeof at);
    switch (limit) {
    case PH_LUA_LIMIT_INSTRUCTIONS:
        snprintf(sb->message, sizeof sb->message, "%sprofile exceeded the instruction limit (%lld instructions)",
                 at, sb->instruction_limit);
        break;
    case PH_LUA_LIMIT_TIME:
        snprintf(sb->message, sizeof sb->message, "%sprofile exceeded the time limit (%.1f s)", at, sb->seconds_limit);
        break;
    default:
        snprintf(sb->message, sizeof sb->message, "profile exceeded the memory limit (%zu MB)", sb->memory_cap >> 20);
        break;
    }
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
}

static void raise_limit(lua_State *L, ph_lua_sandbox *sb) {
    lua_pushstring(L, sb->message);  // with the memory cap hit this raises "not enough memory": as good
    lua_error(L);
}

static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    ph_lua_sandbox *sb = sandbox_of(L);
    if (!sb->tripped) {
        sb->instructions += HOOK_EVERY;
        ph_lua_limit limit = exceeded(sb, 1);
        if (!limit) return;
        trip(L, sb, limit);
    }
    raise_limit(L, sb);
}

void ph_lua_tick(lua_State *L, long long cost) {
    ph_lua_sandbox *sb = sandbox_of(L);
    if (!sb->running) return;
    if (!sb->tripped) {
        long long before = sb->instructions;
        sb->instructions += cost;
        // The clock is read about once per thousand instructions, as often as the hook does.
        ph_lua_limit limit = exceeded(sb, (before >> 10) != (sb->instructions >> 10));
        if (!limit) return;
        trip(L, sb, limit);
    }
    raise_limit(L, sb);
}

// The line of the Lua code that called the running C function.
static int caller_line(lua_State *L) {
    lua_Debug ar;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar)) return ar.currentline;
    return 0;
}

// fetch { timeout = 10 } -> { "fetch", line, { timeout = 10 }, marker }
static int stage_constructor(lua_State *L) {
    const char *name = lua_tostring(L, lua_upvalueindex(1));
    int type = lua_type(L, 1);
    if (type != LUA_TNONE && type != LUA_TNIL && type != LUA_TTABLE)
        return luaL_error(L, "%s: parameters go in a table, like %s { ... }", name, name);
    if (lua_gettop(L) > 1)
        return luaL_error(L, "%s: takes one table of parameters", name);
    int line = caller_line(L);
    lua_createtable(L, 4, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, line);
    lua_rawseti(L, -2, 2);
    if (type == LUA_TTABLE) lua_pushvalue(L, 1); else lua_newtable(L);
    lua_rawseti(L, -2, 3);
    lua_pushlightuserdata(L, (void *)&descriptor_marker);
    lua_rawseti(L, -2, 4);
    return 1;
}

// profile "name" { stages... }: the first call records the name and line, the returned function
// records the stage list. A profile written without its list is still recorded, so the loader
// can name it.
static int profile_body(lua_State *L) {
    if (lua_type(L, 1) != LUA_TTABLE || lua_gettop(L) != 1)
        return luaL_error(L, "profile \"%s\": expects a list of stages in braces",
                          lua_tostring(L, lua_upvalueindex(1)));
    lua_pushvalue(L, lua_upvalueindex(2));   // the entry
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 3);
    return 0;
}

static int profile_declare(lua_State *L) {
    if (lua_type(L, 1) != LUA_TSTRING || lua_gettop(L) != 1)
        return luaL_error(L, "profile: expects a name, like profile \"thumbnail\" { ... }");
    ph_lua_sandbox *sb = sandbox_of(L);
    int line = caller_line(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, sb->profiles_ref);
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    lua_createtable(L, 3, 0);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, line);
    lua_rawseti(L, -2, 2);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, n + 1);               // profiles[n+1] = entry
    lua_pushvalue(L, 1);                     // upvalue 1: name
    lua_pushvalue(L, -2);                    // upvalue 2: entry
    lua_pushcclosure(L, profile_body, 2);
    return 1;
}

// Trusted Lua run once during setup: unknown globals raise an error that suggests a close name.
static const char strict_globals[] =
    "local known = ...\n"
    "local function distance(a, b)\n"
    "  local previous = {}\n"
    "  for j = 0, #b do previous[j] = j end\n"
    "  for i = 1, #a do\n"
    "    local current = { [0] = i }\n"
    "    for j = 1, #b do\n"
    "      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1\n"
    "      current[j] = math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)\n"
    "    end\n"
    "    previous = current\n"
    "  end\n"
    "  return previous[#b]\n"
    "end\n"
    "setmetatable(_G, { __metatable = false, __index = function(_, name)\n"
    "  local best, best_distance = nil, 3\n"
    "  for _, candidate in ipairs(known) do\n"
    "    local d = distance(tostring(name), candidate)\n"
    "    if d < best_distance then best, best_distance = candidate, d end\n"
    "  end\n"
    "  local hint = best and (\" (did you mean '\" .. best .. \"'?)\") or \"\"\n"
    "  error(\"unknown stage or name '\" .. tostring(name) .. \"'\" .. hint, 2)\n"
    "end })\n"
    // The string metatable would give scripts a shared object to tamper with.
    "getmetatable('').__metatable = false\n";

typedef struct {
    const char *const *names;
    int count;
} setup_args;

// Finalizers run with hooks off, during any allocation and at lua_close, so a __gc could loop or
// allocate past every limit. The mark for finalization is made here, when the metatable is set
// (a __gc added later is never called), so refusing the field here is enough. __close is refused
// for the same reason; to-be-closed variables still run under the sticky limit.
static int guarded_setmetatable(lua_State *L) {
    static const char *const refused[] = {"__gc", "__close", NULL};
    if (lua_type(L, 2) == LUA_TTABLE) {
        for (const char *const *name = refused; *name; name++) {
            lua_pushstring(L, *name);
            int type = lua_rawget(L, 2);
            lua_pop(L, 1);
            if (type != LUA_TNIL) return luaL_error(L, "setmetatable: %s metamethods are not allowed in profiles", *name);
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int setup(lua_State *L) {
    setup_args *args = lua_touserdata(L, 1);
    static const luaL_Reg libraries[] = {
        {LUA_GNAME, luaopen_base},         {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table},   {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8},   {NULL, NULL},
    };
    for (const luaL_Reg *lib = libraries; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    static const char *const removed[] = {"dofile", "loadfile", "load", "require",
                                          "collectgarbage", "print", NULL};
    for (const char *const *name = removed; *name; name++) {
        lua_pushnil(L);
        lua_setglobal(L, *name);
    }
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, guarded_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    ph_lua_replace_patterns(L);
    ph_lua_replace_tables(L);
    lua_newtable(L);
    sandbox_of(L)->profiles_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_createtable(L, args->count + 1, 0);   // names known to the strict-globals hint
    for (int i = 0; i < args->count; i++) {
        lua_pushstring(L, args->names[i]);
        lua_pushcclosure(L, stage_constructor, 1);
        lua_setglobal(L, args->names[i]);
        lua_pushstring(L, args->names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushcfunction(L, profile_declare);
    lua_setglobal(L, "profile");
    lua_pushstring(L, "profile");
    lua_rawseti(L, -2, args->count + 1);

    if (luaL_loadbufferx(L, strict_globals, sizeof strict_globals - 1, "=pipelinehost", "t") != LUA_OK)
        return lua_error(L);
    lua_insert(L, -2);
    lua_call(L, 1, 0);
    return 0;
}

ph_lua_sandbox *ph_lua_sandbox_new(size_t memory_limit, long long instruction_limit,
                                   double seconds_limit, const char *const *stage_names,
                                   int stage_count, char *error, size_t error_size) {
    ph_lua_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    sb->instruction_limit = instruction_limit;
    sb->seconds_limit = seconds_limit;
    sb->L = lua_newstate(sandbox_alloc, sb);
    if (!sb->L) {
        free(sb);
        snprintf(error, error_size, "cannot create a Lua state");
        return NULL;
    }
    setup_args args = {stage_names, stage_count};
    lua_pushcfunction(sb->L, setup);
    lua_pushlightuserdata(sb->L, &args);
    if (lua_pcall(sb->L, 1, 0, 0) != LUA_OK) {
        size_t length = 0;
        const char *message = ph_lua_error_string(sb->L, &length);
        snprintf(error, error_size, "%s", message ? message : "sandbox setup failed");
        ph_lua_sandbox_free(sb);
        return NULL;
    }
    sb->memory_limit = sb->memory_cap = memory_limit;
    return sb;
}

void ph_lua_sandbox_free(ph_lua_sandbox *sandbox) {
    if (!sandbox) return;
    lua_close(sandbox->L);
    free(sandbox);
}

lua_State *ph_lua_sandbox_state(ph_lua_sandbox *sandbox) { return sandbox->L; }

int ph_lua_sandbox_run(ph_lua_sandbox *sb, const char *buffer, size_t length, const char *chunk_name) {
    lua_State *L = sb->L;
    int status = luaL_loadbufferx(L, buffer, length, chunk_name, "t");
    if (status != LUA_OK) return status;
    sb->instructions = 0;
    sb->tripped = PH_LUA_LIMIT_NONE;
    sb->memory_refused = 0;
    clock_gettime(CLOCK_MONOTONIC, &sb->deadline);
    double whole = (double)(long long)sb->seconds_limit;
    sb->deadline.tv_sec += (time_t)whole;
    sb->deadline.tv_nsec += (long)((sb->seconds_limit - whole) * 1e9);
    if (sb->deadline.tv_nsec >= 1000000000L) {
        sb->deadline.tv_sec += 1;
        sb->deadline.tv_nsec -= 1000000000L;
    }
    sb->running = 1;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_EVERY);
    status = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    sb->running = 0;
    // Reading the results back must not fail on the cap the script ran under.
    sb->memory_limit = 0;
    // A limit passed on the way stops the load even when the script caught the error.
    if (!sb->tripped && sb->memory_refused) trip(L, sb, PH_LUA_LIMIT_MEMORY);
    if (sb->tripped) {
        if (status != LUA_OK) lua_pop(L, 1);
        lua_pushstring(L, sb->message);
        return PH_LUA_LIMIT_STATUS;
    }
    return status;
}

ph_lua_limit ph_lua_sandbox_tripped(const ph_lua_sandbox *sandbox) { return sandbox->tripped; }

void ph_lua_push_profiles(ph_lua_sandbox *sandbox) {
    lua_rawgeti(sandbox->L, LUA_REGISTRYINDEX, sandbox->profiles_ref);
}

const char *ph_lua_error_string(lua_State *L, size_t *length) {
    if (lua_type(L, -1) != LUA_TSTRING) return NULL;
    return lua_tolstring(L, -1, length);
}
