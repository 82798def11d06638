/* libFuzzer target for the Lua binding: a fresh Lua 5.4 state per input
 * opens callgrind.core (linked in, not loaded from a .so), parses the input
 * strictly and leniently, touches every handle, field, method and
 * __tostring, collects garbage while handles and iterators are alive,
 * closes the profile and checks that every handle then raises. Any Lua
 * error the script did not expect aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int luaopen_callgrind_core(lua_State *L);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The script, in pieces: C99 promises string literals of 4095 bytes. */
static const char *const SCRIPT[] = {
    "local core, data = ...\n"
    "local I = core.internal\n"
    "local CLOSED = 'attempt to use a closed profile'\n"
    "local function str(h)\n"
    "  local s = tostring(h)\n"
    "  assert(type(s) == 'string' and #s > 0)\n"
    "  return s\n"
    "end\n"
    "local function raises(f, ...)\n"
    "  local ok, err = pcall(f, ...)\n"
    "  assert(not ok, 'expected an error')\n"
    "  assert(tostring(err):find(CLOSED, 1, true), tostring(err))\n"
    "end\n"
    "local function closed(h, tname)\n"
    "  assert(tostring(h) == tname .. ' (closed profile)', tostring(h))\n"
    "end\n"
    "local function pos(v) assert(v == nil or math.type(v) == 'integer') end\n",
    "\n"
    "local function walk(prof)\n"
    "  str(prof)\n"
    "  assert(prof.name == 'f')\n"
    "  assert(prof.version == 0 or prof.version == 1)\n"
    "  local _ = prof.creator, prof.cmd, prof.pid, prof.nothing\n"
    "  local events = prof.events\n"
    "  -- Tables of all events per line or call cost O(events) each; with\n"
    "  -- thousands of events, check the first few one by one.\n"
    "  local full, ne = #events <= 32, math.min(#events, 8)\n"
    "  local totals = prof:totals()\n"
    "  for i, ev in ipairs(events) do\n"
    "    assert(prof:total(ev) == totals[ev] and prof:total(i) == totals[ev])\n"
    "  end\n"
    "  assert(not pcall(prof.total, prof, #events + 1))\n"
    "  for _, w in ipairs(prof:warnings()) do\n"
    "    assert(type(w) == 'string' and w:sub(1, 2) == 'f:', w)\n"
    "  end\n"
    "  local nparts = 0\n"
    "  for part in prof:parts() do\n"
    "    nparts = nparts + 1\n"
    "    assert(part.index == nparts)\n"
    "    str(part)\n"
    "    for k, v in pairs(part.desc) do\n"
    "      assert(type(k) == 'string' and type(v) == 'string')\n"
    "    end\n"
    "    if full or nparts <= 8 then\n"
    "      for _, ev in ipairs(part.events) do assert(totals[ev]) end\n"
    "    end\n"
    "    local _ = part.summary, part.totals, part.cmd, part.pid, part.thread\n"
    "  end\n"
    "  assert(nparts >= 1)\n"
    "  local fns, n = {}, 0\n"
    "  for fn in prof:functions() do\n"
    "    n = n + 1\n"
    "    fns[n] = fn\n"
    "    assert(fn.index == n and type(fn.name) == 'string')\n"
    "    str(fn)\n"
    "    local sum = {}\n"
    "    for line in fn:lines() do\n"
    "      str(line)\n"
    "      assert(line.fn == fn)\n"
    "      pos(line.line) pos(line.addr)\n"
    "      local _ = line.file, line.part.index\n"
    "      if full then\n"
    "        local c = line:cost()\n"
    "        for i, ev in ipairs(events) do assert(c[ev] == line:cost(i)) end\n"
    "      end\n"
    "      for i = 1, ne do sum[i] = (sum[i] or 0) + line:cost(i) end\n"
    "    end\n"
    "    local self = full and fn:self()\n"
    "    for i = 1, ne do\n"
    "      local ev = events[i]\n"
    "      assert((sum[i] or 0) == fn:self(i), 'self cost != sum of lines')\n"
    "      assert(fn:self(ev) == fn:self(i))\n"
    "      assert(not self or self[ev] == fn:self(i))\n"
    "    end\n"
    "    for call in fn:calls() do\n"
    "      str(call)\n"
    "      assert(call.caller == fn and call == call)\n"
    "      local _ = call.callee.name, call.count, call.file, call.part.index\n"
    "      pos(call.line) pos(call.addr) pos(call.target_line)\n"
    "      pos(call.target_addr)\n"
    "      local c = full and call:cost()\n"
    "      for i = 1, ne do\n"
    "        local v = call:cost(i)\n"
    "        assert(call:cost(events[i]) == v and (not c or c[events[i]] == v))\n"
    "      end\n"
    "    end\n"
    "    local first = fn:calls()()\n"
    "    for call in fn:callers() do\n"
    "      str(call)\n"
    "      assert(call.callee == fn)\n"
    "    end\n"
    "    -- two handles of one call are equal (__eq), of two calls not\n"
    "    if first then\n"
    "      assert(fn:calls()() == first)\n"
    "      local other = prof:calls()()\n"
    "      assert((other == first) == (other.index == first.index))\n"
    "    end\n"
    "    for jump in fn:jumps() do\n"
    "      str(jump)\n"
    "      assert(jump.from == fn)\n"
    "      local _ = jump.to.name, jump.file, jump.target_file, jump.part.index\n"
    "      pos(jump.line) pos(jump.addr) pos(jump.target_line)\n"
    "      pos(jump.target_addr)\n"
    "      assert(type(jump.conditional) == 'boolean')\n"
    "      assert(math.type(jump.count) == 'integer')\n"
    "      assert(math.type(jump.executed) == 'integer')\n"
    "    end\n"
    "    -- prof:func scans all functions: a sample keeps this linear\n"
    "    if n <= 64 then\n"
    "      local found, err = prof:func(fn.name, fn.file, fn.object)\n"
    "      if fn.file ~= nil and fn.object ~= nil then\n"
    "        assert(found == fn, err)\n"
    "      else\n"
    "        assert(found == fn or err:find('^ambiguous: '), err)\n"
    "      end\n"
    "      local _ = prof:func(fn.name)\n"
    "    end\n"
    "  end\n"
    "  local _ = prof:func('no such function in here\\0')\n",
    "  -- the call graph and the sums the Lua layer builds on (the core's\n"
    "  -- internal table: only a sum past 64 bits may raise)\n"
    "  if #events > 0 then\n"
    "    local ok, err = pcall(function()\n"
    "      local comp, cyclic = I.components(prof)\n"
    "      local a, b = I.ab_all(prof, 1)\n"
    "      assert(#comp == n and #a == n and #b == n)\n"
    "      for i = 1, n do assert(cyclic[comp[i]] ~= nil) end\n"
    "      if n > 0 then\n"
    "        local fa, fb = I.ab(I.function_at(prof, 1), #events)\n"
    "        assert(math.type(fa) == 'integer' and math.type(fb) == 'integer')\n"
    "      end\n"
    "      assert(#I.self_all(prof, 1) == n)\n"
    "      I.event_defs(prof)\n"
    "      for file in pairs(I.file_costs(prof, 1)) do\n"
    "        if file then I.annotate(prof, file, 1) end\n"
    "        break\n"
    "      end\n"
    "      -- a derived event: 2 x the first event - the last\n"
    "      local k = { [events[1]] = 2 }\n"
    "      if #events > 1 then k[events[#events]] = -1 end\n"
    "      I.define(prof, 'fuzz derived', k)\n"
    "      local d = prof:total('fuzz derived')\n"
    "      assert(math.type(d) == 'integer')\n"
    "      if n > 0 then I.function_at(prof, 1):self('fuzz derived') end\n"
    "      for line in prof:lines() do line:cost('fuzz derived') break end\n"
    "      for call in prof:calls() do call:cost('fuzz derived') break end\n"
    "      I.ab_all(prof, 'fuzz derived')\n"
    "    end)\n"
    "    if not ok then\n"
    "      assert(tostring(err):find('does not fit in 64 bits', 1, true), err)\n"
    "    end\n"
    "  end\n",
    "  -- iterators and handles survive a full collection mid-walk\n"
    "  local lines, calls, jumps = prof:lines(), prof:calls(), prof:jumps()\n"
    "  local first = lines()\n"
    "  fns = nil\n"
    "  collectgarbage()\n"
    "  collectgarbage()\n"
    "  if first then str(first) end\n"
    "  local nl = first and 1 or 0\n"
    "  for line in lines do nl = nl + 1 str(line) end\n"
    "  for call in calls do str(call) end\n"
    "  for jump in jumps do str(jump) end\n"
    "  local nc = 0\n"
    "  for _ in prof:calls() do nc = nc + 1 end\n"
    "  local mem, len = prof:memory()\n"
    "  assert(mem > 0 and len == #data)\n"
    "  return first\n"
    "end\n",
    "\n"
    "for _, lenient in ipairs({ false, true }) do\n"
    "  local prof, err = core.parse(data, 'f', { lenient = lenient })\n"
    "  if not prof then\n"
    "    -- NAME:LINE: message, or NAME: message when about no one line\n"
    "    assert(type(err) == 'string' and err:find('^f:%d*:? '), err)\n"
    "  else\n"
    "    local line = walk(prof)\n"
    "    local fn = prof:functions()()\n"
    "    local call, jump = prof:calls()(), prof:jumps()()\n"
    "    local iter = prof:lines()\n"
    "    collectgarbage()\n"
    "    prof:close()\n"
    "    prof:close()\n"
    "    assert(str(prof) == 'callgrind.Profile (closed)')\n"
    "    raises(prof.totals, prof)\n"
    "    raises(prof.warnings, prof)\n"
    "    raises(prof.functions, prof)\n"
    "    raises(function() return prof.events end)\n"
    "    raises(iter)\n"
    "    if fn then\n"
    "      raises(fn.self, fn)\n"
    "      closed(fn, 'callgrind.Function')\n"
    "      raises(function() return fn.name end)\n"
    "      raises(fn.lines, fn)\n"
    "    end\n"
    "    if line then raises(line.cost, line) closed(line, 'callgrind.CostLine') end\n"
    "    if call then raises(call.cost, call) closed(call, 'callgrind.Call') end\n"
    "    if jump then closed(jump, 'callgrind.Jump') end\n"
    "  end\n"
    "end\n",
    NULL
};

/* lua_Reader over SCRIPT: one piece a call. */
static const char *read_script(lua_State *L, void *ud, size_t *size)
{
    size_t *next = (size_t *)ud;
    const char *piece = SCRIPT[*next];
    (void)L;
    if (!piece)
        return NULL;
    (*next)++;
    *size = strlen(piece);
    return piece;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    lua_State *L = luaL_newstate();
    size_t next = 0;
    if (!L)
        return 0;
    luaL_openlibs(L);
    if (lua_load(L, read_script, &next, "=fuzz_lua", "t") != LUA_OK) {
        fprintf(stderr, "fuzz_lua: script: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_pushcfunction(L, luaopen_callgrind_core);
    lua_call(L, 0, 1);
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        fprintf(stderr, "fuzz_lua: unexpected Lua error: %s\n",
                lua_tostring(L, -1));
        abort();
    }
    lua_close(L);
    return 0;
}
