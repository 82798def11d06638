--- A record of every check: with `CALLGRIND_RECORD=path` in the
-- environment, every check and assertion (passed or failed) appends one
-- JSON object per line to that file, and `callgrind.report_summary(path
-- [, format])` renders the lines as a text table or as Markdown.
--
-- The fields of a line (absent when they do not apply):
--
--  * `check`: the check called (`"cost_at_most"`, `"calls_at_most"`,
--    `"no_regression"`, `"within_baseline"`);
--  * `name`: the baseline's name (within_baseline), else the check's;
--  * `target`: what was measured: `"total"`, a function's name, or
--    `"N functions"` (a Selection);
--  * `event`, `kind` (`"inclusive"`, `"self"`, `"total"`, `"calls"`);
--  * `old` (the reference value of a comparison), `new` (the value
--    measured), `limit` (as given: a number or `"5%"`), `diff_pct` (the
--    change in percent, when there is an old value other than 0);
--  * `status`: `"pass"`, `"fail"` or `"improved"` (beyond a relative
--    limit, passed); `message` for a failure with no numbers (lost data,
--    a missing baseline or function);
--  * `profile` (the file measured), `old_profile` (the reference file);
--  * `where`: the caller's `file:line` (the spec's line).
--
-- Each line is written with one `write(2)` on a descriptor opened with
-- `O_APPEND`, so the lines of several processes (busted runs in parallel)
-- never interleave.
-- @module callgrind.check.record
local args = require "callgrind.args"
local encode = require "callgrind.encode"
local util = require "callgrind.util"

local error, ipairs, math_type, pairs, tostring, type = error, ipairs, math.type, pairs, tostring, type
local string_format, table_concat = string.format, table.concat

local M = {}

--- The order of the fields in a line (the keys of a record are written in
-- this order, so a line is the same bytes for the same record).
M.fields = { "check", "name", "target", "event", "kind", "old", "new", "limit", "diff_pct", "status", "message",
  "profile", "old_profile", "where" }

-- strings: the library's one JSON escaping (valid UTF-8 whatever the bytes)
local json_string = encode.json_string

local function json_value(v)
  local t = type(v)
  if t == "string" then return json_string(v) end
  if t == "boolean" then return tostring(v) end
  if math_type(v) == "integer" then return string_format("%d", v) end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string_format("%d", v) end
    return string_format("%.17g", v)
  end
  return "null"
end

