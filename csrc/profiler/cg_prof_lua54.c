/* The probes that find or check the Lua 5.4 shortcuts of
 * cg_prof_lua54.h (see there for each one and the versions checked). */
#include "cg_prof_lua54.h"

#include <stdlib.h>

#include "lauxlib.h"

int cg_l54_g_ok;

void *cg_l54_alloc_ud_api(lua_State *L, lua_Alloc f)
{
    void *ud;
    return lua_getallocf(L, &ud) == f ? ud : NULL;
}

#if LUA_VERSION_NUM == 504

/* The offset of the prototype pointer inside a Lua closure (after its GC
 * header and upvalue count), from three closures: c[0] and c[1] of one
 * prototype, which they share, c[2] of another. -1 when no offset says
 * so. */
static int proto_offset(const void *const c[3])
{
    static const int offs[] = {24, 16, 32};
    size_t i;
    int j;
    for (i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        const void *p[3];
        for (j = 0; j < 3; j++)
            memcpy(&p[j], (const char *)c[j] + offs[i], sizeof p[j]);
        if (p[0] != NULL && p[0] == p[1] && p[0] != p[2] && p[2] != NULL)
            return offs[i];
    }
    return -1;
}

/* The key lua_getinfo gives for level lev (the reference the CallInfo
 * reads are checked against). */
static int ref_key(const CgL54 *k, lua_State *L, lua_Debug *ar, uint64_t *key)
{
    lua_getinfo(L, "f", ar);
    if (lua_iscfunction(L, -1))
        *key = (uint64_t)(uintptr_t)lua_tocfunction(L, -1);
    else
        *key = (uint64_t)(uintptr_t)cg_l54_proto(k, lua_topointer(L, -1));
    lua_pop(L, 1);
    return 1;
}

/* The probe, called from a Lua chunk with three closures (proto_offset's):
 * sets k->proto_off, then checks cg_l54_ci_key against lua_getinfo on
 * the three kinds of function: itself (a C closure), its caller (a Lua
 * chunk), the C function that called that (a light C function); and
 * cg_l54_ci_prev against lua_getstack one level up. Returns both
 * verdicts. */
static int ci_probe(lua_State *L)
{
    CgL54 *k = (CgL54 *)lua_touserdata(L, lua_upvalueindex(1));
    const void *c[3];
    int lev, ok = 1, prev_ok = 1;
    for (lev = 0; lev < 3; lev++)
        c[lev] = lua_topointer(L, lev + 1);
    k->proto_off = proto_offset(c);
    for (lev = 0; lev < 3 && ok && k->proto_off >= 0; lev++) {
        lua_Debug ar, up;
        uint64_t want, got;
        ok = lua_getstack(L, lev, &ar);
        if (!ok)
            break;
        ref_key(k, L, &ar, &want);
        ok = cg_l54_ci_key(k, ar.i_ci, &got) && got == want;
        if (lua_getstack(L, lev + 1, &up))
            prev_ok = prev_ok
                      && cg_l54_ci_prev(ar.i_ci) == (const void *)up.i_ci;
        else if (lev < 2)
            prev_ok = 0;
    }
    lua_pushboolean(L, ok && k->proto_off >= 0);
    lua_pushboolean(L, ok && prev_ok && k->proto_off >= 0);
    return 2;
}

/* The probe's chunk: it makes the closures and calls the probe (not as
 * a tail call: the chunk is the probe's caller). */
#define PROBE_SRC "local probe = ... local function mk() return " \
                  "function() end end local a, b = probe(mk(), " \
                  "mk(), function() end) return a, b"

/* PROBE_SRC compiled, string.dump(load(PROBE_SRC), true) of Lua 5.4 on
 * 64-bit little-endian (8-byte integers and floats): loading it costs a
 * few thousand instructions where the parse cost 35 thousand, at every
 * profiled process's start. Lua 5.4.0 to 5.4.7 share the format and the
 * opcodes; an interpreter of other sizes refuses the header, and the
 * source is parsed instead. spec/profiler_start_spec.lua checks the bytes
 * against string.dump. */
