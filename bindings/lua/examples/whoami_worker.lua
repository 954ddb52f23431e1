-- whoami_worker.lua — the smallest useful libsupervise worker, in Lua 5.4.
--
-- Started by supervised, it asks "which worker am I" over the control socket
-- ($SUPERVISE_URL) and prints one line in the format of the C example
-- (examples/whoami_worker.c), then stays alive until SIGTERM ends it. Plain
-- Lua cannot catch a signal, so it blocks in supervise.sleep and SIGTERM's
-- default action ends the process (supervised counts it as the stop it
-- asked for). With --interval-ms N it asks and prints again every N ms.
--
--   usage: lua5.4 whoami_worker.lua [--interval-ms N]
--   config: argv = [ "lua5.4", "/path/to/whoami_worker.lua" ];
--           env  = [ "LUA_CPATH=/path/to/build/bindings/lua/?.so;;" ];
local sv = require "supervise"

local interval = 0
if arg[1] == "--interval-ms" and tonumber(arg[2]) then
  interval = math.tointeger(tonumber(arg[2])) or 0
elseif arg[1] ~= nil then
  io.stderr:write("usage: lua5.4 whoami_worker.lua [--interval-ms N]\n")
  os.exit(100)
end

-- print_identity asks the supervisor and prints one line; false on error.
local function print_identity()
  local id, err = sv.whoami(5000)
  if not id then
    io.stderr:write("[lua] whoami: ", tostring(err), "\n")
    return false
  end
  local ctx = {}
  for i, f in ipairs(id.context) do
    ctx[i] = ("%s:%s/%d"):format(f.kind, f.name, f.ordinal)
  end
  io.write(('[lua] I am %s[%d] generation %d pid %d of %d, purpose "%s", context %s, parent %s\n')
    :format(id.group, id.ordinal, id.generation, id.pid, id.group_size, id.purpose,
            table.concat(ctx, " > "), id.parent and "yes" or "none"))
  io.flush()
  return true
end

if not print_identity() then os.exit(1) end
while true do
  if interval > 0 then
    sv.sleep(interval)
    print_identity()
  else
    sv.sleep(3600 * 1000)
  end
end
