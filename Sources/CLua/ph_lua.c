#include "ph_lua.h"
#include "ph_lua_internal.h"

#include <lualib.h>
#include <stdint.h>
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
// The marker of a `param "w"` reference: { "w", line, {}, param_marker }.
static const char param_marker = 0;

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

// param "w": stands for a stage parameter that the profile's `params` option w chooses.
static int param_reference(lua_State *L) {
    if (lua_type(L, 1) != LUA_TSTRING || lua_gettop(L) != 1)
        return luaL_error(L, "param: expects an option name, like size = param \"w\"");
    int line = caller_line(L);
    lua_createtable(L, 4, 0);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, line);
    lua_rawseti(L, -2, 2);
    lua_newtable(L);
    lua_rawseti(L, -2, 3);
    lua_pushlightuserdata(L, (void *)&param_marker);
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
    // string.dump turns a function into bytecode: nothing a profile needs, and the one way to
    // make bytecode in here (load is gone, so none could run it, but a value that is bytecode
    // could reach a stage as a string). Also gone through ("").dump, the same table.
    lua_getglobal(L, "string");
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    lua_newtable(L);
    sandbox_of(L)->profiles_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_createtable(L, args->count + 3, 0);   // names known to the strict-globals hint
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
    // params { w = { 100, 300, default = 300 } }: a descriptor like a stage's, read by the loader.
    lua_pushstring(L, "params");
    lua_pushcclosure(L, stage_constructor, 1);
    lua_setglobal(L, "params");
    lua_pushstring(L, "params");
    lua_rawseti(L, -2, args->count + 2);
    lua_pushcfunction(L, param_reference);
    lua_setglobal(L, "param");
    lua_pushstring(L, "param");
    lua_rawseti(L, -2, args->count + 3);

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


const char *ph_lua_error_string(lua_State *L, size_t *length) {
    if (lua_type(L, -1) != LUA_TSTRING) return NULL;
    return lua_tolstring(L, -1, length);
}

// MARK: exporting the declared profiles as plain data

// A growable byte buffer; `failed` records an allocation failure or a broken bound.
typedef struct {
    unsigned char *data;
    size_t length, capacity;
    long long budget;           // values left to write
    const void *open[16];       // the tables on the current path, for cycle detection
    int depth;
    char error[160];
} export_buffer;

