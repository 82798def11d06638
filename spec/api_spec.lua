-- callgrind.api is the one declaration of the public surface, and every
-- entry keeps the conventions (CONTRIBUTING.md, "Rules a change keeps"):
-- the event positional, write_* takes the path and the same name without
-- write_ returns text, one shape per name, failures with a declared kind,
-- options declared nowhere else, and an example for every entry.
local api = require "callgrind.api"
local EXAMPLES = dofile("tools/api_examples.lua")

-- "prof:write_dot(path [, ev [, opts]])" -> "prof", ":", "write_dot", { "path", "ev", "opts" }
local function parse(sig)
  local owner, sep, name, params = sig:match("^([%w_]+)([.:])([%w_]+)%((.*)%)$")
  if not owner then return nil end
  local list = {}
  for p in params:gsub("{ path, %.%.%. }", "paths"):gmatch("[%w_.]+") do list[#list + 1] = p end
  return owner, sep, name, list
end

local function index_of(list, x)
  for i, v in ipairs(list) do if v == x then return i end end
end

local function each_entry(f)
  for _, o in ipairs(api.objects) do
    for _, e in ipairs(o.entries) do f(o, e) end
  end
end

describe("callgrind.api", function()
  it("declares an example for every entry that is not deprecated, and none for one that is not there", function()
    local missing, known = {}, {}
    each_entry(function(o, e)
      known[o.name .. " " .. e[1]] = true
      local ex = EXAMPLES[o.name]
      if not e.deprecated and (ex == nil or ex[e[1]] == nil) then missing[#missing + 1] = e[1] end
    end)
    assert.are.same({}, missing)
    local stray = {}
    for oname, ex in pairs(EXAMPLES) do
      for sig in pairs(ex) do
        if sig ~= "setup" and not known[oname .. " " .. sig] then stray[#stray + 1] = oname .. " " .. sig end
      end
    end
    assert.are.same({}, stray)
  end)

  it("takes the event as a positional argument wherever it takes one, opts.ev only beside it", function()
    each_entry(function(_, e)
      local _, _, name, params = parse(e[1])
      if not name then return end
      local set = e.opts and api.options[e.opts]
      local has_ev_option = false
      for _, opt in ipairs(set or {}) do if opt[1] == "ev" then has_ev_option = true end end
      if has_ev_option then
        assert.is_not_nil(index_of(params, "ev"), e[1] .. " takes opts.ev but no positional ev")
      end
      local ev = index_of(params, "ev")
      if ev then
        -- before it, only what the call needs: a path, a count, a limit and its target, a file
        for i = 1, ev - 1 do
          assert.is_truthy(({ path = true, n = true, limit = true, target = true, file = true, i = true,
            by = true, fraction = true })[params[i]], e[1] .. ": " .. params[i] .. " before ev")
        end
      end
    end)
  end)

  it("names every method that writes a file write_*, path first, and the same name without write_ returns text",
    function()
    local by = {}
    each_entry(function(o, e)
      local _, _, name = parse(e[1])
      if name then by[o.name .. ":" .. name] = e end
    end)
    local n = 0
    each_entry(function(o, e)
      local _, _, name, params = parse(e[1])
      if not name or e.deprecated then return end
      if name:match("^write_") or name == "write" then
        n = n + 1
        assert.is_truthy(params[1] == "path" or params[1] == "path_or_file", e[1] .. ": the path first")
        assert.are.equal("true?, string?, callgrind.ErrorKind?", e[3], e[1])
        local twin = by[o.name .. ":" .. name:gsub("^write_", "")]
        if twin and name ~= "write" and name ~= "write_file_atomic" then
          assert.are.equal("string", twin[3], twin[1] .. " (the twin of " .. e[1] .. ") returns text")
          local _, _, _, tparams = parse(twin[1])
          assert.are.same({ table.unpack(params, 2) }, tparams,
            twin[1] .. " takes what " .. e[1] .. " takes but the path")
        end
      elseif e[3] and e[3]:find("true?, string?, callgrind.ErrorKind?", 1, true) and not name:match("^check") then
        error(e[1] .. " writes something but is not named write_*")
      end
    end)
    assert.is_true(n >= 7, n .. " writers")
  end)

  it("gives a name one shape: functions is an iterator, report is text", function()
    each_entry(function(_, e)
      local _, _, name = parse(e[1])
      if e.deprecated then return end
      if name == "functions" then assert.matches("^fun%(", e[3], e[1]) end
      if name == "report" then assert.are.equal("string", e[3], e[1]) end
    end)
  end)

  it("declares the kinds every failure can return, each one of the error kinds", function()
    local kinds = {}
    for _, k in ipairs(api.error_kinds) do kinds[k[1]] = true end
    each_entry(function(_, e)
      if e.deprecated then return end
      local fails = e[3] and e[3]:find("callgrind.ErrorKind?", 1, true)
      if fails then
        assert.is_table(e.errors, e[1] .. " returns a kind but declares none")
        for _, k in ipairs(e.errors) do assert.is_true(kinds[k] or false, e[1] .. ": " .. k) end
      else
        assert.is_nil(e.errors, e[1])
      end
    end)
  end)

  it("has every options set in use, each option with a type, a default or none, and a meaning", function()
    local used = { none = true, limits = true }
    each_entry(function(_, e)
      if e.opts then
        assert.is_table(api.options[e.opts], e[1] .. ": options set " .. e.opts)
        used[e.opts] = true
      end
    end)
    for set, list in pairs(api.options) do
      assert.is_true(used[set] or false, "options set " .. set .. " is used by nothing")
      for _, o in ipairs(list) do
        assert.is_string(o[1])
        assert.is_string(o[2])
        assert.is_true(o[3] == false or type(o[3]) == "string", set .. "." .. o[1])
        assert.is_string(o[4])
      end
    end
  end)
end)

describe("the Lua layer", function()
  local function files()
    local p = assert(io.popen("find lua -name '*.lua' | sort"))
    local out = {}
    for path in p:lines() do out[#out + 1] = path end
    p:close()
    return out
  end

  it("declares no options outside callgrind.api: every args.options names a set of it", function()
    local bad = {}
    for _, path in ipairs(files()) do
      local f = assert(io.open(path))
      local text = f:read("a"):gsub("%-%-[^\n]*", "")
      f:close()
      for call in text:gmatch("args%.options(%b())") do
        local set = call:match('^%([^,]+,[^,]+,[^,]+,%s*"([%w_]+)"')
        -- encode.methods hands on the set its callers name (checked below)
        local passed_on = path == "lua/callgrind/encode.lua" and call:match(", spec%)$")
        if not (set and api.options[set]) and not passed_on then
          bad[#bad + 1] = path .. ": args.options" .. call
        end
      end
      for call in text:gmatch("encode%.methods(%b())") do
        local set = call:match(',%s*"([%w_]+)"%)$')
        if set and not api.options[set] then bad[#bad + 1] = path .. ": encode.methods" .. call end
      end
      -- an options table of types, as modules declared them before
      if path ~= "lua/callgrind/api.lua" then
        for tbl in text:gmatch("%b{}") do
          if tbl:match('^{%s*[%w_]+%s*=%s*"boolean"') or tbl:match('^{%s*[%w_]+%s*=%s*"number"') then
            bad[#bad + 1] = path .. ": " .. tbl:sub(1, 60)
          end
        end
      end
    end
    assert.are.same({}, bad)
  end)
end)

describe("the C core", function()
  it("reads exactly the load options callgrind.api declares (but the Lua layer's own), and declares none itself",
    function()
    local f = assert(io.open("csrc/binding/cg_lua_load.c"))
    local text = f:read("a")
    f:close()
    local read = {}
    for name in text:gmatch('lua_getfield%(L, arg, "([%w_]+)"%)') do read[name] = true end
    local declared = {}
    for _, o in ipairs(api.options.load) do
      if not o.lua then declared[o[1]] = true end
    end
    assert.are.same(declared, read)
    assert.is_nil(text:find("static const char %*const [%w_]*options"))
  end)
end)
