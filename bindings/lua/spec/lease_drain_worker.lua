-- spec/lease_drain_worker.lua — a worker of spec/leases_drain_spec.lua.
--
--   lua5.4 lease_drain_worker.lua drain
--       subscribes to its own topic (supervise.drain_watch), reports ready,
--       then "serves" (counts loop turns) until the drain notice arrives;
--       writes $SV_LUA_OUT/drain.report (pid, served, the notice, WhoAmI's
--       draining), sends DrainAck(served) and exits 0.
--   sv-lua-fork-host lease_drain_worker.lua fork POOL
--       acquires its own lease on POOL (slot = its ordinal) as a worker,
--       then forks 4 children (host.fork); each opens a session of its own,
--       takes a lease on POOL with supervise.with_lease and writes
--       $SV_LUA_OUT/lfork-child-<i>.report. The parent waits for them with
--       a deadline (host.wait kills a child still running), renews its own
--       lease, writes $SV_LUA_OUT/lfork.report and waits for SIGTERM.
local sv = require "supervise"

local out = assert(os.getenv("SV_LUA_OUT"), "SV_LUA_OUT is not set")

local common = dofile(arg[0]:match("^(.*)/[^/]*$") .. "/worker_common.lua")
local self_pid = common.self_pid

local function write_report(name, lines) common.write_lines(out .. "/" .. name, lines) end

local function drain_mode()
  local d = assert(sv.drain_watch())
  local calls = 0
  d:on_drain(function() calls = calls + 1 end)
  assert(sv.ready("serving"))
  local served = 0
  while not d:poll(20) do served = served + 1 end
  local draining, left = sv.draining()
  write_report("drain.report", {
    "pid=" .. self_pid(), "served=" .. served, "handler_calls=" .. calls,
    "drain_id=" .. d.notice.drain_id,
    "notice_deadline=" .. d.notice.deadline_in_ms,
    "source=" .. d.notice.source,
    "draining=" .. tostring(draining), "deadline_in_ms=" .. tostring(left) })
  assert(d:ack(served))
  d:close()
  os.exit(0, true)
end

local function lease_lines(prefix, l)
  return {
    prefix .. "id=" .. l.id, prefix .. "pool=" .. l.pool,
    prefix .. "slot=" .. l.slot, prefix .. "token=" .. l.token,
    prefix .. "holder=" .. l.holder }
end

local function fork_mode(pool)
  local me = assert(sv.whoami(5000))
  local mine = assert(sv.lease_acquire(pool, { slot = me.ordinal }))
  local kids = {}
  for i = 1, 4 do
    local pid = host.fork()
    if pid == 0 then
      local lines = { "pid=" .. self_pid() }
      local sid, err = sv.session_open(10000, 5000)
      if not sid then
        lines[#lines + 1] = "error=" .. tostring(err)
      else
        local ok, res = sv.with_lease(pool, { session = sid }, function(l)
          local listed = assert(sv.leases(pool, sid))
          local t = lease_lines("", l)
          t[#t + 1] = "listed=" .. #listed .. ":" .. listed[1].id
          return t
        end)
        if ok then
          for _, line in ipairs(res) do lines[#lines + 1] = line end
        else
          lines[#lines + 1] = "error=" .. tostring(res)
        end
        sv.session_close(sid)
      end
      write_report("lfork-child-" .. i .. ".report", lines)
      os.exit(0, true)
    end
    kids[i] = pid
  end
  local lines = { "pid=" .. self_pid() }
  for _, line in ipairs(lease_lines("mine.", mine)) do lines[#lines + 1] = line end
  for i, pid in ipairs(kids) do
    local status, why = host.wait(pid, 15000)
    lines[#lines + 1] = ("child.%d=%s"):format(i, status and ("exit " .. status) or why)
  end
  local renewed, err = mine:renew()
  lines[#lines + 1] = "renewed_token=" .. (renewed and renewed.token or tostring(err))
  write_report("lfork.report", lines)
  while true do sv.sleep(3600 * 1000) end
end

if arg[1] == "drain" then
  drain_mode()
elseif arg[1] == "fork" then
  fork_mode(assert(arg[2], "fork needs a pool"))
else
  io.stderr:write("usage: lease_drain_worker.lua drain | fork POOL\n")
  os.exit(2)
end
