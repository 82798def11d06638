/* The profile's fields and methods, its parts (plain tables built once)
 * and finding a function by name. */
#include "cg_lua_profile.h"
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_load.h"
#include "cg_query.h"

#include <string.h>

static int profile_field(lua_State *L, CgProfile *P, const char *k)
{
    const CgPart *first = P->nparts ? &P->parts[0] : NULL;
    if (!strcmp(k, "name"))
        lua_pushstring(L, P->name);
    else if (!strcmp(k, "version"))
        lua_pushinteger(L, P->version);
    else if (!strcmp(k, "creator"))
        cgl_push_str(L, P->creator);
    else if (!strcmp(k, "cmd")) {
        if (first && (first->has & CG_PART_CMD))
            cgl_push_str(L, first->cmd);
        else
            lua_pushnil(L);
    } else if (!strcmp(k, "pid")) {
        if (first && (first->has & CG_PART_PID))
            lua_pushinteger(L, first->pid);
        else
            lua_pushnil(L);
    } else if (!strcmp(k, "events"))
        cgl_push_events(L, 1, P);
    else if (!strcmp(k, "engine")) {
        /* the Lua profiler's "desc: Engine: vm|hook" line */
        uint32_t d;
        lua_pushnil(L);
        for (d = first ? first->desc_begin : 0; first && d < first->desc_end; d++)
            if (P->descs[d].type.len == 6
                && !memcmp(P->descs[d].type.ptr, "Engine", 6)) {
                lua_pop(L, 1);
                cgl_push_str(L, P->descs[d].value);
                break;
            }
    }
    else
        lua_pushnil(L);
    return 1;
}

int cgl_profile_fields(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    return profile_field(L, P, lua_tostring(L, 2));
}

int cgl_profile_tostring(lua_State *L)
{
    LProfile *lp = cgl_to_lprofile(L, 1);
    const CgProfile *P = lp->P;
    if (!P) {
        lua_pushliteral(L, "callgrind.Profile (closed)");
        return 1;
    }
    {
        luaL_Buffer b;
        size_t i;
        luaL_buffinit(L, &b);
        lua_pushfstring(L, "callgrind.Profile: %s (%I functions, %I calls, "
                        "%I part%s; events:", P->name,
                        (lua_Integer)P->nfuncs, (lua_Integer)P->ncalls,
                        (lua_Integer)P->nparts, P->nparts == 1 ? "" : "s");
        luaL_addvalue(&b);
        for (i = 0; i < P->nev && i < 12; i++) {
            luaL_addchar(&b, ' ');
            luaL_addlstring(&b, P->events[i].ptr, P->events[i].len);
        }
        if (i < P->nev)
            luaL_addstring(&b, " ...");
        if (!P->nev)
            luaL_addstring(&b, " none");
        luaL_addchar(&b, ')');
        luaL_pushresult(&b);
    }
    return 1;
}

/* callgrind.core.internal.warning_kinds(): the core's warning kinds, in
 * the order of cg_warning_kinds, then "formula" (the Lua layer's). */
