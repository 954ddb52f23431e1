-- spec/activity_worker.lua — run by activity_spec.lua with
-- SUPERVISE_ACTIVITY naming a fresh region file (or unset: "noregion").
-- Checks supervise.activity against the file's bytes (docs/activity.md,
-- "Region format"), prints OK, or fails with an error (exit 1).
local sv = require "supervise"

local path = os.getenv("SUPERVISE_ACTIVITY")

if arg[1] == "noregion" then
  local ran = sv.activity("x", function() return sv.activity_depth() end)
  assert(ran == 0, "a scope without a region records nothing")
  print("OK")
  return
end

-- recorded returns the open scopes over every slot and the entries' names.
local function recorded()
  local f = assert(io.open(path, "rb"))
  local data = f:read("a")
  f:close()
  local total, names = 0, {}
  for i = 0, 63 do
    local off = 64 + 960 * i
    local depth = string.unpack("=I4", data, off + 4 + 1)
    total = total + depth
    for e = 0, math.min(depth, 16) - 1 do
      local raw = data:sub(off + 16 + 56 * e + 8 + 1, off + 16 + 56 * e + 56)
      names[#names + 1] = raw:match("^[^%z]*")
    end
  end
  return total, table.concat(names, ",")
end

-- nesting composes and pops
sv.activity("request", function()
  sv.activity("db query", function()
    local n, names = recorded()
    assert(n == 2 and names == "request,db query", names)
    assert(sv.activity_depth() == 2)
  end)
  local n, names = recorded()
  assert(n == 1 and names == "request", names)
end)
assert(recorded() == 0)

-- the results of fn come back, arguments go in
local a, b, c = sv.activity("x", function(x, y) return x, y, "z" end, 1, 2)
assert(a == 1 and b == 2 and c == "z")

-- an error pops every scope and is raised again unchanged
local marker = setmetatable({}, { __tostring = function() return "marker" end })
local ok, err = pcall(sv.activity, "outer", function()
  sv.activity("inner", function()
    assert(recorded() == 2)
    error(marker)
  end)
end)
assert(not ok and err == marker, tostring(err))
assert(recorded() == 0, "a failure left a scope open")
assert(sv.activity_depth() == 0)

-- bad arguments are the caller's bug
assert(not pcall(sv.activity, "", function() end))
assert(not pcall(sv.activity, "x", 42))
print("OK")
