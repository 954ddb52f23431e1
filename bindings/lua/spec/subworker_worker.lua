-- spec/subworker_worker.lua — run by tests/fork_host.c (`host.fork`) as a
-- supervised worker of a group with max_subworkers = 3, for
-- spec/subworker_spec.lua. It registers its Lua state's thread and forked
-- children as sub-workers and writes "key=value" lines to
-- $SV_LUA_OUT/<ordinal>-<generation>.report, then blocks until SIGTERM.
--
--   thread    register_thread("main") twice (the second: the same table,
--             again), another label (EBUSY), release_thread, "main" again
--             (same number, next sub-generation), kept registered
--   self      register_child in the worker itself (EPERM)
--   children  3 children forked one after the other; each registers
--             (register_child), asks whoami, tries register_thread
--             (ETOOLARGE: a third level), reports, and stays alive until
--             the parent writes the go file. With the thread holding one
--             number, the third child is over the bound (EEXHAUSTED).
-- Children report to <ordinal>-<generation>-child-<i>.report; every wait
-- is a poll with a deadline (a Lua 5.4 process has no pipe to wait on).
local sv = require "supervise"

local out = assert(os.getenv("SV_LUA_OUT"), "SV_LUA_OUT is not set")
local env = assert(sv.from_env())
local base = ("%s/%d-%d"):format(out, env.ordinal, env.generation)

local common = dofile(arg[0]:match("^(.*)/[^/]*$") .. "/worker_common.lua")
local self_pid = common.self_pid

local write_report = common.write_lines

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

local function wait_file(path, ms)
  for _ = 1, ms // 20 do
    if exists(path) then return true end
    sv.sleep(20)
  end
  return exists(path)
end

local function frame(f)
  return f and ("%s:%s/%d@%d"):format(f.kind, f.name, f.ordinal, f.generation) or "none"
end

local function ident(id, err)
  if not id then return "error " .. tostring(err and err.name) end
  local ctx = {}
  for i, f in ipairs(id.context) do ctx[i] = frame(f) end
  return ("%s %d %d pid=%d ctx=%s parent=%s"):format(id.kind, id.ordinal, id.generation, id.pid,
    table.concat(ctx, ">"), frame(id.parent))
end

local lines = { "pid=" .. self_pid() }
local function put(k, v) lines[#lines + 1] = k .. "=" .. v end

put("worker", ident(sv.whoami(5000)))
local t1, again1 = sv.register_thread("main")
put("thread", ident(t1))
put("thread.again", tostring(again1))
local t2, again2 = sv.register_thread("main")
put("thread.same", tostring(rawequal(t1, t2) and again2 == true))
local _, busy = sv.register_thread("other")
put("thread.other", busy and busy.name or "none")
put("thread.release", tostring(sv.release_thread()))
put("thread.back", ident(sv.register_thread("main")))
local _, perm = sv.register_child()
put("self.child", perm and perm.name or "none")

local go = base .. ".go"
local kids = {}
for i = 1, 3 do
  local pid = host.fork()
  if pid == 0 then
    local me, err = sv.register_child { label = "kid-" .. i }
    local cl = { "pid=" .. self_pid(), "me=" .. ident(me, err) }
    if me then
      cl[#cl + 1] = "who=" .. ident(sv.whoami(5000))
      local again, was = sv.register_child()
      cl[#cl + 1] = "again=" .. tostring(rawequal(again, me) and was == true)
      local _, nested = sv.register_thread("inner")
      cl[#cl + 1] = "nested=" .. (nested and nested.name or "none")
    end
    write_report(("%s-child-%d.report"):format(base, i), cl)
    wait_file(go, 15000)
    os.exit(0, true)
  end
  kids[i] = pid
  -- One after the other, so that child i gets number i-1.
  wait_file(("%s-child-%d.report"):format(base, i), 15000)
end
write_report(go, { "go" })
for i, pid in ipairs(kids) do
  local status, why = host.wait(pid, 15000)
  put("child." .. i, status and ("exit " .. status) or why)
end
write_report(base .. ".report", lines)

while true do sv.sleep(3600 * 1000) end
