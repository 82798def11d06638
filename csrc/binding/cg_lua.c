/* The Lua binding's registration: the method tables, the metatables,
 * and the module's two exported symbols: luaopen_callgrind_core, and
 * luaopen_callgrind_core_starter, what callgrind.start loads. The other
 * cg_lua_*.c files convert between C and Lua (cg_binding.h). */
#include "cg_lua_handle.h"
#include "cg_lua_cost.h"
#include "cg_lua_profile.h"
#include "cg_lua_func.h"
#include "cg_lua_lines.h"
#include "cg_lua_query.h"
#include "cg_lua_load.h"
#include "cg_lua_fs.h"
#include "cg_lua_proc.h"
#include "cg_lua_write.h"
#include "cg_lua_visuals.h"
#include "cg_lua_stacks.h"
#include "cg_prof.h"
#include "cg_prof_describe.h"
#include "cg_prof_exit.h"

/* __index of every handle type: methods first (Lua modules add to them),
 * then fields, then, for a string key that gave nil, the Lua layer's
 * `internal.hooks.unknown(obj, key)`, which gives nil for a field that
 * exists and raises "did you mean" for one that does not. Upvalue 1: the
 * methods table; upvalue 2: the field function; upvalue 3: the hooks. */
static int handle_index(lua_State *L)
{
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1))
        return 1;
    if (lua_getfield(L, lua_upvalueindex(3), "unknown") != LUA_TFUNCTION)
        return 0;
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    return 1;
}

/* The fields of a type whose fields are raw (Part): none behind __index. */
static int no_fields(lua_State *L)
{
    lua_pushnil(L);
    return 1;
}

static const luaL_Reg profile_methods[] = {
    {"close", cgl_profile_close},
    {"totals", cgl_profile_totals},
    {"total", cgl_profile_total},
    {"warnings", cgl_profile_warnings},
    {"functions", cgl_profile_functions},
    {"calls", cgl_profile_calls},
    {"jumps", cgl_profile_jumps},
    {"lines", cgl_profile_lines},
    {"ulines", cgl_profile_ulines},
    {"parts", cgl_profile_parts},
    {"func", cgl_profile_func},
    {"memory", cgl_profile_memory},
    {NULL, NULL}
};

/* The Lua layer's helpers: plain functions of the module's `internal`
 * table, each taking the object first, so no public object carries them. */
static const luaL_Reg internal_funcs[] = {
    {"define", cgl_profile_define},
    {"ab_all", cgl_profile_ab_all},
    {"components", cgl_profile_components},
    {"self_all", cgl_profile_self_all},
    {"function_at", cgl_profile_function},
    {"event_defs", cgl_profile_event_defs},
    {"file_costs", cgl_profile_file_costs},
    {"annotate", cgl_profile_annotate},
    {"ab", cgl_func_ab},
    {"event_problem", cgl_profile_event_problem},
    {"state", cgl_profile_state},
    {"load_stats", cgl_profile_load_stats},
    {"vector_paths", cgl_vector_paths},
    {"warning_kinds", cgl_warning_kinds},
    {"lock", cgl_fs_lock},
    {"append", cgl_fs_append},
    {"digest_line", cgl_fs_digest_line},
    {"supervise", cgl_proc_supervise},
    {"gzip_stream", cgl_gzip_stream},
    {"estimate", cgl_profile_estimate},
    {"in_calls", cgl_profile_in_calls},
    {"best_caller", cgl_best_caller},
    {"first_lines", cgl_profile_first_lines},
    {"folded_tree", cgl_folded_tree},
    {"flame_frames", cgl_flame_frames},
    {"write_stack_record", cgl_write_stack_record},
    {"read_stack_record", cgl_read_stack_record},
    {"stack_record_folded", cgl_stack_record_folded},
    {"profile_digest", cgl_profile_digest},
    {"stack_tree", cgl_stack_tree},
    {NULL, NULL}
};

static const luaL_Reg function_methods[] = {
    {"self", cgl_func_self},
    {"lines", cgl_func_lines},
    {"ulines", cgl_func_ulines},
    {"calls", cgl_func_calls},
    {"callers", cgl_func_callers},
    {"jumps", cgl_func_jumps},
    {NULL, NULL}
};

static const luaL_Reg call_methods[] = {
    {"cost", cgl_call_cost},
    {NULL, NULL}
};

static const luaL_Reg line_methods[] = {
    {"cost", cgl_line_cost},
    {NULL, NULL}
};

static const luaL_Reg no_methods[] = {
    {NULL, NULL}
};

static const luaL_Reg part_methods[] = {
    {"totals", cgl_part_totals},
    {NULL, NULL}
};

/* Makes metatable tname whose __index looks in a methods table (stored in
 * the module's `methods` table under short) and then calls fields. */
