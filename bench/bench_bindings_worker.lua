-- bench_bindings_worker.lua: the Lua worker of bench_bindings.py.
--
-- Runs under supervised and answers the commands of bench_bindings_worker.c
-- (its design comment is the protocol), timing the Lua binding:
--
--   live N    N calls of client:whoami() on one client (sv.open), each
--             timed on its own
--   env N K   N samples, each the time of K sv.from_env() calls
--   act N K   N samples, each the time of K sv.activity("bench", noop)
--   lease N K POOL
--             N samples, each the time of K client:lease_acquire(POOL) (any
--             slot, no wait) + lease:release() pairs; "err" when a call
--             fails or a slot's fencing token does not grow between grants
--   quit      exit 0
--
-- Commands come one per line from the FIFO arg[1], answers go to the FIFO
-- arg[2]; times are CLOCK_MONOTONIC differences in nanoseconds, read with
-- svbench_clock (bench_bindings_clock.c: Lua has no monotonic clock of its
-- own). Both modules are found through LUA_CPATH.
local sv = require "supervise"
local clock = require "svbench_clock"

local MAX_SAMPLES, MAX_BATCH = 100000, 10000
local now = clock.now_ns

-- time_live times n live whoami calls; returns their durations or nil, err.
local function time_live(client, n)
  local out = {}
  for i = 1, n do
    local t0 = now()
    local id, err = client:whoami(5000)
    if not id then return nil, err end
    out[i] = now() - t0
  end
  return out
end

-- time_env times n batches of k sv.from_env() calls (ns per batch).
local function time_env(n, k)
  local out, from_env = {}, sv.from_env
  for i = 1, n do
    local t0 = now()
    for _ = 1, k do
      local id, err = from_env()
      if not id then return nil, err end
    end
    out[i] = now() - t0
  end
  return out
end

-- time_act times n batches of k sv.activity scopes (ns per batch).
local function time_act(n, k)
  local out, activity = {}, sv.activity
  local noop = function() end
  for i = 1, n do
    local t0 = now()
    for _ = 1, k do
      activity("bench", noop)
    end
    out[i] = now() - t0
  end
  return out
end

-- The last grant seen: only this worker runs while it is timed and it
-- releases each lease first, so a slot's fencing tokens must grow.
local last_slot, last_token = -1, 0

-- time_lease times n batches of k lease acquire + release pairs on pool
-- (ns per batch); returns the durations or nil, err.
local function time_lease(client, pool, n, k)
  local out = {}
  for i = 1, n do
    local t0 = now()
    for _ = 1, k do
      local l, err = client:lease_acquire(pool)
      if not l then return nil, err end
      local ok, rerr = l:release()
      if not ok then return nil, rerr end
      if l.slot == last_slot and l.token <= last_token then
        return nil, "lease: a fencing token did not grow"
      end
      last_slot, last_token = l.slot, l.token
    end
    out[i] = now() - t0
  end
  return out
end

-- answer returns the answer line to one command line, nil for quit.
local function answer(client, line)
  if line == "quit" then return nil end
  local n = tonumber(line:match("^live (%d+)$"))
  local t, err
  local ln, lk, pool = line:match("^lease (%d+) (%d+) ([%w_.-]+)$")
  ln, lk = tonumber(ln), tonumber(lk)
  if n and n >= 1 and n <= MAX_SAMPLES then
    t, err = time_live(client, n)
  elseif ln then
    if not (ln >= 1 and ln <= MAX_SAMPLES and lk >= 1 and lk <= MAX_BATCH
        and #pool <= 64) then
      return "err bad command"
    end
    t, err = time_lease(client, pool, ln, lk)
  else
    local cmd, en, k = line:match("^(%a+) (%d+) (%d+)$")
    en, k = tonumber(en), tonumber(k)
    if not ((cmd == "env" or cmd == "act") and en and k and en >= 1
        and en <= MAX_SAMPLES and k >= 1 and k <= MAX_BATCH) then
      return "err bad command"
    end
    if cmd == "env" then
      t, err = time_env(en, k)
    else
      t, err = time_act(en, k)
    end
  end
  if not t then return "err " .. tostring(err) end
  return "ok " .. table.concat(t, " ")
end

if #arg ~= 2 then
  io.stderr:write("usage: bench_bindings_worker.lua CMD_FIFO REPLY_FIFO\n")
  os.exit(2)
end
local client = assert(sv.open(nil, 5000))
-- The driver opens the reply FIFO first, then the command FIFO.
local cmd = assert(io.open(arg[1], "r"))
local out = assert(io.open(arg[2], "w"))
for line in cmd:lines() do
  local ans = answer(client, line)
  if not ans then break end
  out:write(ans, "\n")
  out:flush()
end
cmd:close()
out:close()
client:close()