--- One record as a line of JSON (fields in `M.fields` order, nil fields
-- left out), ending with a newline.
-- @usage record.encode({ check = "cost_at_most", new = 5, status = "pass" })
function M.encode(rec)
  local parts = {}
  for _, k in ipairs(M.fields) do
    if rec[k] ~= nil then parts[#parts + 1] = json_string(k) .. ":" .. json_value(rec[k]) end
  end
  return "{" .. table_concat(parts, ",") .. "}\n"
end

-- Decodes one flat JSON object (strings, numbers, true/false/null); nil
-- and the position of the problem when the line is none.
local UNESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
local function decode(line)
  local pos = 1
  local function ws() pos = line:find("[^ \t\r\n]", pos) or #line + 1 end
  local function str()
    if line:sub(pos, pos) ~= '"' then return nil end
    local out, i = {}, pos + 1
    while true do
      local c = line:sub(i, i)
      if c == "" then return nil end
      if c == '"' then break end
      if c == "\\" then
        local e = line:sub(i + 1, i + 1)
        if e == "u" then
          local hex = line:match("^%x%x%x%x", i + 2)
          if not hex then return nil end
          out[#out + 1] = utf8.char(tonumber(hex, 16))
          i = i + 6
        elseif UNESC[e] then
          out[#out + 1] = UNESC[e]
          i = i + 2
        else
          return nil
        end
      else
        out[#out + 1] = c
        i = i + 1
      end
    end
    pos = i + 1
    return table_concat(out)
  end
  local function value()
    local c = line:sub(pos, pos)
    if c == '"' then return str() end
    for word, v in pairs({ ["true"] = true, ["false"] = false, null = args }) do
      if line:sub(pos, pos + #word - 1) == word then
        pos = pos + #word
        return v
      end
    end
    local num = line:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if num and tonumber(num) then
      pos = pos + #num
      return tonumber(num)
    end
    return nil
  end
  local obj = {}
  ws()
  if line:sub(pos, pos) ~= "{" then return nil, pos end
  pos = pos + 1
  ws()
  if line:sub(pos, pos) == "}" then return obj end
  while true do
    ws()
    local k = str()
    if not k then return nil, pos end
    ws()
    if line:sub(pos, pos) ~= ":" then return nil, pos end
    pos = pos + 1
    ws()
    local v = value()
    if v == nil then return nil, pos end
    if v ~= args then obj[k] = v end  -- `args` stands for null
    ws()
    local c = line:sub(pos, pos)
    pos = pos + 1
    if c == "}" then break end
    if c ~= "," then return nil, pos - 1 end
  end
  ws()
  if pos <= #line then return nil, pos end
  return obj
end

--- The file records go to: `$CALLGRIND_RECORD` (or `$CALLGRIND_REPORT`), or nil.
-- @usage if record.path() then print("recording checks") end
function M.path()
  -- CALLGRIND_REPORT: its name before 0.2.0, kept one release
  local p = os.getenv("CALLGRIND_RECORD") or os.getenv("CALLGRIND_REPORT")
  if p == nil or p == "" then return nil end
  return p
end

--- Appends a record to `$CALLGRIND_RECORD` (nothing when it is not set).
-- A record that cannot be written raises: a CI job that asked for the
-- record must not lose it silently.
-- @usage record.add({ check = "cost_at_most", new = 5, limit = 10, status = "pass" })
function M.add(rec)
  local path = M.path()
  if not path then return end
  local ok, err = require("callgrind.core").internal.append(path, M.encode(rec))
  if not ok then error("CALLGRIND_RECORD: cannot append the check's record: " .. err, 0) end
end

--- Reads a record file: an array of records and an array of the lines
-- that are none ("path:LINE: not a JSON object (at column N)": a line cut
-- by a crash, or written by something else), or nil, "path: reason", "io".
-- Every whole line is kept.
-- @usage local recs, damaged = assert(record.read("checks.jsonl"))
function M.read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err, "io" end
  local out, damaged, n = {}, {}, 0
  for line in f:lines() do
    n = n + 1
    if line:find("%S") then
      local rec, at = decode(line)
      if rec then
        out[#out + 1] = rec
      else
        damaged[#damaged + 1] = string_format("%s:%d: not a JSON object (at column %d), left out", path, n, at)
      end
    end
  end
  f:close()
  return out, damaged
end

local function commas(v)
  if type(v) ~= "number" then return v == nil and "" or tostring(v) end
  return require("callgrind.model.report").commas(v)
end

local function pct(v)
  if type(v) ~= "number" then return "" end
  return string_format("%+.1f%%", v)
end

local function limit_text(v)
  if type(v) == "number" then return commas(v) end
  return v == nil and "" or tostring(v)
end

local COLUMNS = { "status", "check", "name", "target", "event", "old", "new", "change", "limit", "where" }

-- The cells of one record.
local function cells(r)
  local name = r.name ~= r.check and r.name or ""
  local target = r.target or ""
  if r.kind and r.kind ~= "total" and r.kind ~= "calls" then target = target .. " (" .. r.kind .. ")" end
  return { r.status or "", r.check or "", name or "", target, r.event or "", commas(r.old), commas(r.new),
    pct(r.diff_pct), limit_text(r.limit), r.where or r.profile or "" }
end

local function counts(recs)
  local c = { pass = 0, fail = 0, improved = 0 }
  for _, r in ipairs(recs) do c[r.status] = (c[r.status] or 0) + 1 end
  return string_format("%d check%s: %d passed, %d failed, %d improved beyond a limit", #recs,
    #recs == 1 and "" or "s", c.pass, c.fail, c.improved)
end

--- Renders a record file (`CALLGRIND_RECORD`'s) as a table: one row per
-- check with its status, check, name, target, event, old, new, change,
-- limit and where it was called, then the counts. Failures' messages
-- follow the table.
-- @tparam string path
-- @tparam[opt] string format `"text"` (default, aligned columns) or
--   `"markdown"` (a table for a CI job summary, e.g. `>>
--   $GITHUB_STEP_SUMMARY`)
-- @return the text, or nil, a message and a kind (`"io"`, `"format"`)
-- @usage print(callgrind.report_summary("checks.jsonl", "markdown"))
function M.summary(path, format)
  args.check_type(path, "string", "report_summary", 1)
  format = args.option(format, "report_summary", 2, { "text", "markdown" }, "text")
  local recs, damaged, kind = M.read(path)
  if not recs then return nil, damaged, kind end
  local rows = { COLUMNS }
  for _, r in ipairs(recs) do
    local row = cells(r)
    if format == "text" then
      for j, c in ipairs(row) do row[j] = util.printable(c) end
    end
    rows[#rows + 1] = row
  end
  local notes = {}
  for _, r in ipairs(recs) do
    if r.status == "fail" and r.message then
      local what = r.name ~= r.check and r.name or r.target
      notes[#notes + 1] = string_format("%s%s: %s", r.check or "?", what and (" " .. what) or "",
        (r.message:gsub("\n.*", "")))
    end
  end
  local out = {}
  if format == "markdown" then
    -- a cell is text: no line break, then printable (util.printable), then
    -- every ASCII punctuation character backslash-escaped, which
    -- CommonMark and GitHub's Markdown render as the character itself: no
    -- emphasis, code span, link, autolink (www. and http: are broken by
    -- their escaped . and :), HTML, entity or column break can start.
    -- GitHub links an address (`anonymous@m.lua:12`, a Lua function's
    -- name) whatever is escaped: an @ gets a word joiner (U+2060,
    -- invisible) after it, which ends the address there.
    -- A cell of a number as the table writes it (117, +23.1%, 1,024) is
    -- left as it is.
    local function esc(s)
      s = tostring(s)
      if s:find("^[+%-]?[%d,]*%.?%d*%%?$") then return s end
      return ((util.printable((s:gsub("[\r\n]", " "))):gsub("%p", "\\%0"):gsub("\\@", "\\@\u{2060}")))
    end
    local right = { old = true, new = true, change = true, limit = true }
    for i, row in ipairs(rows) do
      local t = {}
      for j, c in ipairs(row) do t[j] = esc(c) end
      out[#out + 1] = "| " .. table_concat(t, " | ") .. " |"
      if i == 1 then
        local sep = {}
        for j, c in ipairs(row) do sep[j] = right[c] and "---:" or "---" end
        out[#out + 1] = "| " .. table_concat(sep, " | ") .. " |"
      end
    end
    out[#out + 1] = ""
    out[#out + 1] = "**" .. counts(recs) .. "**"
    for _, n in ipairs(notes) do out[#out + 1] = "- " .. esc(n) end
    for _, d in ipairs(damaged) do out[#out + 1] = "- " .. esc(d) end
  else
    local widths = {}
    for _, row in ipairs(rows) do
      for j, c in ipairs(row) do
        if #c > (widths[j] or 0) then widths[j] = #c end
      end
    end
    local right = { [6] = true, [7] = true, [8] = true, [9] = true }
    for _, row in ipairs(rows) do
      local t = {}
      for j, c in ipairs(row) do
        local pad = string.rep(" ", widths[j] - #c)
        t[j] = right[j] and pad .. c or c .. pad
      end
      out[#out + 1] = (table_concat(t, "  "):gsub("%s+$", ""))
    end
    out[#out + 1] = counts(recs)
    for _, n in ipairs(notes) do out[#out + 1] = "  " .. util.printable(n) end
    for _, d in ipairs(damaged) do out[#out + 1] = "  " .. util.printable(d) end
  end
  return table_concat(out, "\n")
end

return M
