--- Derived (inherited) events: the file's `event: NAME = FORMULA` lines,
-- `prof:define`, and the presets of KCachegrind and iai-callgrind.
-- A derived event is a linear combination of base events; once defined,
-- every cost accessor of the core accepts its name.
-- @module callgrind.model.events
local core = require "callgrind.core"
local args = require "callgrind.args"
local internal = core.internal

local Profile = core.methods.Profile

local error, ipairs, pairs, setmetatable = error, ipairs, pairs, setmetatable
local string_format, table_concat = string.format, table.concat

local M = {}

-- Per profile, in its state table: { order = { names }, defs = { name ->
-- info }, warnings = { ... } }.
local STATE = "callgrind.model.events"

local function st(prof)
  local all = internal.state(prof)
  local s = all[STATE]
  if not s then
    s = { order = {}, defs = {}, warnings = {} }
    all[STATE] = s
  end
  return s
end

--- The presets, with their sources.
-- KCachegrind (libviews GlobalConfig::knownFormula); a term whose events the
-- profile lacks is dropped, as KCachegrind's formula parser drops it.
-- iai-callgrind / gungraun (runner metrics; Itamar Turner-Trauring's cycle
-- estimate): every term is needed.
M.presets = {
  { name = "L1m", formula = "I1mr + D1mr + D1mw", long_name = "L1 Miss Sum", source = "KCachegrind" },
  { name = "L2m", formula = "I2mr + D2mr + D2mw", long_name = "L2 Miss Sum", source = "KCachegrind" },
  { name = "LLm", formula = "ILmr + DLmr + DLmw", long_name = "Last-level Miss Sum", source = "KCachegrind" },
  { name = "Bm", formula = "Bim + Bcm", long_name = "Mispredicted Branches", source = "KCachegrind" },
  { name = "CEst", formula = "Ir + 10 Bm + 10 L1m + 20 Ge + 100 L2m + 100 LLm", long_name = "Cycle Estimation",
    source = "KCachegrind", partial = true },
  { name = "L1hits", formula = "Ir + Dr + Dw - I1mr - D1mr - D1mw", long_name = "L1 Hits", source = "iai-callgrind" },
  { name = "LLhits", formula = "I1mr + D1mr + D1mw - ILmr - DLmr - DLmw", long_name = "LL Hits",
    source = "iai-callgrind" },
  { name = "RamHits", formula = "ILmr + DLmr + DLmw", long_name = "RAM Hits", source = "iai-callgrind" },
  { name = "TotalRW", formula = "Ir + Dr + Dw", long_name = "Total reads and writes", source = "iai-callgrind" },
  { name = "EstimatedCycles", formula = "L1hits + 5 LLhits + 35 RamHits", long_name = "Estimated Cycles",
    source = "iai-callgrind" },
}

