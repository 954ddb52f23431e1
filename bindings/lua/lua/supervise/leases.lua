-- supervise/leases.lua — the lease compositions of the Lua binding, written
-- in Lua: the methods of lease tables (metatable "supervise.Lease") and
-- supervise.with_lease, the scoped lease.
--
-- Design: these compose the C requests of src/leases.c (lease_acquire,
-- lease_renew, lease_release) with Lua control flow (pcall), which reads
-- better in Lua than through the C API. This file is the leases family's
-- Lua part: `require "supervise"` (src/module.c) runs it once with the
-- module table as its argument; it is not a module of its own. Nothing
-- here starts a thread or keeps a connection of its own.
local sv = ...
if type(sv) ~= "table" then
  error("supervise.leases is part of the supervise module: use require \"supervise\"", 2)
end
local unpack, pcall = table.unpack, pcall

-- call runs request name on client c (as a method) or, when c is nil, on
-- the module's default client.
local function call(c, name, ...)
  if c ~= nil then return c[name](c, ...) end
  return sv[name](...)
end

-- supervise.Lease: lease tables made by lease_acquire, lease_renew, leases.
local Lease = debug.getregistry()["supervise.Lease"]
Lease.__index = {
  -- lease:release([timeout]) -> true, or nil, err (EPERM: not its holder)
  release = function(self, timeout)
    local ok, err = call(rawget(self, "_client"), "lease_release", self.id,
                         self.session, timeout)
    if ok then self.released = true end
    return ok, err
  end,
  -- lease:renew([timeout]) -> the renewed lease, or nil, err
  renew = function(self, timeout)
    return call(rawget(self, "_client"), "lease_renew", self.id,
                self.session, timeout)
  end,
}

-- tostring(lease): "lease ID POOL[SLOT] token TOKEN".
Lease.__tostring = function(self)
  return string.format("lease %d %s[%d] token %d", self.id, self.pool,
                       self.slot, self.token)
end
Lease.__name = "supervise.Lease"

-- supervise.with_lease(pool, opts, fn, ...): acquires a lease (opts: slot,
-- wait, session, timeout, client), calls fn(lease, ...) under pcall and
-- releases the lease whatever happened. Returns true, fn's results; or
-- nil, err when the lease could not be acquired; or false, err with fn's
-- error (else the release's error).
function sv.with_lease(pool, opts, fn, ...)
  if type(opts) == "function" then
    return sv.with_lease(pool, nil, opts, fn, ...)
  end
  opts = opts or {}
  if type(fn) ~= "function" then
    error("bad argument #3 to 'with_lease' (function expected)", 2)
  end
  local lease, err = call(opts.client, "lease_acquire", pool,
    { slot = opts.slot, wait = opts.wait, session = opts.session },
    opts.timeout)
  if not lease then return nil, err end
  local results = table.pack(pcall(fn, lease, ...))
  local released, rerr = lease:release()
  if not results[1] then return false, results[2] end
  if not released then return false, rerr end
  return true, unpack(results, 2, results.n)
end
