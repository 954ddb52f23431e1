-- supervise/drain.lua — a worker's drain watcher, written in Lua:
-- supervise.drain_watch([opts]) and the watcher's methods (poll, draining,
-- on_drain, check, extend, ack, close; metatable "supervise.Drain").
--
-- Design: the watcher composes the C requests of src/drain.c and
-- src/events.c (open_events on the worker's own topic w/GROUP/ORDINAL/,
-- draining, drain_extend, drain_ack) with closures and handlers. It reads
-- its event reader only when the worker polls, so nothing runs in the
-- background and a forked child is as safe as with the C requests. This
-- file is the drain family's Lua part: `require "supervise"`
-- (src/module.c) runs it once with the module table as its argument; it is
-- not a module of its own.
local sv = ...
if type(sv) ~= "table" then
  error("supervise.drain is part of the supervise module: use require \"supervise\"", 2)
end
local setmetatable = setmetatable

-- call runs request name on client c (as a method) or, when c is nil, on
-- the module's default client.
local function call(c, name, ...)
  if c ~= nil then return c[name](c, ...) end
  return sv[name](...)
end

-- supervise.Drain: a worker's view of its own drain.
local Drain = {}
Drain.__index = Drain
Drain.__name = "supervise.Drain"

-- supervise.drain_watch([{client =, timeout =, handler =}]) subscribes to
-- this worker's topic w/GROUP/ORDINAL/; returns the watcher or nil, err
-- (ENOTWORKER outside a worker).
function sv.drain_watch(opts)
  opts = opts or {}
  local me, err = sv.from_env()
  if not me then return nil, err end
  local reader, rerr = sv.open_events({
    prefix = string.format("w/%s/%d/", me.group, me.ordinal),
    timeout = opts.timeout })
  if not reader then return nil, rerr end
  local d = setmetatable({ group = me.group, ordinal = me.ordinal,
    generation = me.generation, client = opts.client, handlers = {},
    reader = reader }, Drain)
  if opts.handler then d:on_drain(opts.handler) end
  return d
end

-- parse reads the integer "key=value" words of an event's details.
local function parse(details)
  local f = {}
  for k, v in string.gmatch(details or "", "([%w_]+)=(%d+)") do
    f[k] = math.tointeger(tonumber(v)) or 0
  end
  return f
end

-- d:on_drain(fn): fn(notice) runs once, in the poll that sees the notice
-- (at once when it was seen already). Returns fn.
function Drain:on_drain(fn)
  assert(type(fn) == "function", "on_drain needs a function")
  self.handlers[#self.handlers + 1] = fn
  if self.notice then fn(self.notice) end
  return fn
end

-- d:_seen(notice) keeps the notice and runs the handlers; returns it.
function Drain:_seen(notice)
  self.notice = notice
  for _, fn in ipairs(self.handlers) do fn(notice) end
  return notice
end

-- d:poll([wait_ms]) reads this worker's events for up to wait_ms (default
-- 0: what has arrived; -1: until the notice); returns the notice
-- {drain_id, deadline_in_ms, source} once draining, else nil (and an error
-- object when the reader failed otherwise than by a timeout).
function Drain:poll(wait_ms)
  if self.notice then return self.notice end
  wait_ms = wait_ms or 0
  local deadline = wait_ms >= 0 and sv._now_ms() + wait_ms or nil
  while true do
    local left = -1
    if deadline then left = math.max(0, deadline - sv._now_ms()) end
    local ev, err = self.reader:next(left)
    if not ev then
      if err and err.code ~= sv.ETIMEDOUT then return nil, err end
      return nil
    end
    if ev.kind == "drain" and ev.generation == self.generation then
      local f = parse(ev.details)
      return self:_seen({ drain_id = f.drain_id or 0,
        deadline_in_ms = f.deadline_in_ms or 0, source = "event" })
    end
    if deadline and sv._now_ms() >= deadline then return nil end
  end
end

-- d:draining() -> true once the notice was seen (no wait, no round trip).
function Drain:draining()
  return self:poll(0) ~= nil
end

-- d:check([timeout]) asks WhoAmI (one round trip) for a notice that may
-- have been missed; returns the notice or nil (, err).
function Drain:check(timeout)
  if self.notice then return self.notice end
  local draining, left = call(self.client, "draining", timeout)
  if draining == nil then return nil, left end
  if draining then
    return self:_seen({ drain_id = 0, deadline_in_ms = left,
                        source = "whoami" })
  end
  return nil
end

-- d:extend(more_ms [, timeout]) -> true (DrainExtend), or nil, err.
function Drain:extend(more_ms, timeout)
  return call(self.client, "drain_extend", more_ms, timeout)
end

-- d:ack([served [, timeout]]) -> true (DrainAck), or nil, err.
function Drain:ack(served, timeout)
  return call(self.client, "drain_ack", served or 0, timeout)
end

-- d:close() unsubscribes (also __close).
function Drain:close()
  self.reader:close()
end
Drain.__close = Drain.close
