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

--- Raises "bad argument #n to 'fname' (msg)".
-- @usage args.fail("top", 1, "count must not be negative")
function M.fail(fname, n, msg, level)
  error(string_format("bad argument #%d to '%s' (%s)", n, fname, msg), (level or 2) + 1)
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
    if ev == nil then error(string_format("%s: the profile has no events", fname), (level or 2) + 1) end
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
