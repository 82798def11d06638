--- Argument checks for the Lua layer's public methods: one place that
-- words "bad argument #N to 'name' (...)", so every error names the
-- method the user called and the argument that is wrong.
-- Each check is called by a public method and raises at the caller of that
-- method; `level` (default 2) counts from the check's caller, for a check
-- made through a helper of the method.
-- @module callgrind.args
local core = require "callgrind.core"
local internal = core.internal

local error, getmetatable, ipairs, math_type, pairs, tostring, type =
  error, getmetatable, ipairs, math.type, pairs, tostring, type
local string_format = string.format

local M = {}

--- True at the REPL (set by `require "callgrind"` at the prompt or with
-- `-lcallgrind ... -i`), unless `CALLGRIND_TRACEBACK` is set: then an error
-- of the library is an object whose `tostring` is its message, which
-- lua.c's REPL prints as one line, without a traceback (lua.c appends one
-- to a string error only). The object keeps the traceback (`e.traceback`)
-- and answers the string methods (`e:find(...)`).
M.repl = false

local error_mt = { __name = "callgrind.Error" }
error_mt.__tostring = function(e) return e.message end
error_mt.__concat = function(a, b) return tostring(a) .. tostring(b) end
error_mt.__index = function(e, k)
  local f = string[k]
  if f then return function(self, ...) return f(self == e and e.message or self, ...) end end
end

--- Raises msg at level (as `error(msg, level)`, counted from the caller of
-- raise): a string, or at the REPL (`args.repl`) an error object that
-- prints as one line, with the position error() would give.
-- @usage args.raise("top: the profile has no events", 2)
function M.raise(msg, level)
  level = (level or 1) + 1
  if not M.repl then error(msg, level) end
  local info = level > 1 and debug.getinfo(level, "Sl")
  local where = info and info.currentline > 0 and (info.short_src .. ":" .. info.currentline .. ": ") or ""
  error(setmetatable({ message = where .. msg, traceback = debug.traceback(where .. msg, level) }, error_mt), 0)
end

--- Raises "bad argument #n to 'fname' (msg)".
-- @usage args.fail("top", 1, "count must not be negative")
function M.fail(fname, n, msg, level)
  M.raise(string_format("bad argument #%d to '%s' (%s)", n, fname, msg), (level or 2) + 1)
end

