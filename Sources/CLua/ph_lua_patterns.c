// string.find, string.match, string.gmatch and string.gsub for profile code.
//
// Lua's own versions backtrack inside one C call: `("a"):rep(5000):find(".-.-.-.-b")` runs for
// hours and never reaches the instruction hook. These implement the same Lua 5.4 pattern
// language (reference manual, section 6.4.1) with a recursive backtracking matcher that counts
// its steps through ph_lua_tick, so the profile's instruction and time limits stop them. Plain
// searches count the bytes they compare the same way.
#include "ph_lua_internal.h"

#include <ctype.h>
#include <string.h>

enum { MAX_CAPTURES = 32, MAX_DEPTH = 200, STEPS_PER_TICK = 256 };

#define CAPTURE_OPEN (-1)      // "(" seen, ")" not yet
#define CAPTURE_POSITION (-2)  // "()" captures a position
#define ESCAPE '%'
#define SPECIALS "^$*+?.([%-"

typedef struct {
    lua_State *L;
    const char *subject, *subject_end;
    const char *pattern_end;
    int depth_left;
    int captures;
    unsigned steps;
    struct {
        const char *start;
        ptrdiff_t length;
    } capture[MAX_CAPTURES];
} matcher;

static int byte(const char *p) { return (unsigned char)*p; }

static void matcher_init(matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->subject = s;
    m->subject_end = s + ls;
    m->pattern_end = p + lp;
    m->steps = 0;
}

static void matcher_reset(matcher *m) {
    m->captures = 0;
    m->depth_left = MAX_DEPTH;
}

static void step(matcher *m) {
    if (++m->steps % STEPS_PER_TICK == 0) ph_lua_tick(m->L, STEPS_PER_TICK);
}

// 1-based start position from a Lua argument: negative counts from the end.
static size_t start_position(lua_Integer position, size_t length) {
    if (position > 0) return (size_t)position;
    if (position == 0 || position < -(lua_Integer)length) return 1;
    return length + (size_t)position + 1;
}

// MARK: single characters

static int in_class(int c, int class) {
    int result;
    switch (tolower(class)) {
    case 'a': result = isalpha(c); break;
    case 'c': result = iscntrl(c); break;
    case 'd': result = isdigit(c); break;
    case 'g': result = isgraph(c); break;
    case 'l': result = islower(c); break;
    case 'p': result = ispunct(c); break;
    case 's': result = isspace(c); break;
    case 'u': result = isupper(c); break;
    case 'w': result = isalnum(c); break;
    case 'x': result = isxdigit(c); break;
    default: return class == c;  // %. %% %[ ...: the character itself
    }
    return isupper(class) ? !result : result;
}

// `open` points at '[' and `close` at the matching ']'.
static int in_set(int c, const char *open, const char *close) {
    const char *p = open + 1;
    int wanted = 1;
    if (*p == '^') {
        wanted = 0;
        p++;
    }
    for (; p < close; p++) {
        if (*p == ESCAPE) {
            p++;
            if (in_class(c, byte(p))) return wanted;
        } else if (p[1] == '-' && p + 2 < close) {
            if (byte(p) <= c && c <= byte(p + 2)) return wanted;
            p += 2;
        } else if (byte(p) == c) {
            return wanted;
        }
    }
    return !wanted;
}

