// table.insert, table.remove, table.move, table.concat and table.sort for profile code.
//
// Lua's own versions loop in C without reaching the instruction hook, and their loop bounds
// come from the script: `table.move({}, 1, 1e14, 2)`, or a __len that answers 2^40, keeps one
// call busy for days. These keep Lua 5.4's behaviour for tables but count every element they
// touch through ph_lua_tick, so the profile's limits stop them. table.sort is a heapsort here:
// O(n log n) whatever the comparator does (Lua's sort order for equal elements is unspecified
// too).
#include "ph_lua_internal.h"

#include <limits.h>

static int tab_insert(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer first_empty = luaL_len(L, 1) + 1;
    lua_Integer position;
    switch (lua_gettop(L)) {
    case 2:
        position = first_empty;
        break;
    case 3:
        position = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)position - 1u < (lua_Unsigned)first_empty, 2, "position out of bounds");
        for (lua_Integer i = first_empty; i > position; i--) {
            ph_lua_tick(L, 1);
            lua_geti(L, 1, i - 1);
            lua_seti(L, 1, i);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, position);
    return 0;
}

static int tab_remove(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer size = luaL_len(L, 1);
    lua_Integer position = luaL_optinteger(L, 2, size);
    if (position != size)
        luaL_argcheck(L, (lua_Unsigned)position - 1u <= (lua_Unsigned)size, 2, "position out of bounds");
    lua_geti(L, 1, position);
    for (; position < size; position++) {
        ph_lua_tick(L, 1);
        lua_geti(L, 1, position + 1);
        lua_seti(L, 1, position);
    }
    lua_pushnil(L);
    lua_seti(L, 1, position);
    return 1;
}

static int tab_move(lua_State *L) {
    lua_Integer from = luaL_checkinteger(L, 2);
    lua_Integer to_end = luaL_checkinteger(L, 3);
    lua_Integer target = luaL_checkinteger(L, 4);
    int destination = lua_isnoneornil(L, 5) ? 1 : 5;
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, destination, LUA_TTABLE);
    if (to_end >= from) {
        luaL_argcheck(L, from > 0 || to_end < LUA_MAXINTEGER + from, 3, "too many elements to move");
        lua_Integer count = to_end - from + 1;
        luaL_argcheck(L, target <= LUA_MAXINTEGER - count + 1, 4, "destination wrap around");
        int forward = target > to_end || target <= from || (destination != 1 && !lua_compare(L, 1, destination, LUA_OPEQ));
        for (lua_Integer i = 0; i < count; i++) {
            lua_Integer offset = forward ? i : count - 1 - i;
            ph_lua_tick(L, 1);
            lua_geti(L, 1, from + offset);
            lua_seti(L, destination, target + offset);
        }
    }
    lua_pushvalue(L, destination);
    return 1;
}

static int tab_concat(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t separator_length;
    const char *separator = luaL_optlstring(L, 2, "", &separator_length);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    lua_Integer last = luaL_opt(L, luaL_checkinteger, 4, luaL_len(L, 1));
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (; i <= last; i++) {
        ph_lua_tick(L, 1);
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (at index %I) in table for 'concat'", (LUAI_UACINT)i);
        luaL_addvalue(&b);
        if (i == last) break;  // also keeps i from overflowing at LUA_MAXINTEGER
        luaL_addlstring(&b, separator, separator_length);
    }
    luaL_pushresult(&b);
    return 1;
}

// Whether t[i] < t[j], by the comparator at index 2 or by "<".
static int sort_less(lua_State *L, lua_Integer i, lua_Integer j) {
    ph_lua_tick(L, 1);
    if (lua_isnil(L, 2)) {
        lua_geti(L, 1, i);
        lua_geti(L, 1, j);
        int less = lua_compare(L, -2, -1, LUA_OPLT);
        lua_pop(L, 2);
        return less;
    }
    lua_pushvalue(L, 2);
    lua_geti(L, 1, i);
    lua_geti(L, 1, j);
    lua_call(L, 2, 1);
    int less = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return less;
}

static void sort_swap(lua_State *L, lua_Integer i, lua_Integer j) {
    lua_geti(L, 1, i);
    lua_geti(L, 1, j);
    lua_seti(L, 1, i);
    lua_seti(L, 1, j);
}

// Restores the max-heap property below `root` in t[1...count].
static void sift_down(lua_State *L, lua_Integer root, lua_Integer count) {
    for (;;) {
        lua_Integer child = 2 * root;
        if (child > count) return;
        if (child < count && sort_less(L, child, child + 1)) child++;
        if (!sort_less(L, root, child)) return;
        sort_swap(L, root, child);
        root = child;
    }
}

static int tab_sort(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer count = luaL_len(L, 1);
    if (count > 1) {
        luaL_argcheck(L, count < INT_MAX, 1, "array too big");
        if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
        lua_settop(L, 2);
        for (lua_Integer root = count / 2; root >= 1; root--) sift_down(L, root, count);
        for (lua_Integer last = count; last > 1; last--) {
            sort_swap(L, 1, last);
            sift_down(L, 1, last - 1);
        }
    }
    return 0;
}

void ph_lua_replace_tables(lua_State *L) {
    static const luaL_Reg functions[] = {
        {"insert", tab_insert}, {"remove", tab_remove}, {"move", tab_move},
        {"concat", tab_concat}, {"sort", tab_sort},     {NULL, NULL},
    };
    lua_getglobal(L, "table");
    luaL_setfuncs(L, functions, 0);
    lua_pop(L, 1);
}
