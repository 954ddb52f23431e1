-- identity_env_spec.lua — supervise.from_env(vars) is the C library's
-- sv_identity_from_env: the variables read, their bounds, ENOTWORKER when
-- one is absent and EINVAL when one is malformed, with the variable named
-- in the message. The same cases as Python's test_identity_env.py, so the
-- bindings accept and refuse the same environments.
local H = require "spec.helper"
local sv = H.sv

local GOOD = {
  SUPERVISE_URL = "ipc:///tmp/x/control.sock",
  SUPERVISE_GROUP = "web.v2_a-b",
  SUPERVISE_ORDINAL = "3",
  SUPERVISE_GENERATION = "18446744073709551615",
  SUPERVISE_PURPOSE = "serve HTTP requests",
  SUPERVISE_SUPERVISOR_ID = "abc123",
}

-- with returns a copy of GOOD with name set to value (nil: removed).
local function with(name, value)
  local t = {}
  for k, v in pairs(GOOD) do t[k] = v end
  t[name] = value
  return t
end

describe("from_env(vars)", function()
  it("reads every variable", function()
    local me = assert(sv.from_env(GOOD))
    assert.equals("web.v2_a-b", me.group)
    assert.equals(3, me.ordinal)
    -- 2^64 - 1 is above LUA_MAXINTEGER: a float, as a live identity gives.
    assert.equals(18446744073709551615.0, me.generation)
    assert.equals("process", me.kind)
    assert.equals("serve HTTP requests", me.purpose)
    assert.equals("abc123", me.supervisor_id)
    assert.equals("ipc:///tmp/x/control.sock", me.url)
    assert.equals("env", me.source)
    assert.equals(1, #me.context)
    assert.same({ kind = "process", ordinal = 3, name = "web.v2_a-b",
                  generation = 18446744073709551615.0 }, me.context[1])
    assert.is_nil(me.parent)
    -- Not in the environment: unknown rather than guessed.
    assert.is_nil(me.pid)
    assert.is_nil(me.group_size)
    assert.equals("web.v2_a-b[3] generation 1.844674407371e+19", tostring(me))
  end)

  it("accepts an empty purpose and takes numbers as their decimal text", function()
    local me = assert(sv.from_env(with("SUPERVISE_PURPOSE", "")))
    assert.equals("", me.purpose)
    me = assert(sv.from_env(with("SUPERVISE_ORDINAL", 5)))
    assert.equals(5, me.ordinal)
    -- Without SUPERVISE_URL the identity is whole; url is "".
    me = assert(sv.from_env(with("SUPERVISE_URL", nil)))
    assert.equals("", me.url)
  end)

  for _, missing in ipairs { "SUPERVISE_GROUP", "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION",
                             "SUPERVISE_PURPOSE", "SUPERVISE_SUPERVISOR_ID" } do
    it("is ENOTWORKER without " .. missing, function()
      local me, err = sv.from_env(with(missing, nil))
      assert.is_nil(me)
      assert.equals("ENOTWORKER", err.name)
      assert.equals(10, err.code)
      assert.equals("from_env", err.op)
      assert.truthy(err.message:find(missing, 1, true), err.message)
    end)
  end

  it("is ENOTWORKER with an empty group, ordinal, generation or supervisor id", function()
    for _, name in ipairs { "SUPERVISE_GROUP", "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION",
                            "SUPERVISE_SUPERVISOR_ID" } do
      local me, err = sv.from_env(with(name, ""))
      assert.is_nil(me, name)
      assert.equals("ENOTWORKER", err.name, name)
    end
  end)

  for _, case in ipairs {
    { "SUPERVISE_ORDINAL", "x" },
    { "SUPERVISE_ORDINAL", "-1" },
    { "SUPERVISE_ORDINAL", " 1" },
    { "SUPERVISE_ORDINAL", "4294967296" },
    { "SUPERVISE_ORDINAL", ("1"):rep(21) },
    { "SUPERVISE_GENERATION", "18446744073709551616" },
    { "SUPERVISE_GROUP", "a b" },
    { "SUPERVISE_GROUP", ("g"):rep(65) },
    { "SUPERVISE_PURPOSE", ("p"):rep(1025) },
    { "SUPERVISE_SUPERVISOR_ID", ("s"):rep(1025) },
  } do
    local name, value = case[1], case[2]
    it(("is EINVAL with %s=%q"):format(name, value:sub(1, 24)), function()
      local me, err = sv.from_env(with(name, value))
      assert.is_nil(me)
      assert.equals("EINVAL", err.name)
      assert.truthy(err.message:find(name, 1, true), err.message)
    end)
  end

  it("keeps its bounds inclusive", function()
    local t = with("SUPERVISE_ORDINAL", "4294967295")
    t.SUPERVISE_GROUP = ("g"):rep(64)
    t.SUPERVISE_PURPOSE = ("p"):rep(1024)
    local me = assert(sv.from_env(t))
    assert.equals(4294967295, me.ordinal)
    assert.equals(64, #me.group)
    assert.equals(1024, #me.purpose)
  end)

  it("reads only the table, not the process environment", function()
    -- busted runs outside a worker: the process has no SUPERVISE_GROUP.
    assert.is_nil(os.getenv("SUPERVISE_GROUP"))
    assert.is_nil(sv.from_env({}))
    assert.equals("ENOTWORKER", select(2, sv.from_env({})).name)
    assert.equals("web.v2_a-b", sv.from_env(GOOD).group)
  end)

  it("raises on a bad argument: not a table, a value that is not text, a NUL byte", function()
    assert.has_error(function() sv.from_env("SUPERVISE_GROUP=g") end)
    assert.has_error(function() sv.from_env(with("SUPERVISE_GROUP", true)) end)
    assert.has_error(function() sv.from_env(with("SUPERVISE_PURPOSE", "a\0b")) end)
    -- Keys that are not SUPERVISE_* variables are left alone.
    local t = with("HOME", true)
    t[1] = false
    assert.equals(3, assert(sv.from_env(t)).ordinal)
  end)
end)