int cgl_warning_kinds(lua_State *L)
{
    int i;
    lua_createtable(L, CG_NWKINDS + 1, 0);
    for (i = 0; i < CG_NWKINDS; i++) {
        lua_pushstring(L, cg_warning_kinds[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushliteral(L, "formula");
    lua_rawseti(L, -2, CG_NWKINDS + 1);
    return 1;
}

/* prof:warnings([kind]): every warning, or those of one kind (the kinds
 * of cg_warning_kinds; "formula" ones come from the Lua layer). */
int cgl_profile_warnings(lua_State *L)
{
    const char *kinds[CG_NWKINDS + 2];
    CgProfile *P = cgl_check_profile(L, 1);
    int kind;
    for (kind = 0; kind < CG_NWKINDS; kind++)
        kinds[kind] = cg_warning_kinds[kind];
    kinds[CG_NWKINDS] = "formula";
    kinds[CG_NWKINDS + 1] = NULL;
    kind = lua_isnoneornil(L, 2) ? -1 : luaL_checkoption(L, 2, NULL, kinds);
    uint64_t dropped = 0;
    size_t i;
    lua_Integer n = 0;
    lua_createtable(L, kind < 0 ? (int)P->nwarnings + 1 : 0, 0);
    for (i = 0; i < P->nwarnings; i++) {
        if (kind >= 0 && P->warnings[i].kind != kind)
            continue;
        lua_pushstring(L, P->warnings[i].text);
        lua_rawseti(L, -2, ++n);
    }
    for (i = 0; i < CG_NWKINDS; i++)
        if (kind < 0 || (int)i == kind)
            dropped += P->warnings_dropped[i];
    if (dropped) {
        /* "N more warnings", or "N more skipped warnings" */
        lua_pushfstring(L, "%s: %I more %s%swarnings not listed", P->name,
                        (lua_Integer)dropped, kind < 0 ? "" : kinds[kind],
                        kind < 0 ? "" : " ");
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

int cgl_profile_memory(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    lua_pushinteger(L, (lua_Integer)cg_profile_bytes(P));
    lua_pushinteger(L, (lua_Integer)P->len);
    return 2;
}

/* internal.load_stats(prof) -> lines, chunks, vector lines, texts read
 * ahead: the cost lines the load took in runs summed by its second
 * thread, the chunks of the texts it read with one, the cost lines the
 * vector paths read, and the files whose rest the second thread read
 * while the loader started (the specs show that they ran). */
int cgl_profile_load_stats(lua_State *L)
{
    const CgProfile *P = cgl_check_profile(L, 1);
    lua_pushinteger(L, (lua_Integer)P->run_lines);
    lua_pushinteger(L, (lua_Integer)P->chunks);
    lua_pushinteger(L, (lua_Integer)P->vec_lines);
    lua_pushinteger(L, (lua_Integer)P->read_ahead);
    return 4;
}

/* internal.vector_paths() -> whether loads in this process may read cost
 * lines with the vector paths (cg_load_vector_paths). */
int cgl_vector_paths(lua_State *L)
{
    lua_pushboolean(L, cg_load_vector_paths());
    return 1;
}

/* user value: the profile */
static int parts_iter(lua_State *L, CgIter *it)
{
    lua_Integer i = it->i;
    const CgProfile *P = cgl_check_open(L, (LProfile *)it->ud[0]);
    if ((size_t)i >= P->nparts)
        return 0;
    it->i = i + 1;
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, 1);
    cgl_push_part(L, 2, (uint32_t)i);
    return 1;
}

int cgl_profile_parts(lua_State *L)
{
    const CgProfile *P = cgl_check_profile(L, 1);
    lua_settop(L, 1);
    cgl_new_iter(L, parts_iter, "Parts", (lua_Integer)P->nparts, 1);
    return 1;
}

static void set_int(lua_State *L, const char *k, int has, int64_t v)
{
    if (has) {
        lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, -2, k);
    }
}

static void set_costs(lua_State *L, const char *k, const CgProfile *P,
                      int pidx, const CgPart *pt, const int64_t *v)
{
    int j;
    if (!v)
        return;
    lua_createtable(L, 0, pt->nev);
    for (j = 0; j < pt->nev; j++) {
        cgl_push_str(L, P->events[pt->evmap[j]]);
        lua_pushinteger(L, (lua_Integer)v[j]);
        lua_rawset(L, -3);
    }
    cgl_set_costs_mt(L, pidx);
    lua_setfield(L, -2, k);
}

static void build_parts(lua_State *L, int pidx, const CgProfile *P)
{
    size_t i;
    lua_createtable(L, (int)P->nparts, 0);
    for (i = 0; i < P->nparts; i++) {
        const CgPart *pt = &P->parts[i];
        uint32_t d;
        int j;
        lua_createtable(L, 0, 10);
        luaL_setmetatable(L, PART);
        lua_pushinteger(L, (lua_Integer)i + 1);
        lua_setfield(L, -2, "index");
        lua_pushinteger(L, (pt->has & CG_PART_NUMBER) ? (lua_Integer)pt->number
                                                      : (lua_Integer)i + 1);
        lua_setfield(L, -2, "number");
        set_int(L, "pid", pt->has & CG_PART_PID, pt->pid);
        set_int(L, "thread", pt->has & CG_PART_THREAD, pt->thread);
        if (pt->has & CG_PART_CMD) {
            cgl_push_str(L, pt->cmd);
            lua_setfield(L, -2, "cmd");
        }
        lua_newtable(L);
        for (d = pt->desc_begin; d < pt->desc_end; d++) {
            const CgDesc *ds = &P->descs[d];
            cgl_push_str(L, ds->type);
            if (lua_rawget(L, -2) == LUA_TSTRING) {
                /* a type written twice: keep both values, one a line */
                lua_pushliteral(L, "\n");
                cgl_push_str(L, ds->value);
                lua_concat(L, 3);
            } else {
                lua_pop(L, 1);
                cgl_push_str(L, ds->value);
            }
            cgl_push_str(L, ds->type);
            lua_insert(L, -2);
            lua_rawset(L, -3);
        }
        luaL_setmetatable(L, DESC);
        lua_setfield(L, -2, "desc");
        lua_createtable(L, pt->nev, 0);
        for (j = 0; j < pt->nev; j++) {
            cgl_push_str(L, P->events[pt->evmap[j]]);
            lua_rawseti(L, -2, j + 1);
        }
        luaL_setmetatable(L, NAMES);
        lua_setfield(L, -2, "events");
        set_costs(L, "summary", P, pidx, pt, pt->summary);
        set_costs(L, "written_totals", P, pidx, pt, pt->totals);
        lua_pushstring(L, P->texts[pt->text].name);
        lua_setfield(L, -2, "file");
        /* part:totals() finds its profile here */
        lua_getfield(L, LUA_REGISTRYINDEX, PART_OWNER);
        lua_pushvalue(L, -2);
        lua_pushvalue(L, pidx);
        lua_rawset(L, -3);
        lua_pop(L, 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    cgl_push_state(L, pidx);
    lua_insert(L, -2);
    lua_setfield(L, -2, STATE_PARTS);
    lua_pop(L, 1);
}

/* Pushes part i (0-based) of the profile at pidx. */
void cgl_push_part(lua_State *L, int pidx, uint32_t i)
{
    pidx = lua_absindex(L, pidx);
    cgl_push_state(L, pidx);
    if (lua_getfield(L, -1, STATE_PARTS) == LUA_TNIL) {
        lua_pop(L, 1);
        build_parts(L, pidx, ((LProfile *)lua_touserdata(L, pidx))->P);
        lua_getfield(L, -1, STATE_PARTS);
    }
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    lua_replace(L, -3);
    lua_pop(L, 1);
}

/* The part table at arg: pushes its profile (*P the open model) and
 * returns the part's 0-based index. pidx_want > 0: the part must belong to
 * the profile at that index. */
uint32_t cgl_check_part(lua_State *L, int arg, int pidx_want,
                        const CgProfile **P)
{
    lua_Integer i;
    luaL_checktype(L, arg, LUA_TTABLE);
    if (!lua_getmetatable(L, arg) ||
        (luaL_getmetatable(L, PART), !lua_rawequal(L, -1, -2)))
        luaL_typeerror(L, arg, PART);
    lua_pop(L, 2);
    lua_getfield(L, LUA_REGISTRYINDEX, PART_OWNER);
    lua_pushvalue(L, arg);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (pidx_want > 0 && !lua_rawequal(L, -1, pidx_want))
        luaL_argerror(L, arg, "a Part of another profile");
    *P = cgl_check_open(L, (LProfile *)luaL_checkudata(L, -1, PROFILE));
    lua_getfield(L, arg, "index");
    i = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return (uint32_t)(i - 1);
}

/* part:totals([ev]): the sums of the part's cost lines. */
int cgl_part_totals(lua_State *L)
{
    const CgProfile *P;
    uint32_t i;
    int pidx;
    int64_t *v;
    lua_settop(L, 2);
    i = cgl_check_part(L, 1, 0, &P);
    pidx = lua_gettop(L);
    v = (int64_t *)lua_newuserdatauv(L, (P->nev + 1) * sizeof *v, 0);
    cg_part_totals(P, i, v);
    return cgl_push_costs(L, P, pidx, v, 2);
}

int cgl_part_tostring(lua_State *L)
{
    luaL_Buffer b;
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_buffinit(L, &b);
    lua_getfield(L, 1, "number");
    lua_pushfstring(L, "callgrind.Part %I", lua_tointeger(L, -1));
    lua_remove(L, -2);
    luaL_addvalue(&b);
    if (lua_getfield(L, 1, "pid") == LUA_TNUMBER) {
        lua_pushfstring(L, ", pid %I", lua_tointeger(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(&b);
    } else {
        lua_pop(L, 1);
    }
    if (lua_getfield(L, 1, "thread") == LUA_TNUMBER) {
        lua_pushfstring(L, ", thread %I", lua_tointeger(L, -1));
        lua_remove(L, -2);
        luaL_addvalue(&b);
    } else {
        lua_pop(L, 1);
    }
    luaL_pushresult(&b);
    return 1;
}

static int opt_name_index(lua_State *L, const CgProfile *P, int arg, int kind,
                          int32_t *out)
{
    size_t len;
    const char *s;
    if (lua_isnoneornil(L, arg)) {
        *out = -2;               /* any */
        return 1;
    }
    s = luaL_checklstring(L, arg, &len);
    *out = cg_names_find(&P->names[kind], s, len);
    return *out >= 0;
}

/* prof:func(name [, file [, object]]): the model's lookup (cg_func_lookup)
 * turned into a handle, or nil and "not found" / "ambiguous: ...". */
int cgl_profile_func(lua_State *L)
{
    CgProfile *P = cgl_check_profile(L, 1);
    size_t len, i, found;
    const char *name = luaL_checklstring(L, 2, &len);
    int32_t n = cg_names_find(&P->names[CG_FN], name, len), file, obj;
    uint32_t hit[5];
    if (n < 0 || !opt_name_index(L, P, 3, CG_FILE, &file) ||
        !opt_name_index(L, P, 4, CG_OBJ, &obj)) {
        lua_pushnil(L);
        lua_pushliteral(L, "not found");
        return 2;
    }
    found = cg_func_lookup(P, n, file, obj, hit, 5);
    if (found == 1) {
        cgl_push_func(L, 1, (int32_t)hit[0]);
        return 1;
    }
    lua_pushnil(L);
    if (!found) {
        lua_pushliteral(L, "not found");
        return 2;
    }
    {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        lua_pushfstring(L, "ambiguous: %I functions named '%s' (",
                        (lua_Integer)found, name);
        luaL_addvalue(&b);
        for (i = 0; i < found && i < 5; i++) {
            const CgFunc *f = &P->funcs[hit[i]];
            if (i)
                luaL_addstring(&b, "; ");
            if (f->file >= 0)
                luaL_addlstring(&b, P->names[CG_FILE].str[f->file].ptr,
                                P->names[CG_FILE].str[f->file].len);
            else
                luaL_addstring(&b, "no file");
            if (f->obj >= 0) {
                luaL_addstring(&b, " in ");
                luaL_addlstring(&b, P->names[CG_OBJ].str[f->obj].ptr,
                                P->names[CG_OBJ].str[f->obj].len);
            }
        }
        if (found > 5)
            luaL_addstring(&b, "; ...");
        luaL_addstring(&b, "): give a file or object to choose");
        luaL_pushresult(&b);
    }
    return 2;
}
