/* Cost lines and jumps: cursors that parse a function's blocks again as
 * they go, giving a handle per line or jump, or plain values (ulines). */
#include "cg_lua_lines.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_func.h"
#include "cg_lua_profile.h"
#include "cg_cursor.h"

#include <string.h>

typedef struct LJump {
    CgJump j;
} LJump;

typedef struct LLine {
    CgLine l;
    int64_t cost[1];             /* stride values */
} LLine;

typedef struct LCursor {
    CgCursor c;
    const CgProfile *P;          /* what it walks; checked at each step */
    int64_t cost[1];
} LCursor;

/* user values: profile, cursor */
static int lines_iter(lua_State *L, CgIter *it)
{
    LProfile *lp = (LProfile *)it->ud[0];
    LCursor *c = (LCursor *)it->ud[1];
    const CgProfile *P = cgl_check_open(L, lp);
    CgLine l;
    LLine *h;
    if (c->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_line(&c->c, &l))
        return 0;
    h = (LLine *)lua_newuserdatauv(L, sizeof *h + P->stride * sizeof(int64_t),
                                   1);
    h->l = l;
    memcpy(h->cost, l.cost, P->stride * sizeof(int64_t));
    h->l.cost = h->cost;
    luaL_setmetatable(L, COSTLINE);
    lua_getiuservalue(L, 1, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int jumps_iter(lua_State *L, CgIter *it)
{
    LProfile *lp = (LProfile *)it->ud[0];
    LCursor *c = (LCursor *)it->ud[1];
    const CgProfile *P = cgl_check_open(L, lp);
    LJump *h;
    CgJump j;
    if (c->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_jump(&c->c, &j))
        return 0;
    h = (LJump *)lua_newuserdatauv(L, sizeof *h, 1);
    h->j = j;
    luaL_setmetatable(L, JUMP);
    lua_getiuservalue(L, 1, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static void push_cursor_iter(lua_State *L, int pidx, const CgProfile *P,
                             size_t first, size_t last, CgIterStep f)
{
    LCursor *c;
    pidx = lua_absindex(L, pidx);
    lua_pushvalue(L, pidx);
    c = (LCursor *)lua_newuserdatauv(L, sizeof *c + P->stride *
                                     sizeof(int64_t), 0);
    luaL_setmetatable(L, CURSOR);
    c->P = P;
    cg_cursor_init(&c->c, P, first, last, c->cost);
    cgl_new_iter(L, f, f == jumps_iter ? "Jumps" : "CostLines", -1, 2);
}

/* The light iterator (lsqlite3's urows beside rows): plain values per cost
 * line, no userdata. The events asked are kept in the cursor userdata as
 * base indices, or (-1) with the derived event's coefficients copied. */
typedef struct ULines {
    CgCursor c;
    const CgProfile *P;
    int n;                       /* events asked */
    int *ev;                     /* n: base index or -1 */
    int64_t *coefs;              /* n * stride: derived coefficients */
    int64_t *cost;               /* stride: the cursor's line costs */
} ULines;

static int ulines_iter(lua_State *L, CgIter *it)
{
    LProfile *lp = (LProfile *)it->ud[0];
    ULines *u = (ULines *)it->ud[1];
    const CgProfile *P = cgl_check_open(L, lp);
    CgLine l;
    int i;
    if (u->P != P)
        return luaL_error(L, "attempt to use a closed profile");
    if (!cg_cursor_next_line(&u->c, &l))
        return 0;
    luaL_checkstack(L, u->n + 3, "too many events");
    lua_pushinteger(L, (lua_Integer)l.func + 1);
    if (l.flags & CG_HAS_LINE)
        lua_pushinteger(L, (lua_Integer)l.line);
    else
        lua_pushnil(L);
    if (l.flags & CG_HAS_ADDR)
        lua_pushinteger(L, (lua_Integer)l.addr);
    else
        lua_pushnil(L);
    for (i = 0; i < u->n; i++) {
        int ev = u->ev[i];
        lua_pushinteger(L, (lua_Integer)(ev >= 0 ? l.cost[ev] :
                        cgl_event_value(L, P, l.cost, -1,
                                        u->coefs + (size_t)i * P->stride)));
    }
    return 3 + u->n;
}

/* Pushes the ulines iterator over blocks [first, last) of the profile at
 * pidx, for the events given as arguments from arg on (all base events
 * when none). */
static void push_ulines(lua_State *L, int pidx, const CgProfile *P,
                        int arg, size_t first, size_t last)
{
    int top = lua_gettop(L), n = top >= arg ? top - arg + 1 : (int)P->nev;
    size_t stride = P->stride ? P->stride : 1, sz;
    ULines *u;
    int i;
    pidx = lua_absindex(L, pidx);
    sz = sizeof *u + (size_t)n * sizeof(int) + (size_t)n * stride *
         sizeof(int64_t) + stride * sizeof(int64_t) + 2 * sizeof(int64_t);
    lua_pushvalue(L, pidx);
    u = (ULines *)lua_newuserdatauv(L, sz, 0);
    luaL_setmetatable(L, CURSOR);
    u->P = P;
    u->n = n;
    u->coefs = (int64_t *)(void *)(u + 1);
    u->cost = u->coefs + (size_t)n * stride;
    u->ev = (int *)(void *)(u->cost + stride + 1);
    for (i = 0; i < n; i++) {
        if (top >= arg) {
            const int64_t *coefs;
            u->ev[i] = cgl_check_event(L, P, pidx, arg + i, &coefs);
            if (coefs)
                memcpy(u->coefs + (size_t)i * stride, coefs,
                       P->nev * sizeof *coefs);
        } else {
            u->ev[i] = i;
        }
    }
    cg_cursor_init(&u->c, P, first, last, u->cost);
    cgl_new_iter(L, ulines_iter, "cost lines (ulines: index, line, addr, costs)", -1, 2);
}

/* prof:ulines([ev, ...]) */
int cgl_profile_ulines(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    push_ulines(L, 1, P, 2, 0, P->nblocks);
    return 1;
}

/* fn:ulines([ev, ...]) */
int cgl_func_ulines(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    cgl_push_owner(L, 1);
    lua_insert(L, 2);            /* the profile at 2, the events after it */
    push_ulines(L, 2, P, 3, f->blocks_begin, f->blocks_end);
    return 1;
}

int cgl_profile_lines(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    push_cursor_iter(L, 1, P, 0, P->nblocks, lines_iter);
    return 1;
}

int cgl_profile_jumps(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    push_cursor_iter(L, 1, P, 0, P->nblocks, jumps_iter);
    return 1;
}

int cgl_func_lines(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    cgl_push_func_owner(L, 1);
    push_cursor_iter(L, -1, P, f->blocks_begin, f->blocks_end, lines_iter);
    return 1;
}

int cgl_func_jumps(lua_State *L)
{
    CgProfile *P;
    const CgFunc *f = cgl_check_func(L, 1, &P);
    cgl_push_func_owner(L, 1);
    push_cursor_iter(L, -1, P, f->blocks_begin, f->blocks_end, jumps_iter);
    return 1;
}

int cgl_line_fields(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    const char *k = lua_tostring(L, 2);
    CgProfile *P = cgl_handle_profile(L, 1);
    int pidx = lua_gettop(L);
    if (!strcmp(k, "fn"))
        cgl_push_func(L, pidx, h->l.func);
    else if (!strcmp(k, "file"))
        cgl_push_name(L, P, CG_FILE, h->l.file);
    else if (!strcmp(k, "line"))
        cgl_push_pos(L, h->l.flags, CG_HAS_LINE, h->l.line);
    else if (!strcmp(k, "addr"))
        cgl_push_pos(L, h->l.flags, CG_HAS_ADDR, h->l.addr);
    else if (!strcmp(k, "part"))
        cgl_push_part(L, pidx, h->l.part);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

int cgl_line_cost(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    CgProfile *P;
    lua_settop(L, 2);
    P = cgl_handle_profile(L, 1);
    return cgl_push_costs(L, P, 3, h->cost, 2);
}

int cgl_line_tostring(lua_State *L)
{
    LLine *h = (LLine *)luaL_checkudata(L, 1, COSTLINE);
    CgProfile *P;
    if (cgl_closed_tostring(L, 1, COSTLINE))
        return 1;
    P = cgl_handle_profile(L, 1);
    luaL_Buffer b;
    size_t i;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.CostLine: ");
    cgl_push_name(L, P, CG_FN, P->funcs[h->l.func].name);
    luaL_addvalue(&b);
    luaL_addstring(&b, " at ");
    cgl_add_where(L, &b, P, h->l.file, h->l.flags, CG_HAS_ADDR, CG_HAS_LINE,
                  h->l.addr, h->l.line);
    for (i = 0; i < P->nev && i < 12; i++) {
        luaL_addchar(&b, ' ');
        luaL_addlstring(&b, P->events[i].ptr, P->events[i].len);
        lua_pushfstring(L, "=%I", (lua_Integer)h->cost[i]);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

int cgl_jump_fields(lua_State *L)
{
    LJump *h = (LJump *)luaL_checkudata(L, 1, JUMP);
    const CgJump *j = &h->j;
    const char *k = lua_tostring(L, 2);
    CgProfile *P = cgl_handle_profile(L, 1);
    int pidx = lua_gettop(L);
    if (!strcmp(k, "from"))
        cgl_push_func(L, pidx, j->from);
    else if (!strcmp(k, "to"))
        cgl_push_func(L, pidx, j->to);
    else if (!strcmp(k, "file"))
        cgl_push_name(L, P, CG_FILE, j->file);
    else if (!strcmp(k, "target_file"))
        cgl_push_name(L, P, CG_FILE, j->target_file);
    else if (!strcmp(k, "line"))
        cgl_push_pos(L, j->flags, CG_HAS_LINE, j->line);
    else if (!strcmp(k, "addr"))
        cgl_push_pos(L, j->flags, CG_HAS_ADDR, j->addr);
    else if (!strcmp(k, "target_line"))
        cgl_push_pos(L, j->flags, CG_HAS_TLINE, j->tline);
    else if (!strcmp(k, "target_addr"))
        cgl_push_pos(L, j->flags, CG_HAS_TADDR, j->taddr);
    else if (!strcmp(k, "conditional"))
        lua_pushboolean(L, j->conditional);
    else if (!strcmp(k, "count"))
        cgl_push_count(L, j->count);
    else if (!strcmp(k, "executed"))
        cgl_push_count(L, j->executed);
    else if (!strcmp(k, "part"))
        cgl_push_part(L, pidx, j->part);
    else if (!strcmp(k, "profile"))
        lua_pushvalue(L, pidx);
    else
        lua_pushnil(L);
    return 1;
}

int cgl_jump_tostring(lua_State *L)
{
    LJump *h = (LJump *)luaL_checkudata(L, 1, JUMP);
    const CgJump *j = &h->j;
    CgProfile *P;
    if (cgl_closed_tostring(L, 1, JUMP))
        return 1;
    P = cgl_handle_profile(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "callgrind.Jump: ");
    cgl_add_where(L, &b, P, j->file, j->flags, CG_HAS_ADDR, CG_HAS_LINE,
                  j->addr, j->line);
    luaL_addstring(&b, " -> ");
    cgl_add_where(L, &b, P, j->target_file, j->flags, CG_HAS_TADDR,
                  CG_HAS_TLINE, j->taddr, j->tline);
    if (j->conditional) {
        cgl_push_count_text(L, j->count);
        cgl_push_count_text(L, j->executed);
        lua_pushfstring(L, " (conditional, taken %s of %s)",
                        lua_tostring(L, -2), lua_tostring(L, -1));
        lua_replace(L, -3);
        lua_pop(L, 1);
    } else {
        cgl_push_count_text(L, j->count);
        lua_pushfstring(L, " (%s times)", lua_tostring(L, -1));
        lua_remove(L, -2);
    }
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    return 1;
}

/* internal.first_lines(prof) -> { line by function index }: the line of
 * each function's first cost line that has one, 0 when none has (what
 * `for l in fn:lines() do if l.line then ... break end end` finds, for
 * every function in one call: pprof's locations). */
int cgl_profile_first_lines(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    int64_t *cost = (int64_t *)lua_newuserdatauv(L, (P->stride ? P->stride : 1) * sizeof *cost, 0);
    size_t i;
    lua_createtable(L, (int)P->nfuncs, 0);
    for (i = 0; i < P->nfuncs; i++) {
        CgCursor c;
        CgLine l;
        lua_Integer first = 0;
        cg_cursor_init(&c, P, P->funcs[i].blocks_begin, P->funcs[i].blocks_end, cost);
        while (cg_cursor_next_line(&c, &l)) {
            if (l.flags & CG_HAS_LINE) {
                first = (lua_Integer)l.line;
                break;
            }
        }
        lua_pushinteger(L, first);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}
