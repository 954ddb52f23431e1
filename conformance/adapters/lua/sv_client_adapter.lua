-- sv_client_adapter.lua — the conformance testee adapter of the Lua binding.
--
-- Design: glue only. It reads one JSON command per line on stdin, makes
-- that call with the `supervise` C module (bindings/lua) against the
-- control URL given as its only argument, and prints one JSON result line
-- (the harness protocol of conformance/README.md, "Writing a client
-- adapter"). Its first line is the banner naming the calls it can make.
-- Needs dkjson (Debian: lua-dkjson) and LUA_CPATH naming the built module.
local json = require "dkjson"
local sv = require "supervise"

local OPS = { "hello", "whoami", "list", "status", "restart", "ready" }
-- Capabilities beyond the calls: hello's result carries durability.
local EXTRAS = { "hello.durability" }

local function worker(w)
  -- The binding gives the state's name ("unknown" for a number it cannot
  -- name) and its number.
  return { group = w.group, ordinal = w.ordinal, generation = w.generation, pid = w.pid,
           state = w.state, state_number = w.state_number,
           ready = w.ready and true or false, purpose = w.purpose }
end

local function call(c, cmd)
  local ms = cmd.deadline_ms or 5000
  local op = cmd.op
  if op == "hello" then
    local h, err = c:hello(ms)
    if not h then return nil, err end
    return { version = h.version, minor_version = h.minor_version, server_name = h.server_name,
             supervisor_id = h.supervisor_id, features = h.features, events_url = h.events_url or "",
             durability = h.durability }
  elseif op == "whoami" then
    local i, err = c:whoami(ms)
    if not i then return nil, err end
    return { group = i.group, ordinal = i.ordinal, generation = i.generation, pid = i.pid,
             purpose = i.purpose, supervisor_id = i.supervisor_id, group_size = i.group_size }
  elseif op == "list" then
    local ws, err = c:list(cmd.group, ms)
    if not ws then return nil, err end
    local out = {}
    for k, w in ipairs(ws) do out[k] = worker(w) end
    return { workers = setmetatable(out, { __jsontype = "array" }) }
  elseif op == "status" then
    local w, err = c:status(cmd.group, cmd.ordinal, ms)
    if not w then return nil, err end
    return worker(w)
  elseif op == "restart" then
    local ok, err
    if cmd.expected_generation then
      ok, err = c:restart(cmd.group, cmd.ordinal,
                          { expected_generation = cmd.expected_generation, timeout = ms })
    else
      ok, err = c:restart(cmd.group, cmd.ordinal, ms)
    end
    if not ok then return nil, err end
    return {}
  elseif op == "ready" then
    local ok, err = c:ready(cmd.status, ms)
    if not ok then return nil, err end
    return {}
  end
  return nil, sv.error(100, "unknown op " .. tostring(op))
end

local c = assert(sv.open(arg[1], 2000))
io.stdout:setvbuf("line")
local banner = {}
for _, f in ipairs(OPS) do banner[#banner + 1] = f end
for _, f in ipairs(EXTRAS) do banner[#banner + 1] = f end
io.write(json.encode({ adapter = "lua", features = banner }), "\n")
for line in io.lines() do
  local cmd = json.decode(line)
  local res, err = call(c, cmd)
  local out
  if res then
    out = { ok = true, result = setmetatable(res, { __jsontype = "object" }) }
  else
    out = { ok = false, error = err.name, code = err.code, message = err.message or "",
            generic = err.name == "UNKNOWN" }
  end
  io.write(json.encode(out), "\n")
end
c:close()
