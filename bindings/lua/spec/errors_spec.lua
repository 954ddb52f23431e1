-- errors_spec.lua — the error model: nil, err with a typed error object;
-- supervise.check raising that object; the typed error outside a worker;
-- an error sent by the supervisor; names for every code, numbers kept for
-- unknown ones; argument errors raised.
local H = require "spec.helper"
local sv = H.sv

-- Every sv_err of supervise.h (its SV_ERR_MAP table), by name and value, so
-- a code added to the header without a name in the binding fails here.
local CODES = {}
do
  local header = H.spec_dir .. "/../../../libsupervise/include/supervise/supervise.h"
  local text = assert(H.read_file(header), "cannot read " .. header)
  for name, value in text:gmatch("XX%((%u+),%s*(%d+),") do
    CODES[name] = tonumber(value)
  end
  assert(CODES.ENOTFOUND == 4 and CODES.ENOTWORKER == 10, "SV_ERR_MAP not parsed")
end

describe("error objects", function()
  it("name every sv_err code and export it as a constant", function()
    local n = 0
    for name, code in pairs(CODES) do
      n = n + 1
      assert.equals(code, sv[name], name)
      assert.equals(name, sv.err_name(code))
      local e = sv.error(code)
      assert.is_true(sv.is_error(e))
      assert.equals(code, e.code)
      assert.equals(name, e.name)
      assert.equals(sv.strerror(code), e.message)
      assert.is_true(e:is(name))
      assert.is_true(e:is(code))
    end
    assert.is_true(n >= 18)
  end)

  it("keep the number of an unknown code", function()
    local e = sv.error(4242, "from a newer server")
    assert.equals(4242, e.code)
    assert.equals("UNKNOWN", e.name)
    assert.equals("from a newer server", e.message)
    assert.equals("UNKNOWN (4242): from a newer server", tostring(e))
    assert.equals("UNKNOWN", sv.err_name(-1))
  end)

  it("are not confused with other tables", function()
    assert.is_false(sv.is_error({ code = 4, name = "ENOTFOUND" }))
    assert.is_false(sv.is_error("ENOTFOUND"))
    assert.is_false(sv.is_error(nil))
  end)

  it("check passes values through and raises the error object itself", function()
    assert.same({ 1, 2, 3 }, { sv.check(1, 2, 3) })
    local e = sv.error(sv.EBUSY, "later", "scale")
    local ok, got = pcall(sv.check, nil, e)
    assert.is_false(ok)
    assert.equals(e, got)
    assert.equals("supervise.scale: EBUSY (7): later", tostring(got))
    -- Lua's own assert() raises the error object the same way (busted
    -- replaces the global assert, so ask a plain interpreter).
    assert.equals("ECONNECT 103", H.lua_sub('local sv = require "supervise" '
      .. 'local ok, e = pcall(function() return assert(sv.scale("x", 1, 0)) end) '
      .. 'io.write(e.name, " ", e.code)', "env SUPERVISE_URL=ipc:///nonexistent/x.sock"))
  end)
end)