--- Levenshtein distance between a and b, or nil when it is over max.
-- @usage args.distance("fnuc", "func", 2) --> 2
function M.distance(a, b, max)
  if math.abs(#a - #b) > max then return nil end
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur, best = { [0] = i }, i
    local ca = a:byte(i)
    for j = 1, #b do
      local v = prev[j - 1] + (ca == b:byte(j) and 0 or 1)
      if prev[j] + 1 < v then v = prev[j] + 1 end
      if cur[j - 1] + 1 < v then v = cur[j - 1] + 1 end
      cur[j] = v
      if v < best then best = v end
    end
    if best > max then return nil end
    prev = cur
  end
  return prev[#b] <= max and prev[#b] or nil
end

--- The names of a list closest to name: within an edit distance of a third
-- of its length (at least 2; a swap of two letters counts 2), or containing
-- it, or the same but for case; nearest first, at most n (default 3).
-- @usage args.closest("fnuc", { "func", "functions", "total" }) --> { "func" }
function M.closest(name, list, n)
  local max, lname = math.max(2, #name // 3), name:lower()
  local scored, seen = {}, {}
  for _, other in ipairs(list) do
    if not seen[other] and other ~= name then
      seen[other] = true
      local d = M.distance(lname, other:lower(), max)
      if not d and #name >= 3 and other:find(name, 1, true) then d = max + 1 end
      if d then scored[#scored + 1] = { name = other, d = d } end
    end
  end
  table.sort(scored, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    return a.name < b.name
  end)
  local out = {}
  for i = 1, math.min(n or 3, #scored) do out[i] = scored[i].name end
  return out
end

-- The names an object declares (callgrind.api's entries): name -> how
-- examples write it ("prof:func", "fn.name"), per object name.
local declared = {}
--- The names callgrind.api declares for an object (by its name): name ->
-- how examples write it.
-- @usage args.declared("Function").name --> "fn.name"
local function declared_names(class)
  local d = declared[class]
  if d then return d end
  d = {}
  for _, o in ipairs(require("callgrind.api").objects) do
    if o.name == class then
      for _, e in ipairs(o.entries) do
        local var, sep, name, call = e[1]:match("^([%w_]+)([.:])([%w_]+)(%(?)")
        if name then d[name] = var .. sep .. name .. (call == "(" and "()" or "") end
      end
    end
  end
  declared[class] = d
  return d
end
M.declared = declared_names

--- Raises the error of a field or method an object does not have: what it
-- is, the closest names it has (methods, and fields of callgrind.api and
-- of `extra`), and where the list is. `level` as error()'s, counted from
-- the caller of unknown.
-- @usage args.unknown(prof, "Profile", "fnuc", callgrind.methods.Profile)
function M.unknown(obj, class, key, methods, extra, level)
  local d = declared_names(class)
  local names, shown = {}, {}
  for k, how in pairs(d) do names[#names + 1] = k; shown[k] = how end
  for k in pairs(methods or {}) do
    if type(k) == "string" and not shown[k] then names[#names + 1] = k; shown[k] = k .. "()" end
  end
  for k in pairs(extra or {}) do
    if type(k) == "string" and not shown[k] then names[#names + 1] = k; shown[k] = k end
  end
  table.sort(names)
  local close = M.closest(key, names)
  for i, k in ipairs(close) do close[i] = shown[k] end
  local what = class == "callgrind" and "the module callgrind"
    or ((class:match("^[AEIOU]") and "an " or "a ") .. class)
  M.raise(string_format("%s has no field or method %s%s (callgrind.help(%s) lists them)", what, M.show(key),
    #close > 0 and ("; did you mean " .. table.concat(close, ", ") .. "?") or "",
    class == "callgrind" and "callgrind" or string_format("%q", class)), (level or 1) + 1)
  return obj
end

local probing = false
local function index(x, k) return x[k] end

--- x[k], or nil where the field does not exist (instead of the error a
-- user gets): for code that asks what an object is (`args.probe(x,
-- "profile") ~= nil`). Any other error is raised again.
-- @usage args.probe(prof, "profile") --> nil
function M.probe(x, k)
  local was = probing
  probing = true
  local ok, v = pcall(index, x, k)
  probing = was
  if not ok then error(v, 0) end
  return v
end

--- True while args.probe asks: an unknown name then gives nil.
-- @usage if args.probing() then return nil end
function M.probing() return probing end

--- Makes a Lua object's metatable strict: a string key that is neither a
-- method (in `methods`), a field callgrind.api declares for `class`, nor
-- one of `fields` (raw fields that may be nil, as `{ source = true }`)
-- raises args.unknown instead of giving nil. Other keys (an index past
-- the end) give nil.
-- @usage args.strict(selection_mt, Selection, "Selection")
function M.strict(mt, methods, class, fields)
  fields = fields or {}
  mt.__index = function(obj, k)
    local v = methods[k]
    if v ~= nil or type(k) ~= "string" or fields[k] or probing or declared_names(class)[k] then return v end
    M.unknown(obj, class, k, methods, nil, 2)
  end
  return mt
end

--- Checks that ev names an event (base or derived) or is an index into
-- `prof.events`; the error lists the events there are. A kind given where
-- an event goes ("inclusive", "self") says so.
-- @return the event's name (an index becomes the name it stands for, so
--   every output names the event)
-- @usage args.event(prof, ev, "top", 2)
function M.event(prof, ev, fname, n, level)
  local problem = internal.event_problem(prof, ev)
  if problem then
    if ev == "inclusive" or ev == "self" then
      problem = string_format("'%s' is a kind, not an event: the event comes first, as in %s(..., \"Ir\", \"%s\"); %s",
        ev, fname, ev, problem:match("events: .*$"))
    end
    M.fail(fname, n, problem, (level or 2) + 1)
  end
  if math_type(ev) == "integer" then return prof.events[ev] end
  return ev
end

--- The event, or the profile's first one when ev is nil.
-- @usage ev = args.event_or_first(prof, ev, "top", 2)
function M.event_or_first(prof, ev, fname, n, level)
  if ev == nil then
    ev = prof.events[1]
    if ev == nil then M.raise(string_format("%s: the profile has no events", fname), (level or 2) + 1) end
    return ev
  end
  ev = M.event(prof, ev, fname, n, (level or 2) + 1)  -- not a tail call: the level counts this frame
  return ev
end

--- "self" (the default) or "inclusive".
-- @usage kind = args.kind(kind, "top", 3)
function M.kind(kind, fname, n, level)
  if kind == nil or kind == "self" then return "self" end
  if kind == "inclusive" then return kind end
  M.fail(fname, n, string_format("expected \"self\" or \"inclusive\", got %s", M.show(kind)), (level or 2) + 1)
end

--- A whole number >= 0 (a float with an integral value is accepted).
-- @return it as an integer
-- @usage n = args.count(n, "top", 1)
function M.count(v, fname, n, level)
  local i = math_type(v) == "float" and math.tointeger(v) or v
  if math_type(i) ~= "integer" then
    M.fail(fname, n, type(v) == "number" and string_format("count must be a whole number, got %s", tostring(v))
      or string_format("number expected, got %s", M.show(v)), (level or 2) + 1)
  end
  if i < 0 then M.fail(fname, n, string_format("count must not be negative, got %d", i), (level or 2) + 1) end
  return i
end

--- A value of the given Lua type (or nil when optional is true).
-- @usage args.check_type(opts, "table", "tree", 1, true)
function M.check_type(v, tname, fname, n, optional, level)
  if type(v) == tname or (optional and v == nil) then return v end
  M.fail(fname, n, string_format("%s expected, got %s", tname, M.show(v)), (level or 2) + 1)
end

--- A loaded Profile.
-- @return prof
-- @usage args.profile(old, "diff", 1)
function M.profile(v, fname, n, level)
  local mt = getmetatable(v)
  if type(v) ~= "userdata" or type(mt) ~= "table" or mt.__name ~= "callgrind.Profile" then
    M.fail(fname, n, string_format("Profile expected, got %s", M.show(v)), (level or 2) + 1)
  end
  return v
end

--- A Function handle (of prof, when prof is given).
-- @return fn
-- @usage args.func(fn, "calls_at_most", 2)
function M.func(v, fname, n, prof, level)
  local mt = getmetatable(v)
  if type(v) ~= "userdata" or type(mt) ~= "table" or mt.__name ~= "callgrind.Function" then
    M.fail(fname, n, string_format("Function expected, got %s", M.show(v)), (level or 2) + 1)
  end
  if prof ~= nil and v.profile ~= prof then
    M.fail(fname, n, "a Function of another profile", (level or 2) + 1)
  end
  return v
end

--- An array of prof's Functions (a Selection, or a plain array); `what`
-- names it in the message (default "functions").
-- @return the array
-- @usage args.functions(opts.functions, prof, "write", 2, "opts.functions")
function M.functions(v, prof, fname, n, what, level)
  level = (level or 2) + 1
  what = what or "functions"
  if type(v) ~= "table" then
    M.fail(fname, n, string_format("%s must be a Selection or an array of functions, got %s", what, M.show(v)), level)
  end
  for i, fn in ipairs(v) do
    local mt = getmetatable(fn)
    if type(fn) ~= "userdata" or type(mt) ~= "table" or mt.__name ~= "callgrind.Function" or fn.profile ~= prof then
      M.fail(fname, n, string_format("%s[%d] is not a function of this profile", what, i), level)
    end
  end
  return v
end

--- A short description of a value for messages: strings quoted, others
-- by type.
-- @usage args.show("x") --> "'x'"
function M.show(v)
  if type(v) == "string" then return "'" .. v .. "'" end
  if type(v) == "number" or type(v) == "boolean" then return tostring(v) end
  return type(v) == "nil" and "no value" or type(v)
end

--- Checks an options table (nil is an empty one): every key must be one of
-- `spec`'s, and each value of the type spec names ("number", "string",
-- "boolean", "table", "function", or "any"; several joined by "|"). An
-- unknown key raises "bad argument #n to 'fname' (unknown option 'dept';
-- options: depth, direction, ev, threshold)", the options sorted.
-- @tparam string spec the name of an options set of callgrind.api
-- @return opts, or a new empty table when opts is nil
-- @usage opts = args.options(opts, "tree", 2, "tree")
function M.options(opts, fname, n, spec, level)
  level = (level or 2) + 1
  if opts == nil then return {} end
  -- callgrind.api only when asked: it is the largest module to parse, and
  -- `-lcallgrind.start` never needs it
  if type(spec) == "string" then spec = require("callgrind.api").option_types(spec) end
  if type(opts) ~= "table" then
    M.fail(fname, n, string_format("table expected, got %s", M.show(opts)), level)
  end
  for k, v in pairs(opts) do
    local want = type(k) == "string" and spec[k]
    if not want then
      local names = {}
      for name in pairs(spec) do names[#names + 1] = name end
      table.sort(names)
      M.fail(fname, n, string_format("unknown option %s; options: %s", M.show(k),
        #names > 0 and table.concat(names, ", ") or "none"), level)
    end
    if want ~= "any" and not ("|" .. want .. "|"):find("|" .. type(v) .. "|", 1, true) then
      M.fail(fname, n, string_format("option '%s' must be %s, got %s", k,
        (want:gsub("|", " or ")), M.show(v)), level)
    end
  end
  return opts
end

--- One of a list of strings, in the manner of luaL_checkoption; `def` is
-- taken when v is nil (and def is given).
-- @usage direction = args.option(direction, "tree", 1, { "callees", "callers" }, "callees")
function M.option(v, fname, n, list, def, level)
  if v == nil and def ~= nil then return def end
  for _, s in ipairs(list) do
    if v == s then return v end
  end
  M.fail(fname, n, string_format("invalid option %s; expected one of: %s", M.show(v),
    table.concat(list, ", ")), (level or 2) + 1)
end

return M