// The end of the single-character class that starts at `p`.
static const char *class_end(matcher *m, const char *p) {
    switch (*p++) {
    case ESCAPE:
        if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^') p++;
        do {  // the first ']' after at least one character closes the set
            if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*p++ == ESCAPE && p < m->pattern_end) p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

static int single_match(const matcher *m, const char *s, const char *p, const char *end) {
    if (s >= m->subject_end) return 0;
    int c = byte(s);
    switch (*p) {
    case '.': return 1;
    case ESCAPE: return in_class(c, byte(p + 1));
    case '[': return in_set(c, p, end - 1);
    default: return byte(p) == c;
    }
}

// MARK: the matcher

static const char *match(matcher *m, const char *s, const char *p);

static const char *match_balance(matcher *m, const char *s, const char *p) {
    if (p + 1 >= m->pattern_end) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->subject_end || *s != *p) return NULL;
    int open = *p, close = p[1], depth = 1;
    while (++s < m->subject_end) {
        step(m);
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

// Greedy: take as many as match, then give back one at a time.
static const char *max_expand(matcher *m, const char *s, const char *p, const char *end) {
    ptrdiff_t count = 0;
    while (single_match(m, s + count, p, end)) {
        step(m);
        count++;
    }
    for (; count >= 0; count--) {
        const char *rest = match(m, s + count, end + 1);
        if (rest) return rest;
    }
    return NULL;
}

// Lazy: try the rest first, then take one more.
static const char *min_expand(matcher *m, const char *s, const char *p, const char *end) {
    for (;;) {
        const char *rest = match(m, s, end + 1);
        if (rest) return rest;
        if (!single_match(m, s, p, end)) return NULL;
        s++;
    }
}

static const char *start_capture(matcher *m, const char *s, const char *p, ptrdiff_t kind) {
    if (m->captures >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->capture[m->captures].start = s;
    m->capture[m->captures].length = kind;
    m->captures++;
    const char *rest = match(m, s, p);
    if (!rest) m->captures--;
    return rest;
}

static const char *end_capture(matcher *m, const char *s, const char *p) {
    int open = -1;
    for (int i = m->captures - 1; i >= 0; i--) {
        if (m->capture[i].length == CAPTURE_OPEN) {
            open = i;
            break;
        }
    }
    if (open < 0) luaL_error(m->L, "invalid pattern capture");
    m->capture[open].length = s - m->capture[open].start;
    const char *rest = match(m, s, p);
    if (!rest) m->capture[open].length = CAPTURE_OPEN;
    return rest;
}

static const char *match_back_reference(matcher *m, const char *s, int digit) {
    int index = digit - '1';
    if (index < 0 || index >= m->captures || m->capture[index].length == CAPTURE_OPEN)
        luaL_error(m->L, "invalid capture index %%%d in pattern", index + 1);
    size_t length = (size_t)m->capture[index].length;
    if ((size_t)(m->subject_end - s) >= length && memcmp(m->capture[index].start, s, length) == 0)
        return s + length;
    return NULL;
}

// The end of the match of `p` at `s`, or NULL. Simple items loop here instead of recursing.
static const char *match(matcher *m, const char *s, const char *p) {
    if (m->depth_left-- == 0) luaL_error(m->L, "pattern too complex");
    while (s && p != m->pattern_end) {
        step(m);
        if (*p == '(') {
            s = p[1] == ')' ? start_capture(m, s, p + 2, CAPTURE_POSITION) : start_capture(m, s, p + 1, CAPTURE_OPEN);
            break;
        }
        if (*p == ')') {
            s = end_capture(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->pattern_end) {
            if (s != m->subject_end) s = NULL;
            break;
        }
        if (*p == ESCAPE && p[1] == 'b') {
            s = match_balance(m, s, p + 2);
            p += 4;
            continue;
        }
        if (*p == ESCAPE && p[1] == 'f') {
            p += 2;
            if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
            const char *end = class_end(m, p);
            int before = s == m->subject ? 0 : byte(s - 1);
            int here = s < m->subject_end ? byte(s) : 0;
            if (in_set(before, p, end - 1) || !in_set(here, p, end - 1)) s = NULL;
            p = end;
            continue;
        }
        if (*p == ESCAPE && isdigit(byte(p + 1))) {
            s = match_back_reference(m, s, byte(p + 1));
            p += 2;
            continue;
        }
        const char *end = class_end(m, p);
        int quantifier = end < m->pattern_end ? *end : 0;
        if (!single_match(m, s, p, end)) {
            if (quantifier == '*' || quantifier == '?' || quantifier == '-') {
                p = end + 1;  // zero repetitions are allowed
                continue;
            }
            s = NULL;
            break;
        }
        if (quantifier == '?') {
            const char *rest = match(m, s + 1, end + 1);
            if (rest) {
                s = rest;
                break;
            }
            p = end + 1;
            continue;
        }
        if (quantifier == '+') { s = max_expand(m, s + 1, p, end); break; }
        if (quantifier == '*') { s = max_expand(m, s, p, end); break; }
        if (quantifier == '-') { s = min_expand(m, s, p, end); break; }
        s++;
        p = end;
    }
    m->depth_left++;
    return s;
}

// MARK: captures

static void push_capture(matcher *m, int index, const char *s, const char *e) {
    if (index >= m->captures) {
        if (index != 0) luaL_error(m->L, "invalid capture index %%%d", index + 1);
        lua_pushlstring(m->L, s, (size_t)(e - s));  // no captures: the whole match
        return;
    }
    ptrdiff_t length = m->capture[index].length;
    if (length == CAPTURE_OPEN) luaL_error(m->L, "unfinished capture");
    if (length == CAPTURE_POSITION)
        lua_pushinteger(m->L, (lua_Integer)(m->capture[index].start - m->subject) + 1);
    else
        lua_pushlstring(m->L, m->capture[index].start, (size_t)length);
}

// Pushes every capture (or the whole match when there are none and `s` is given).
static int push_captures(matcher *m, const char *s, const char *e) {
    int count = (m->captures == 0 && s) ? 1 : m->captures;
    luaL_checkstack(m->L, count, "too many captures");
    for (int i = 0; i < count; i++) push_capture(m, i, s, e);
    return count;
}

// MARK: plain search

static int has_specials(const char *p, size_t length) {
    for (size_t i = 0; i < length; i++)
        if (p[i] && strchr(SPECIALS, p[i])) return 1;
    return 0;
}

static const char *find_plain(lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    const char *last = s + (ls - lp);
    long long compared = 0;
    while (s <= last) {
        const char *candidate = memchr(s, *p, (size_t)(last - s) + 1);
        if (!candidate) return NULL;
        if (memcmp(candidate + 1, p + 1, lp - 1) == 0) return candidate;
        // A compare may read the whole needle; a megabyte needle tried at every position of a
        // megabyte subject is quadratic, so the bytes compared are counted (64 per instruction).
        compared += (long long)lp;
        if (compared >= 64 * STEPS_PER_TICK) {
            ph_lua_tick(L, compared / 64);
            compared %= 64;
        }
        s = candidate + 1;
    }
    return NULL;
}

// MARK: the library functions

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls);
    if (init > ls + 1) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *hit = find_plain(L, s + init - 1, ls - init + 1, p, lp);
        if (hit) {
            lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
            lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
            return 2;
        }
        luaL_pushfail(L);
        return 1;
    }
    int anchored = *p == '^';
    if (anchored) {
        p++;
        lp--;
    }
    matcher m;
    matcher_init(&m, L, s, ls, p, lp);
    const char *start = s + init - 1;
    do {
        matcher_reset(&m);
        const char *end = match(&m, start, p);
        if (end) {
            if (!find) return push_captures(&m, start, end);
            lua_pushinteger(L, (lua_Integer)(start - s) + 1);
            lua_pushinteger(L, (lua_Integer)(end - s));
            return push_captures(&m, NULL, NULL) + 2;
        }
        step(&m);
    } while (start++ < m.subject_end && !anchored);
    luaL_pushfail(L);
    return 1;
}

static int str_find(lua_State *L) { return find_or_match(L, 1); }
static int str_match(lua_State *L) { return find_or_match(L, 0); }

typedef struct {
    const char *next;
    const char *pattern;
    const char *last_match;  // an empty match right after a match is skipped
    matcher m;
} gmatch_state;

static int gmatch_next(lua_State *L) {
    gmatch_state *g = lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L;
    for (const char *src = g->next; src <= g->m.subject_end; src++) {
        matcher_reset(&g->m);
        const char *end = match(&g->m, src, g->pattern);
        if (end && end != g->last_match) {
            g->next = g->last_match = end;
            return push_captures(&g->m, src, end);
        }
        step(&g->m);
    }
    return 0;
}

static int str_gmatch(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) init = ls + 1;  // past the end: no match
    lua_settop(L, 2);              // the subject and pattern stay alive as upvalues 1 and 2
    gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    matcher_init(&g->m, L, s, ls, p, lp);
    g->next = s + init;
    g->pattern = p;
    g->last_match = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

// A replacement string: %0 is the match, %1-%9 the captures, %% a percent sign.
static void add_template(matcher *m, luaL_Buffer *b, const char *s, const char *e) {
    lua_State *L = m->L;
    size_t length;
    const char *text = lua_tolstring(L, 3, &length), *end = text + length, *percent;
    while ((percent = memchr(text, ESCAPE, (size_t)(end - text))) != NULL) {
        step(m);
        luaL_addlstring(b, text, (size_t)(percent - text));
        percent++;
        if (*percent == ESCAPE) {
            luaL_addchar(b, ESCAPE);
        } else if (*percent == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit(byte(percent))) {
            push_capture(m, *percent - '1', s, e);
            luaL_tolstring(L, -1, NULL);  // a position capture is a number
            lua_remove(L, -2);
            luaL_addvalue(b);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESCAPE);
        }
        text = percent + 1;
    }
    luaL_addlstring(b, text, (size_t)(end - text));
}

// Adds the replacement for one match; returns whether it differs from the match.
static int add_replacement(matcher *m, luaL_Buffer *b, const char *s, const char *e, int kind) {
    lua_State *L = m->L;
    if (kind == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int count = push_captures(m, s, e);
        lua_call(L, count, 1);
    } else if (kind == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {  // nil or false: keep the original text
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int str_gsub(lua_State *L) {
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int kind = lua_type(L, 3);
    lua_Integer max_replacements = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE,
                     3, "string/function/table");
    int anchored = *p == '^';
    if (anchored) {
        p++;
        lp--;
    }
    matcher m;
    matcher_init(&m, L, src, ls, p, lp);
    const char *last_match = NULL;
    lua_Integer count = 0;
    int changed = 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (count < max_replacements) {
        matcher_reset(&m);
        step(&m);
        const char *end = match(&m, src, p);
        if (end && end != last_match) {
            count++;
            changed = add_replacement(&m, &b, src, end, kind) | changed;
            src = last_match = end;
        } else if (src < m.subject_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchored) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.subject_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, count);
    return 2;
}

void ph_lua_replace_patterns(lua_State *L) {
    static const luaL_Reg functions[] = {
        {"find", str_find}, {"match", str_match}, {"gmatch", str_gmatch}, {"gsub", str_gsub}, {NULL, NULL},
    };
    lua_getglobal(L, "string");
    luaL_setfuncs(L, functions, 0);
    lua_pop(L, 1);
}
