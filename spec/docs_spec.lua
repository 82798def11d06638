-- The documents explain the repository as it is: every ```lua example of
-- README.md and docs/*.md runs from the repository's root, `callgrind`
-- already required, and prints what its "--> " comments say, in order
-- (printed values joined by two spaces; an expectation ending in "..."
-- matches a prefix); every relative link and every document named in the
-- tree points to a file that exists, and every link to "#anchor" (or
-- "file.md#anchor") to a heading of that document; CONTRIBUTING.md's layout names every
-- folder the repository has.
local read = require("spec.support.helpers").read_file

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function run(code, name)
  local printed = {}
  local env = setmetatable({
    callgrind = require("callgrind"),
    print = function(...)
      local t = table.pack(...)
      for i = 1, t.n do t[i] = tostring(t[i]) end
      for line in (table.concat(t, "  ", 1, t.n) .. "\n"):gmatch("(.-)\n") do printed[#printed + 1] = line end
    end,
  }, { __index = _G })
  -- as on a developer's machine, whether or not CI is set
  dofile("tools/gen_docs.lua").as_developer(assert(load(code, "=" .. name, "t", env)))
  return printed
end

local function expectations(code)
  local exp = {}
  for line in code:gmatch("[^\n]*") do
    local e = line:match("%-%->%s(.*)$")
    if e then exp[#exp + 1] = e end
  end
  return exp
end

local DOCS = lines_of("ls docs/*.md")

describe("README.md and docs/", function()
  it("has the reference and the hand-written notes", function()
    for _, name in ipairs({ "reference", "format", "design", "profiling-lua", "ci" }) do
      assert.is_truthy(io.open("docs/" .. name .. ".md"), "docs/" .. name .. ".md")
    end
  end)

  it("have Lua examples: the README one for each job", function()
    local n = 0
    for _ in read("README.md"):gmatch("```lua\n") do n = n + 1 end
    assert.is_true(n >= 5, n .. " examples")
  end)

  for _, path in ipairs({ "README.md", table.unpack(DOCS) }) do
    local k = 0
    for code in read(path):gmatch("```lua\n(.-)```") do
      k = k + 1
      it(path .. " example " .. k .. " prints what its comments say", function()
        local printed = run(code, path)
        local exp = expectations(code)
        assert.are.equal(#exp, #printed, table.concat(printed, "\n"))
        for i, e in ipairs(exp) do
          local prefix = e:match("^(.-)%.%.%.$")
          if prefix then
            assert.are.equal(prefix, printed[i]:sub(1, #prefix))
          else
            assert.are.equal(e, printed[i])
          end
        end
      end)
    end
  end
end)

describe("the documents", function()
  local files = { "README.md", "CONTRIBUTING.md", "CHANGES.md" }
  for _, d in ipairs(DOCS) do files[#files + 1] = d end

  it("link only to files that exist", function()
    local missing = {}
    for _, path in ipairs(files) do
      local dir = path:match("^(.*)/[^/]*$") or "."
      for target in read(path):gmatch("%]%(([^)%s]+)%)") do
        if not target:match("^%a+:") and not target:match("^#") then
          local file = target:gsub("#.*$", "")
          if not io.open(dir .. "/" .. file) then missing[#missing + 1] = path .. " -> " .. target end
        end
      end
    end
    assert.are.same({}, missing)
  end)

  it("link to a heading (#anchor, or file.md#anchor) only where the document has it, as GitHub names it", function()
    local anchor = dofile("tools/gen_internals.lua").anchor
    local cache = {}
    local function anchors(path)
      if cache[path] then return cache[path] end
      local have, seen, fence = {}, {}, false
      for line in read(path):gmatch("[^\n]*") do
        if line:match("^```") then fence = not fence end
        local h = not fence and line:match("^#+%s+(.-)%s*$")
        if h then
          local a = anchor(h)
          -- GitHub numbers a repeated heading's anchor: a, a-1, a-2
          if seen[a] then seen[a] = seen[a] + 1; a = a .. "-" .. seen[a] else seen[a] = 0 end
          have[a] = true
        end
      end
      cache[path] = have
      return have
    end
    local broken, n = {}, 0
    for _, path in ipairs(files) do
      local dir = path:match("^(.*)/[^/]*$") or "."
      for file, a in read(path):gmatch("%]%(([^)#%s]*)#([^)%s]+)%)") do
        if file == "" or file:match("%.md$") then
          n = n + 1
          local target = file == "" and path or dir .. "/" .. file
          if not anchors(target)[a] then broken[#broken + 1] = path .. " -> " .. file .. "#" .. a end
        end
      end
    end
    assert.are.same({}, broken)
    assert.is_true(n >= 50, n .. " links")
  end)

  it("name only source files that exist", function()
    local missing = {}
    for _, path in ipairs(files) do
      -- a whole path of the tree (not the tail of /usr/share/lua/...); a
      -- placeholder (spec/NAME_spec.lua) is none
      for src in read(path):gmatch("[%w_./-]+") do
        local ours = src:match("^csrc/.+%.[ch]$") or src:match("^lua/.+%.lua$") or src:match("^spec/.+%.lua$")
        if ours and not src:find("%u%u") and not io.open(src) then missing[#missing + 1] = path .. ": " .. src end
      end
    end
    assert.are.same({}, missing)
  end)

  it("named anywhere in the tree (a capitalised name ending in .md) exist", function()
    local named = lines_of("git grep -hoE '\\b[A-Z][A-Za-z_-]*\\.md\\b' -- '*.lua' '*.c' '*.h' '*.md' "
      .. "'Makefile' ':!spec/corpus' | sort -u")
    local missing = {}
    for _, name in ipairs(named) do
      if #lines_of("git ls-files '*" .. name .. "'") == 0 and not io.open(name) then
        missing[#missing + 1] = name
      end
    end
    assert.are.same({}, missing)
  end)
end)

describe("CONTRIBUTING.md's layout", function()
  it("names every folder of the repository, and no folder that is not there", function()
    local text = read("CONTRIBUTING.md")
    local block = text:match("## Layout\n.-```text\n(.-)```")
    assert.is_truthy(block, "CONTRIBUTING.md has no ## Layout with a ```text block")
    local listed = {}
    -- the first word of a line, when it ends in "/"
    for line in block:gmatch("[^\n]+") do
      local dir = line:match("^([%w_.%-/]+)/%s") or line:match("^([%w_.%-/]+)/$")
      if dir then listed[dir] = true end
    end
    local folders = lines_of("git ls-files | grep / | sed 's|/[^/]*$||' | sort -u "
      .. "| grep -v '^spec/corpus/.' | grep -v '^spec/fixtures/.' | grep -v '^examples/perf/.'")
    local missing = {}
    for _, f in ipairs(folders) do
      if not listed[f] then missing[#missing + 1] = f end
    end
    assert.are.same({}, missing)
    local extra = {}
    for f in pairs(listed) do
      if not io.open(f) then extra[#extra + 1] = f end
    end
    table.sort(extra)
    assert.are.same({}, extra)
  end)
end)