static int put(export_buffer *b, const void *bytes, size_t length) {
    if (b->error[0]) return 0;
    if (length > PH_LUA_EXPORT_BYTES || b->length + length > PH_LUA_EXPORT_BYTES) {
        snprintf(b->error, sizeof b->error, "profile values are too large (more than %d MB in all)", PH_LUA_EXPORT_BYTES >> 20);
        return 0;
    }
    if (b->length + length > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (capacity < b->length + length) capacity *= 2;
        unsigned char *grown = realloc(b->data, capacity);
        if (!grown) {
            snprintf(b->error, sizeof b->error, "out of memory while reading the profiles");
            return 0;
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, bytes, length);
    b->length += length;
    return 1;
}

static void put_tag(export_buffer *b, char tag) { put(b, &tag, 1); }
static void put_u32(export_buffer *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_text(export_buffer *b, char tag, const char *text, size_t length) {
    put_tag(b, tag);
    put_u32(b, (uint32_t)length);
    put(b, text, length);
}

static void export_value(lua_State *L, int index, export_buffer *b);

static void export_table(lua_State *L, int table, export_buffer *b) {
    const void *identity = lua_topointer(L, table);
    if (b->depth >= PH_LUA_EXPORT_DEPTH) {
        put_text(b, 'o', "a table nested too deeply", 25);
        return;
    }
    for (int i = 0; i < b->depth; i++) {
        if (b->open[i] == identity) {
            put_text(b, 'o', "a table that contains itself", 28);
            return;
        }
    }
    if (!lua_checkstack(L, 4)) {
        put_text(b, 'o', "a table too large to read", 25);
        return;
    }
    lua_Unsigned count = lua_rawlen(L, table);
    if (count > PH_LUA_EXPORT_ENTRIES) {
        snprintf(b->error, sizeof b->error, "a table has %llu entries, more than the %d a profile may use",
                 (unsigned long long)count, PH_LUA_EXPORT_ENTRIES);
        return;
    }
    b->open[b->depth++] = identity;
    put_tag(b, 't');
    put_u32(b, (uint32_t)count);
    for (lua_Unsigned i = 1; i <= count && !b->error[0]; i++) {
        lua_rawgeti(L, table, (lua_Integer)i);
        export_value(L, -1, b);
        lua_pop(L, 1);
    }
    // Named fields, then how many other keys there were. Field count is patched in after.
    size_t count_at = b->length;
    put_u32(b, 0);
    uint32_t fields = 0, others = 0, seen = 0;
    lua_pushnil(L);
    while (!b->error[0] && lua_next(L, table) != 0) {
        if (++seen > PH_LUA_EXPORT_ENTRIES + count) {
            lua_pop(L, 2);
            snprintf(b->error, sizeof b->error, "a table has more than the %d entries a profile may use", PH_LUA_EXPORT_ENTRIES);
            break;
        }
        if (lua_type(L, -2) == LUA_TSTRING) {
            size_t length = 0;
            const char *key = lua_tolstring(L, -2, &length);  // a string key: no conversion
            put_u32(b, (uint32_t)length);
            put(b, key, length);
            export_value(L, -1, b);
            fields++;
        } else if (!(lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && (lua_Unsigned)lua_tointeger(L, -2) <= count)) {
            others++;
        }
        lua_pop(L, 1);
    }
    if (!b->error[0]) {
        memcpy(b->data + count_at, &fields, sizeof fields);
        put_u32(b, others);
    }
    b->depth--;
}

static void export_value(lua_State *L, int index, export_buffer *b) {
    if (b->error[0]) return;
    if (--b->budget < 0) {
        snprintf(b->error, sizeof b->error, "profile values are too large (more than %d values in all)", PH_LUA_EXPORT_VALUES);
        return;
    }
    index = lua_absindex(L, index);
    switch (lua_type(L, index)) {
    case LUA_TNIL: case LUA_TNONE:
        put_tag(b, 'n');
        break;
    case LUA_TBOOLEAN: {
        put_tag(b, 'b');
        unsigned char v = (unsigned char)lua_toboolean(L, index);
        put(b, &v, 1);
        break;
    }
    case LUA_TNUMBER:
        if (lua_isinteger(L, index)) {
            lua_Integer v = lua_tointeger(L, index);
            put_tag(b, 'i');
            put(b, &v, sizeof v);
        } else {
            lua_Number v = lua_tonumber(L, index);
            put_tag(b, 'd');
            put(b, &v, sizeof v);
        }
        break;
    case LUA_TSTRING: {
        size_t length = 0;
        const char *text = lua_tolstring(L, index, &length);
        put_text(b, 's', text, length);
        break;
    }
    case LUA_TTABLE:
        export_table(L, index, b);
        break;
    case LUA_TFUNCTION:
        put_tag(b, 'f');
        break;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, index) == &descriptor_marker) {
            put_tag(b, 'm');
        } else if (lua_touserdata(L, index) == &param_marker) {
            put_tag(b, 'p');
        } else {
            put_text(b, 'o', "a userdata", 10);
        }
        break;
    default: {
        char name[48];
        int length = snprintf(name, sizeof name, "a %s", lua_typename(L, lua_type(L, index)));
        put_text(b, 'o', name, (size_t)length);
        break;
    }
    }
}

ph_lua_export ph_lua_export_profiles(ph_lua_sandbox *sandbox) {
    ph_lua_export result = {0};
    lua_State *L = sandbox->L;
    export_buffer b = {0};
    b.budget = PH_LUA_EXPORT_VALUES;
    lua_rawgeti(L, LUA_REGISTRYINDEX, sandbox->profiles_ref);
    lua_Unsigned declared = lua_rawlen(L, -1);
    if (declared > PH_LUA_EXPORT_ENTRIES) {
        snprintf(b.error, sizeof b.error, "defines %llu profiles, more than the %d a file may hold",
                 (unsigned long long)declared, PH_LUA_EXPORT_ENTRIES);
    } else {
        export_value(L, -1, &b);
    }
    lua_pop(L, 1);
    if (b.error[0]) {
        free(b.data);
        snprintf(result.error, sizeof result.error, "%s", b.error);
        return result;
    }
    result.data = b.data;
    result.length = b.length;
    return result;
}

void ph_lua_export_free(ph_lua_export *e) {
    free(e->data);
    e->data = NULL;
    e->length = 0;
}