--- Parses a formula into a list of { coefficient, event name } terms.
-- Grammar: terms joined by `+` or `-`; a term is `NAME`, `N NAME` or
-- `N * NAME` (N a whole number). Names are runs of non-blank characters
-- other than `+` and `*` that do not start with `-` or a digit.
-- @return terms, or nil and a message
-- @usage events.parse_formula("Ir + 10 Bc - 2 * Bi") --> { { 1, "Ir" }, { 10, "Bc" }, { -2, "Bi" } }
function M.parse_formula(formula)
  local terms, pos, n, sign = {}, 1, #formula, 1
  local function skip() pos = formula:find("[^ \t]", pos) or n + 1 end
  local expect_term = true
  skip()
  if pos > n then return nil, "empty formula" end
  while pos <= n do
    if expect_term then
      local coef = 1
      local num = formula:match("^%d+", pos)
      if num and not formula:sub(pos + #num, pos + #num):match("[^ \t%*]") then
        coef = math.tointeger(tonumber(num))
        if not coef then return nil, "coefficient " .. num .. " is too large" end
        pos = pos + #num
        skip()
        if formula:sub(pos, pos) == "*" then
          pos = pos + 1
          skip()
        end
      end
      local name = formula:match("^[^ \t%+%*%-%d][^ \t%+%*]*", pos)
      if not name then
        local rest = formula:sub(pos)
        return nil, rest == "" and "a term ends without an event name"
          or string_format("expected an event name at '%s'", rest)
      end
      terms[#terms + 1] = { sign * coef, name }
      pos = pos + #name
      expect_term = false
    else
      local op = formula:sub(pos, pos)
      if op == "+" then sign = 1
      elseif op == "-" then sign = -1
      else return nil, string_format("expected '+' or '-' at '%s'", formula:sub(pos)) end
      pos = pos + 1
      expect_term = true
    end
    skip()
  end
  if expect_term then return nil, "a term ends without an event name" end
  return terms
end

local function is_base(prof, name)
  for _, e in ipairs(prof.events) do
    if e == name then return true end
  end
  return false
end

-- Expands terms over base events into { base = coefficient }. lookup(name)
-- gives the coefficients of a derived name, or nil and a message.
local function expand(prof, terms, lookup)
  local coefs = {}
  for _, t in ipairs(terms) do
    local c, name = t[1], t[2]
    if is_base(prof, name) then
      coefs[name] = (coefs[name] or 0) + c
    else
      local sub, err = lookup(name)
      if not sub then return nil, err end
      for base, k in pairs(sub) do coefs[base] = (coefs[base] or 0) + c * k end
    end
  end
  return coefs
end

local function register(prof, name, coefs, info)
  local s = st(prof)
  internal.define(prof, name, coefs)
  if not s.defs[name] then s.order[#s.order + 1] = name end
  info.coefs = coefs
  s.defs[name] = info
end

local function derived_lookup(prof)
  return function(name)
    local d = st(prof).defs[name]
    if d then return d.coefs end
    return nil, string_format("unknown event '%s'", name)
  end
end

--- Defines a derived event on this profile.
-- @tparam string name
-- @tparam string formula e.g. `"Ir + 10 L1m"`; may use base events and
--   events defined before
-- @tparam[opt] string long_name
-- @usage prof:define("Mem", "Dr + Dw", "Memory accesses")
function Profile:define(name, formula, long_name)
  args.check_type(name, "string", "define", 1)
  if name == "" then args.fail("define", 1, "event name expected, got ''") end
  args.check_type(formula, "string", "define", 2)
  args.check_type(long_name, "string", "define", 3, true)
  if is_base(self, name) then args.fail("define", 1, string_format("'%s' is a base event", name)) end
  local terms, err = M.parse_formula(formula)
  if not terms then error(string_format("formula '%s' for %s: %s", formula, name, err), 2) end
  for _, t in ipairs(terms) do
    if t[2] == name then
      error(string_format("formula '%s' for %s: %s refers to itself", formula, name, name), 2)
    end
  end
  local coefs
  coefs, err = expand(self, terms, derived_lookup(self))
  if not coefs then error(string_format("formula '%s' for %s: %s", formula, name, err), 2) end
  register(self, name, coefs, { name = name, formula = formula, long_name = long_name, derived = true })
  return self
end

--- What is known of an event.
-- @tparam string name a base or derived event
-- @treturn table `{ name =, long_name =, formula =, derived = }` (formula
--   nil for base events)
-- @usage prof:event_info("L1m").formula  --> "I1mr + D1mr + D1mw"
local info_mt = { __name = "callgrind.EventInfo" }

function info_mt.__tostring(i)
  return i.name .. (i.formula and (" = " .. i.formula) or "") .. (i.long_name and (": " .. i.long_name) or "")
    .. (i.derived and (" (derived" .. (i.preset and (", " .. i.preset .. " preset") or "") .. ")") or " (base)")
end

function Profile:event_info(name)
  args.event(self, name, "event_info", 1)
  if math.type(name) == "integer" then name = self.events[name] end
  local s = st(self)
  local d = s.defs[name]
  if d then
    return setmetatable({ name = name, long_name = d.long_name, formula = d.formula, derived = true,
      preset = d.preset }, info_mt)
  end
  return setmetatable({ name = name, long_name = s.base_long and s.base_long[name], derived = false }, info_mt)
end

--- The derived events defined on this profile, in definition order.
-- @usage for _, e in ipairs(prof:derived_events()) do print(e) end
function Profile:derived_events()
  local out = {}
  for i, n in ipairs(st(self).order) do out[i] = n end
  return out
end

--- Every event: the base ones, then the derived ones.
-- @usage print(table.concat(prof:all_events(), " "))
function Profile:all_events()
  local out = {}
  for i, e in ipairs(self.events) do out[i] = e end
  for _, n in ipairs(st(self).order) do out[#out + 1] = n end
  return out
end

local core_warnings = Profile.warnings
local KINDS = internal.warning_kinds()
--- The core's warnings, then those about the file's event: formulas
-- (kind "formula"); with a kind, only the warnings of that kind.
-- @tparam[opt] string kind "truncated", "skipped", "mismatch", "unknown",
--   "name" or "formula"
-- @usage assert(#prof:warnings("truncated") == 0, "the profile was cut short")
function Profile:warnings(kind)
  if kind ~= nil then args.option(kind, "warnings", 1, KINDS) end
  local w = core_warnings(self, kind)
  if kind == nil or kind == "formula" then
    for _, x in ipairs(st(self).warnings) do w[#w + 1] = x end
  end
  return w
end

-- The file's event: lines: long names of base events, and formulas,
-- resolved together so they may refer to each other in any order. A bad
-- formula or a cycle is a warning (it is input, not misuse).
local function from_file(prof)
  local s = st(prof)
  local defs, formulas = internal.event_defs(prof), {}
  for _, d in ipairs(defs) do
    if d.formula then
      if is_base(prof, d.name) then
        s.warnings[#s.warnings + 1] = string_format("%s:%d: event: %s has a formula but is a base event; "
          .. "formula ignored", prof.name, d.line, d.name)
      else
        formulas[d.name] = d
      end
    elseif d.long_name then
      s.base_long = s.base_long or {}
      s.base_long[d.name] = d.long_name
    end
  end
  local done, busy = {}, {}
  local function resolve(name)
    if done[name] then return done[name] end
    local d = formulas[name]
    if not d then return nil, string_format("unknown event '%s'", name) end
    if busy[name] then return nil, string_format("%s is defined in terms of itself", name) end
    busy[name] = true
    local terms, err = M.parse_formula(d.formula)
    local coefs
    if terms then coefs, err = expand(prof, terms, resolve) end
    busy[name] = nil
    if not coefs then return nil, err end
    done[name] = coefs
    return coefs
  end
  for _, d in ipairs(defs) do
    if formulas[d.name] == d then
      local coefs, err = resolve(d.name)
      if coefs then
        register(prof, d.name, coefs, { name = d.name, formula = d.formula, long_name = d.long_name, derived = true })
      else
        s.warnings[#s.warnings + 1] = string_format("%s:%d: formula '%s' for %s: %s; event not defined",
          prof.name, d.line, d.formula, d.name, err)
      end
    end
  end
end

-- The presets whose events this profile has (and that the file did not
-- define itself).
local function presets(prof)
  local s = st(prof)
  for _, p in ipairs(M.presets) do
    if not s.defs[p.name] and not is_base(prof, p.name) then
      local terms = assert(M.parse_formula(p.formula))
      local kept, missing = {}, false
      for _, t in ipairs(terms) do
        if is_base(prof, t[2]) or s.defs[t[2]] then
          kept[#kept + 1] = t
        else
          missing = true
        end
      end
      -- partial presets (CEst) need Ir and one more term
      local ok
      if p.partial then ok = #kept >= 2 and kept[1][2] == "Ir" else ok = not missing end
      if ok then
        local coefs = assert(expand(prof, kept, derived_lookup(prof)))
        local used = {}
        for _, t in ipairs(kept) do
          used[#used + 1] = (t[1] ~= 1 and (t[1] .. " ") or "") .. t[2]
        end
        register(prof, p.name, coefs, { name = p.name, long_name = p.long_name, derived = true, preset = p.source,
          formula = p.partial and table_concat(used, " + "):gsub("%+ %-", "- ") or p.formula })
      end
    end
  end
end

--- Called on every profile the library loads (callgrind.load/parse): the
-- derived events its file declares (`event:` lines), then the presets its
-- events allow.
-- @usage events.attach(prof) --> prof
function M.attach(prof)
  from_file(prof)
  presets(prof)
  return prof
end

return M