static void new_type(lua_State *L, const char *tname, const char *short_name,
                     const luaL_Reg *methods, lua_CFunction fields,
                     lua_CFunction tostring, int methods_idx)
{
    luaL_newmetatable(L, tname);
    luaL_newlib(L, no_methods);
    luaL_setfuncs(L, methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, methods_idx, short_name);
    lua_pushcfunction(L, fields ? fields : no_fields);
    lua_getfield(L, methods_idx, "hooks");
    lua_pushcclosure(L, handle_index, 3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, tname);
    lua_setfield(L, -2, "__name");
}

static const luaL_Reg module_funcs[] = {
    {"load", cgl_module_load},
    {"files", cgl_module_files},
    {"parse", cgl_module_parse},
    {NULL, NULL}
};

/* A metatable of the registry for values with no methods: what each
 * given function (NULL: none) is for __gc, __call and __tostring. */
static void plain_type(lua_State *L, const char *name, lua_CFunction gc,
                       lua_CFunction call, lua_CFunction tostring)
{
    luaL_newmetatable(L, name);
    if (gc) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
    }
    if (call) {
        lua_pushcfunction(L, call);
        lua_setfield(L, -2, "__call");
    }
    if (tostring) {
        lua_pushcfunction(L, tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
}

int luaopen_callgrind_core(lua_State *L);

__attribute__((visibility("default"))) int luaopen_callgrind_core(
    lua_State *L)
{
    int methods;
    luaL_newlib(L, module_funcs);
    cg_prof_register(L);
    cg_prof_exit_register(L);
    /* the profiler's folded text is written here, beside its record */
    lua_pushcfunction(L, cgl_prof_write_folded);
    lua_setfield(L, -2, "prof_write_folded");
    lua_newtable(L);
    methods = lua_gettop(L);
    /* the hooks table, kept in `methods` while the types are made, then
     * moved to `internal` */
    lua_newtable(L);
    lua_setfield(L, methods, "hooks");

    new_type(L, PROFILE, "Profile", profile_methods, cgl_profile_fields,
             cgl_profile_tostring, methods);
    lua_pushcfunction(L, cgl_profile_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, cgl_profile_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);

    new_type(L, FUNCTION, "Function", function_methods, cgl_func_fields,
             cgl_func_tostring, methods);
    lua_pop(L, 1);
    new_type(L, CALL, "Call", call_methods, cgl_call_fields, cgl_call_tostring,
             methods);
    lua_pushcfunction(L, cgl_call_eq);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);
    new_type(L, JUMP, "Jump", no_methods, cgl_jump_fields, cgl_jump_tostring,
             methods);
    lua_pop(L, 1);
    new_type(L, COSTLINE, "CostLine", line_methods, cgl_line_fields,
             cgl_line_tostring, methods);
    lua_pop(L, 1);
    /* parts are tables: their fields are raw, methods behind __index */
    new_type(L, PART, "Part", part_methods, NULL, cgl_part_tostring, methods);
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_pushvalue(L, -1);
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, PART_OWNER);
    plain_type(L, FILELIST, cgl_filelist_gc, NULL, NULL);
    plain_type(L, FILELINES, cgl_filelines_gc, NULL, NULL);
    plain_type(L, CURSOR, NULL, NULL, NULL);
    plain_type(L, ITERATOR, NULL, cgl_iter_call, cgl_iter_tostring);
    plain_type(L, NAMES, NULL, NULL, cgl_names_tostring);
    plain_type(L, DESC, NULL, NULL, cgl_desc_tostring);

    lua_getfield(L, -1, "hooks");
    lua_pushnil(L);
    lua_setfield(L, -3, "hooks");
    lua_insert(L, -2);
    lua_setfield(L, -3, "methods");
    luaL_newlib(L, internal_funcs);
    lua_insert(L, -2);
    lua_setfield(L, -2, "hooks");
    cgl_write_register(L, lua_absindex(L, -2), lua_gettop(L));
    lua_setfield(L, -2, "internal");
    return 1;
}

/* callgrind.start's entry, loaded with package.loadlib (not require): the
 * start of a whole run's profile without the hundreds of functions and
 * the types of callgrind.core. It registers in a table of its own only
 * what the start and the write at exit call through it (five of the
 * profiler's functions, the stack record's and the folded text's
 * writers), keeps it as the core the profiler calls through (a
 * later require of callgrind.core keeps the whole module instead), and
 * runs prof_autostart in its own frame: returns the sentinel. When the
 * core is loaded already, its table is kept: prof_autostart alone. */
int luaopen_callgrind_core_starter(lua_State *L);

__attribute__((visibility("default"))) int luaopen_callgrind_core_starter(
    lua_State *L)
{
    if (!cg_prof_core_kept(L)) {
        lua_createtable(L, 0, 8);
        cg_prof_register_start(L);
        cg_prof_exit_register(L);
        lua_pushcfunction(L, cgl_prof_write_folded);
        lua_setfield(L, -2, "prof_write_folded");
        lua_createtable(L, 0, 1);
        lua_pushcfunction(L, cgl_write_stack_record);
        lua_setfield(L, -2, "write_stack_record");
        lua_setfield(L, -2, "internal");
        lua_pop(L, 1);
    }
    return cg_prof_autostart(L);
}