static const unsigned char probe_bc[] = {
      0x1b, 0x4c, 0x75, 0x61, 0x54, 0x00, 0x19, 0x93, 0x0d, 0x0a, 0x1a, 0x0a,
      0x04, 0x08, 0x08, 0x78, 0x56, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x28, 0x77, 0x40, 0x01, 0x80, 0x80, 0x80, 0x00,
      0x01, 0x06, 0x8e, 0x51, 0x00, 0x00, 0x00, 0x50, 0x00, 0x00, 0x02, 0xcf,
      0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x80, 0x01, 0x01, 0x00, 0xc4,
      0x01, 0x01, 0x02, 0x00, 0x02, 0x01, 0x00, 0x44, 0x02, 0x01, 0x02, 0xcf,
      0x82, 0x00, 0x00, 0x44, 0x01, 0x04, 0x03, 0x00, 0x02, 0x02, 0x00, 0x80,
      0x02, 0x03, 0x00, 0x46, 0x02, 0x03, 0x01, 0x46, 0x02, 0x01, 0x01, 0x80,
      0x81, 0x01, 0x00, 0x00, 0x82, 0x80, 0x81, 0x81, 0x00, 0x00, 0x02, 0x83,
      0x4f, 0x00, 0x00, 0x00, 0x48, 0x00, 0x02, 0x00, 0x47, 0x00, 0x01, 0x00,
      0x80, 0x80, 0x81, 0x80, 0x81, 0x81, 0x00, 0x00, 0x02, 0x81, 0x47, 0x00,
      0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
      0x80, 0x80, 0x81, 0x81, 0x00, 0x00, 0x02, 0x81, 0x47, 0x00, 0x01, 0x00,
      0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80
};

/* Sets k->proto_off, k->ci_ok and k->prev_ok: the probe's chunk loaded
 * (its bytes, else its source) and run. */
static void probe_closures(CgL54 *k, lua_State *L)
{
    k->proto_off = -1;
    k->ci_ok = k->prev_ok = 0;
    if (luaL_loadbufferx(L, (const char *)probe_bc, sizeof probe_bc,
                         "=probe", "b") != LUA_OK) {
        lua_pop(L, 1);
        if (luaL_loadstring(L, PROBE_SRC) != LUA_OK) {
            lua_pop(L, 1);
            return;
        }
    }
    lua_pushlightuserdata(L, k);
    lua_pushcclosure(L, ci_probe, 1);
    if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
        lua_pop(L, 1);
        return;
    }
    k->ci_ok = lua_toboolean(L, -2);
    k->prev_ok = lua_toboolean(L, -1);
    lua_pop(L, 2);
}

/* The allocator the counter's probe puts in place for one lua_newthread:
 * the new thread's block is zeroed (its padding then reads as defined)
 * and its place and size noted, so the scan stays inside it. */
typedef struct Zeroing {
    lua_Alloc f;
    void *ud;
    char *block;
    size_t size;
} Zeroing;

static void *zeroing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    Zeroing *z = (Zeroing *)ud;
    void *p = z->f(z->ud, ptr, osize, nsize);
    if (p != NULL && ptr == NULL && osize == LUA_TTHREAD) {
        memset(p, 0, nsize);
        z->block = (char *)p;
        z->size = nsize;
    }
    return p;
}

/* Finds the hook counter: lua_sethook stores the count in two adjacent ints
 * (basehookcount, hookcount); on a new thread, set to two distinct counts,
 * exactly one place must hold each twice. */
static int find_hookcount(lua_State *L, lua_Hook hook)
{
    const int32_t want[2] = {0x35a1c3e, 0x1b7e4d2};
    int hits[2] = {-1, -1}, j;
    Zeroing z;
    lua_State *T;
    z.block = NULL;
    z.size = 0;
    z.f = lua_getallocf(L, &z.ud);
    lua_setallocf(L, zeroing_alloc, &z);
    T = lua_newthread(L);
    lua_setallocf(L, z.f, z.ud);
    if (z.block == NULL || (char *)T < z.block
        || (char *)T >= z.block + z.size) {
        lua_pop(L, 1);
        return -1;
    }
    for (j = 0; j < 2; j++) {
        size_t off, end = (size_t)(z.block + z.size - (char *)T);
        int n = 0;
        lua_sethook(T, hook, LUA_MASKCOUNT, want[j]);
        for (off = 0; off + 8 <= end; off += 4) {
            int32_t a, b;
            memcpy(&a, (const char *)T + off, 4);
            memcpy(&b, (const char *)T + off + 4, 4);
            if (a == want[j] && b == want[j]) {
                hits[j] = (int)off + 4;
                n++;
            }
        }
        if (n != 1)
            hits[j] = -1;
    }
    lua_sethook(T, NULL, 0, 0);
    lua_pop(L, 1);
    return (hits[0] >= 0 && hits[0] == hits[1]) ? hits[0] : -1;
}

/* Checks shortcut 5 (cg_l54_allocf) on L and a new thread: the same
 * global state, whose first two fields are lua_getallocf's answer, and
 * stay so when the allocator's user data changes. */
static int check_allocf(lua_State *L)
{
    const char *g[2];
    lua_Alloc f, seen;
    void *ud, *seen_ud;
    int ok, j;
    lua_State *T = lua_newthread(L);
    memcpy(&g[0], (const char *)L + CG_L54_G_OFF, sizeof g[0]);
    memcpy(&g[1], (const char *)T + CG_L54_G_OFF, sizeof g[1]);
    lua_pop(L, 1);
    ok = g[0] != NULL && g[0] == g[1] && ((uintptr_t)g[0] & 7) == 0;
    f = lua_getallocf(L, &ud);
    for (j = 0; j < 2 && ok; j++) {
        /* a user data the allocator never sees: only read back */
        lua_setallocf(L, f, j ? ud : (void *)g);
        memcpy(&seen, g[0], sizeof seen);
        memcpy(&seen_ud, g[0] + sizeof seen, sizeof seen_ud);
        ok = seen == f && seen_ud == (j ? ud : (void *)g);
    }
    lua_setallocf(L, f, ud);
    return ok;
}

