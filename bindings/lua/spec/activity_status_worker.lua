-- spec/activity_status_worker.lua — a supervised worker for
-- spec/activity_status_spec.lua. arg[1] "busy": inside the activities
-- "request" > "db query" it writes $SV_LUA_OUT/<ordinal>-<generation>.report
-- (pid, depth) and stays there until SIGTERM; "idle": writes the report in
-- no activity and waits.
local sv = require "supervise"

local out = assert(os.getenv("SV_LUA_OUT"), "SV_LUA_OUT is not set")
local env = assert(sv.from_env())

local function report()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("l"):match("^(%d+)")
  f:close()
  local path = ("%s/%s.report"):format(out, env.group)
  local w = assert(io.open(path .. ".tmp", "w"))
  w:write("pid=", pid, "\ndepth=", sv.activity_depth(), "\n")
  w:close()
  assert(os.rename(path .. ".tmp", path))
end

local function forever()
  while true do sv.sleep(3600 * 1000) end
end

if arg[1] == "busy" then
  sv.activity("request", function()
    sv.activity("db query", function()
      report()
      forever()
    end)
  end)
else
  report()
  forever()
end
