-- spec/fork_worker.lua — run by tests/fork_host.c (`host.fork`) as a
-- supervised worker: it uses the binding (the default client and a client
-- of its own), then forks 4 children at once, each of which uses the
-- inherited clients and writes $SV_LUA_OUT/fork-child-<i>.report; then the
-- parent waits for them (with a deadline), uses its clients again and
-- writes $SV_LUA_OUT/fork.report. Then it blocks until SIGTERM.
local sv = require "supervise"

local out = assert(os.getenv("SV_LUA_OUT"), "SV_LUA_OUT is not set")

local common = dofile(arg[0]:match("^(.*)/[^/]*$") .. "/worker_common.lua")
local self_pid = common.self_pid

local function write_report(name, lines) common.write_lines(out .. "/" .. name, lines) end

local function answer(id, err)
  if not id then return "error " .. tostring(err) end
  return ("%s %d %d %d"):format(id.group, id.ordinal, id.generation, id.pid)
end

-- Before fork: both kinds of client are connected and used.
local before = answer(sv.whoami(5000))
local c = assert(sv.open(nil, 5000))
local own_before = answer(c:whoami(5000))

local kids = {}
for i = 1, 4 do
  local pid = host.fork()
  if pid == 0 then
    local lines = { "pid=" .. self_pid() }
    lines[#lines + 1] = "default=" .. answer(sv.whoami(5000))
    lines[#lines + 1] = "own=" .. answer(c:whoami(5000))
    local h, herr = c:hello(5000)
    lines[#lines + 1] = "hello=" .. (h and h.server_name or ("error " .. tostring(herr)))
    write_report("fork-child-" .. i .. ".report", lines)
    os.exit(0, true) -- closes the state: __gc closes the clients in the child
  end
  kids[i] = pid
end

local lines = { "pid=" .. self_pid(), "before=" .. before, "own_before=" .. own_before }
for i, pid in ipairs(kids) do
  local status, why = host.wait(pid, 15000)
  lines[#lines + 1] = ("child.%d=%s"):format(i, status and ("exit " .. status) or why)
end
lines[#lines + 1] = "after=" .. answer(sv.whoami(5000))
lines[#lines + 1] = "own_after=" .. answer(c:whoami(5000))
write_report("fork.report", lines)

while true do sv.sleep(3600 * 1000) end