void cg_l54_probe(lua_State *L, lua_Hook hook, CgL54 *k)
{
    probe_closures(k, L);
    k->hc_off = find_hookcount(L, hook);
    if (check_allocf(L))
        cg_l54_g_ok = 1;
}

/* An entry of the counting interpreter's callgrind_vm_ways (csrc/vm/,
 * ldebug.c): a function's fn, or an offset's or size's value. */
typedef void (*VmFn)(void);
typedef struct VmWay {
    const char *name;
    VmFn fn;
    size_t value;
} VmWay;

/* The counting interpreter's table of ways, a weak reference the dynamic
 * linker binds when it loads the core: NULL in another interpreter (a
 * dlsym that finds nothing cost 5 thousand instructions at every start,
 * one that finds a thousand). */
extern const VmWay callgrind_vm_ways[]
    __attribute__((weak, visibility("default")));

/* The entry of name in ways: at *i first (the table's order is the
 * reader's), else searched; *i moves past it. */
static const VmWay *vm_way(const VmWay *ways, size_t *i, const char *name)
{
    size_t j;
    if (ways[*i].name != NULL && strcmp(ways[*i].name, name) == 0)
        return &ways[(*i)++];
    for (j = 0; ways[j].name != NULL; j++)
        if (strcmp(ways[j].name, name) == 0) {
            *i = j + 1;
            return &ways[j];
        }
    return NULL;
}

/* The function name of the counting interpreter, or NULL. */
static VmFn vm_fn(size_t *i, const char *name)
{
    const VmWay *w = vm_way(callgrind_vm_ways, i, name);
    return w != NULL ? w->fn : NULL;
}

/* an offset or size of the counting interpreter, or -1 */
static int vm_offset(size_t *i, const char *name)
{
    const VmWay *w = vm_way(callgrind_vm_ways, i, name);
    return w != NULL && w->value < 4096 ? (int)w->value : -1;
}

int cg_l54_vm_clock(void)
{
    size_t i = 0;
    return callgrind_vm_ways != NULL
               ? vm_offset(&i, "callgrind_vm_clock_offset") : -1;
}

int cg_l54_vm(CgVm *v)
{
    size_t i = 0;
    if (callgrind_vm_ways == NULL) {
        memset(v, 0, sizeof *v);
        v->savedpc_off = v->tailpc_off = v->tailp_off = -1;
        v->root_off = v->from_off = v->node_size = v->kidtab_size = -1;
        return 0;
    }
#define FN(field, name) \
    v->field = (__typeof__(v->field))vm_fn(&i, "callgrind_vm_" name)
    FN(hook, "hook");
    FN(counts, "counts");
    FN(line, "line");
    v->savedpc_off = vm_offset(&i, "callgrind_vm_savedpc_offset");
    v->tailpc_off = vm_offset(&i, "callgrind_vm_tailpc_offset");
    FN(direct, "direct");
    FN(frame, "frame");
    FN(stacks, "stacks");
    v->node_size = vm_offset(&i, "callgrind_vm_node_size");
    v->kidtab_size = vm_offset(&i, "callgrind_vm_kidtab_size");
    FN(call_of, "call_of");
    FN(close, "close");
    FN(ud, "ud");
    FN(lines, "lines");
    v->root_off = vm_offset(&i, "callgrind_vm_root_offset");
    v->from_off = vm_offset(&i, "callgrind_vm_from_offset");
    FN(onfree, "onfree");
    v->tailp_off = vm_offset(&i, "callgrind_vm_tailp_offset");
#undef FN
    if (v->direct == NULL || v->frame == NULL || v->call_of == NULL
        || v->close == NULL || v->ud == NULL || v->root_off < 0
        || v->from_off < 0 || v->onfree == NULL || v->tailp_off < 0)
        v->direct = NULL;       /* not this way: the profiler's own */
    return v->hook != NULL && v->counts != NULL && v->line != NULL
           && v->savedpc_off >= 0 && v->tailpc_off >= 0;
}

#else /* another Lua: every shortcut off */

int cg_l54_vm(CgVm *v)
{
    memset(v, 0, sizeof *v);
    v->savedpc_off = v->tailpc_off = v->tailp_off = -1;
    return 0;
}

int cg_l54_vm_clock(void)
{
    return -1;
}


void cg_l54_probe(lua_State *L, lua_Hook hook, CgL54 *k)
{
    (void)L;
    (void)hook;
    k->hc_off = k->proto_off = -1;
    k->ci_ok = k->prev_ok = 0;
}

#endif