describe("outside a supervised worker", function()
  local d

  setup(function()
    d = H.start { groups = { { name = "other", count = 1 } } }
  end)
  teardown(function() H.stop(d) end)

  it("whoami on a client gets ENOTWORKER from the supervisor", function()
    local c = assert(sv.open(d.url, 5000))
    local id, err = c:whoami(5000)
    assert.is_nil(id)
    assert.is_true(sv.is_error(err))
    assert.equals(sv.ENOTWORKER, err.code)
    assert.equals("ENOTWORKER", err.name)
    assert.equals("whoami", err.op)
    assert.is_true(#err.message > 0)
    local ok, raised = pcall(sv.check, c:whoami(5000))
    assert.is_false(ok)
    assert.equals(sv.ENOTWORKER, raised.code)
    c:close()
  end)

  it("supervise.whoami gets ENOTWORKER from the supervisor with $SUPERVISE_URL set", function()
    local out = H.lua_sub(
      'local sv = require "supervise" local id, e = sv.whoami(5000) io.write(e.name, " ", e.code)',
      "env SUPERVISE_URL=" .. H.quote(d.url))
    assert.equals("ENOTWORKER 10", out)
  end)

  it("supervise.whoami gets ENOTWORKER without $SUPERVISE_URL, with no round trip", function()
    local out = H.lua_sub(
      'local sv = require "supervise" local id, e = sv.whoami(0) io.write(tostring(id), " ", e.name)',
      "env -u SUPERVISE_URL")
    assert.equals("nil ENOTWORKER", out)
  end)

  it("from_env gets ENOTWORKER without the variables, EINVAL with a bad one", function()
    -- The process environment, read by sv_identity_from_env (the contract
    -- is the C library's: identity_env_spec.lua checks it with tables).
    local code = 'local sv = require "supervise" local id, e = sv.from_env() io.write(tostring(id), " ", e.name)'
    local all = "SUPERVISE_SUPERVISOR_ID=s SUPERVISE_PURPOSE= "
    assert.equals("nil ENOTWORKER",
      H.lua_sub(code, "env -u SUPERVISE_GROUP -u SUPERVISE_ORDINAL -u SUPERVISE_GENERATION"))
    assert.equals("nil ENOTWORKER",
      H.lua_sub(code, "env -u SUPERVISE_PURPOSE SUPERVISE_SUPERVISOR_ID=s SUPERVISE_GROUP=g SUPERVISE_ORDINAL=7 SUPERVISE_GENERATION=3"))
    assert.equals("nil EINVAL",
      H.lua_sub(code, "env " .. all .. "SUPERVISE_GROUP=g SUPERVISE_ORDINAL=-1 SUPERVISE_GENERATION=0"))
    assert.equals("nil EINVAL",
      H.lua_sub(code, "env " .. all .. "SUPERVISE_GROUP=g SUPERVISE_ORDINAL=4294967296 SUPERVISE_GENERATION=0"))
    -- Well-formed variables are believed as they are (no round trip); an
    -- empty purpose is a group without one.
    assert.equals("g 7 3 process []",
      H.lua_sub('local sv = require "supervise" local id = sv.from_env() '
                .. 'io.write(id.group, " ", id.ordinal, " ", id.generation, " ", id.kind, " [", id.purpose, "]")',
                "env " .. all .. "SUPERVISE_GROUP=g SUPERVISE_ORDINAL=7 SUPERVISE_GENERATION=3"))
  end)
end)

describe("errors from the supervisor", function()
  local d, c

  setup(function()
    d = H.start { groups = { { name = "real", count = 1 } } }
    c = assert(sv.open(d.url, 5000))
  end)
  teardown(function()
    c:close()
    H.stop(d)
  end)

  it("scale of an unknown group is ENOTFOUND with the supervisor's message", function()
    local prev, err = c:scale("no-such-group", 2, 5000)
    assert.is_nil(prev)
    assert.equals(sv.ENOTFOUND, err.code)
    assert.equals("ENOTFOUND", err.name)
    assert.equals("scale", err.op)
    assert.matches("no%-such%-group", err.message)
    assert.matches("^supervise%.scale: ENOTFOUND %(4%): ", tostring(err))
  end)

  it("status of a missing ordinal, list, stop and restart of an unknown group are ENOTFOUND", function()
    assert.equals("ENOTFOUND", select(2, c:status("real", 9, 5000)).name)
    assert.equals("ENOTFOUND", select(2, c:list("no-such-group", 5000)).name)
    assert.equals("ENOTFOUND", select(2, c:stop("no-such-group", 5000)).name)
    assert.equals("ENOTFOUND", select(2, c:restart("no-such-group", 0, 5000)).name)
  end)

  it("methods name arguments counting from after the client", function()
    local ok, e = pcall(function() return c:scale("real", -1) end)
    assert.is_false(ok)
    assert.matches("bad argument #2 to 'scale' %(must be in 0..4294967295", e)
    ok, e = pcall(c.restart, c, "real", 0, "soon")
    assert.is_false(ok)
    assert.matches("bad argument #4 to '.-' %(number expected", e)
  end)

  it("scale above max_count is EEXHAUSTED", function()
    local _, err = c:scale("real", 2000, 5000)
    assert.equals(sv.EEXHAUSTED, err.code)
  end)

  it("the module-level functions report the same errors", function()
    local out = H.lua_sub(
      'local sv = require "supervise" local p, e = sv.scale("nope", 1, 5000) io.write(tostring(p), " ", e.name, " ", e.code)',
      "env SUPERVISE_URL=" .. H.quote(d.url))
    assert.equals("nil ENOTFOUND 4", out)
  end)
end)

describe("argument errors", function()
  it("raise for wrong types and out-of-range numbers", function()
    local c = sv.open("ipc:///nonexistent/none.sock", 0) -- nil: ECONNECT
    assert.is_nil(c)
    assert.has_error(function() sv.open(42) end)
    assert.has_error(function() sv.open("ipc:///x\0y") end)
    assert.has_error(function() sv.open(("x"):rep(600)) end)
    assert.has_error(function() sv.open(nil, -2) end)
    assert.has_error(function() sv.open(nil, 2 ^ 31) end)
    assert.has_error(function() sv.sleep(-1) end)
    assert.has_error(function() sv.error("x") end)
  end)

  it("name the caller's argument, before any connection is tried", function()
    local function msg(f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok)
      return e
    end
    -- Module-level calls check their arguments before opening a client.
    assert.matches("bad argument #1 to '[%w.]*scale' %(string expected",
                   msg(sv.scale, 1))
    assert.matches("bad argument #2 to '[%w.]*status' %(must be in 0..4294967295",
                   msg(sv.status, "g", -1))
    assert.matches("bad argument #1 to '[%w.]*list' %(string or nil expected",
                   msg(sv.list, 5))
    assert.matches("bad argument #1 to '[%w.]*whoami' %(number expected",
                   msg(sv.whoami, "x"))
  end)
end)
