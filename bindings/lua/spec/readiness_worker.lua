-- spec/readiness_worker.lua — a worker of readiness_spec.lua.
--
--   readiness_worker.lua ready TEXT
--       supervise.ready(TEXT), then a sub-process (a descendant, not the
--       worker) calls supervise.ready() too; writes both outcomes to
--       $SV_LUA_OUT/ready-<group>-<ordinal>-<generation>.report (through a
--       temporary name and a rename), then blocks until SIGTERM.
--   readiness_worker.lua heartbeat MS
--       supervise.ready() (its group has ready = true, so the watchdog
--       starts then and start-up time does not count), then
--       supervise.heartbeat() every MS until SIGTERM; a failed call ends
--       the worker with an error.
local sv = require "supervise"

local mode, arg = ...

local function outcome(ok, err)
  if ok then return "ok" end
  return ("%d %s"):format(err.code, err.name)
end

if mode == "ready" then
  local me = assert(sv.from_env())
  local mine = outcome(sv.ready(arg, 5000))
  local lua = os.getenv("SV_LUA") or "lua5.4"
  local code = 'local sv = require "supervise" local ok, err = sv.ready(nil, 5000) '
    .. 'io.write(ok and "ok" or (err.code .. " " .. err.name))'
  local p = assert(io.popen("'" .. lua .. "' -e '" .. code .. "' 2>&1", "r"))
  local child = p:read("a")
  p:close()
  local name = ("%s/ready-%s-%d-%d.report"):format(os.getenv("SV_LUA_OUT"), me.group,
                                                 me.ordinal, me.generation)
  local f = assert(io.open(name .. ".tmp", "w"))
  f:write("ready=", mine, "\n", "descendant=", child, "\n")
  f:close()
  assert(os.rename(name .. ".tmp", name))
  while true do sv.sleep(3600 * 1000) end
elseif mode == "heartbeat" then
  local ms = assert(math.tointeger(tonumber(arg)), "heartbeat MS")
  assert(sv.ready("beating", 5000))
  -- The worker's own pacing: a heartbeat every MS until SIGTERM.
  while true do
    assert(sv.heartbeat(4 * ms))
    sv.sleep(ms)
  end
else
  error("usage: readiness_worker.lua ready TEXT | heartbeat MS")
end
