# frozen_string_literal: true

# test_client.rb: Client against a real supervised: hello, list/status,
# scale/stop, errors from the supervisor mapped to classes, timeouts, the
# block form, closing.
require_relative "helper"

class TestClient < Minitest::Test
  GROUPS = [
    { name: "steady", count: 2, purpose: "listed by a test", mode: "identity" },
    { name: "elastic", count: 1, purpose: "scaled by a test", mode: "identity" }
  ].freeze

  def sup
    SvTest.shared(:client, GROUPS)
  end

  def test_hello
    h = sup.client(&:hello)
    assert_equal 1, h.version
    refute_empty h.server_name
    refute_empty h.supervisor_id
    assert_kind_of Array, h.features
    assert h.frozen?
  end

  def test_block_form_returns_value_and_closes
    kept = nil
    v = Supervise::Client.open(sup.url, timeout: 5) do |c|
      kept = c
      c.hello.version
    end
    assert_equal 1, v
    assert kept.closed?
    assert_raises(IOError) { kept.hello }
    kept.close # twice is fine
  end

  def test_block_form_closes_on_exception
    kept = nil
    assert_raises(RuntimeError) do
      Supervise::Client.open(sup.url) do |c|
        kept = c
        raise "boom"
      end
    end
    assert kept.closed?
  end

  def test_list_and_status
    (0..1).each { |i| sup.result("steady", i) } # both are up
    ws = sup.client { |c| c.list("steady") }
    assert_equal [0, 1], ws.map(&:ordinal).sort
    ws.each do |w|
      assert_equal "steady", w.group
      assert_equal :running, w.state
      assert_equal "listed by a test", w.purpose
      assert_operator w.pid, :>, 0
      assert_operator w.uptime, :>=, 0
    end
    all = sup.client(&:list)
    assert_equal %w[elastic steady], all.map(&:group).uniq.sort
    w = sup.client { |c| c.status("steady", 1) }
    assert_equal 1, w.ordinal
    assert_equal ws.find { |x| x.ordinal == 1 }.pid, w.pid
  end

  def test_scale_and_stop
    sup.client do |c|
      assert_equal 1, c.scale("elastic", 2)
      r = sup.result("elastic", 1)
      assert_equal 1, r.dig("live", "ordinal")
      assert_equal 2, r.dig("live", "group_size")
      assert_equal 2, c.stop("elastic")
      assert_equal 0, c.scale("elastic", 1)
    end
  end

  def test_errors_from_the_supervisor
    sup.client do |c|
      e = assert_raises(Supervise::NotFound) { c.scale("no-such-group", 1) }
      assert_equal 4, e.code
      assert_equal "ENOTFOUND", e.name
      refute_empty e.detail
      assert_includes e.message, e.detail
      assert_raises(Supervise::NotFound) { c.stop("no-such-group") }
      assert_raises(Supervise::NotFound) { c.list("no-such-group") }
      assert_raises(Supervise::NotFound) { c.status("steady", 99) }
      assert_raises(Supervise::Exhausted) { c.scale("elastic", 2000) }
      # a malformed group name is refused by the C client before sending
      e = assert_raises(Supervise::InvalidArgument) { c.list("x" * 65) }
      assert_equal 100, e.code
      # the client still works after errors
      assert_equal 1, c.hello.version
    end
  end

  def test_timeouts
    sup.client do |c|
      c.hello # connected
      e = assert_raises(Supervise::TimedOut) { c.hello(timeout: 0) }
      assert_equal 102, e.code
      assert_equal 1, c.hello(timeout: nil).version
      assert_equal 1, c.hello(timeout: 0.5).version
      assert_raises(ArgumentError) { c.hello(timeout: -1) }
      assert_raises(ArgumentError) { c.hello(timeout: "1") }
    end
  end

  def test_connect_failure
    dir = Dir.mktmpdir("sv-rb-none.")
    t0 = SvTest.now
    e = assert_raises(Supervise::ConnectFailed) do
      Supervise::Client.new("ipc://#{dir}/control.sock", timeout: 0.3)
    end
    assert_equal 103, e.code
    assert_operator SvTest.now - t0, :<, 3, "the timeout bounds the connect"
  ensure
    FileUtils.rm_rf(dir)
  end

  def test_bad_arguments
    sup.client do |c|
      assert_raises(ArgumentError) { c.status("steady", -1) }
      assert_raises(ArgumentError) { c.scale("elastic", 2**32) }
      assert_raises(ArgumentError) { c.list("a\0b") }
      assert_raises(ArgumentError) { c.list(42) }
    end
    assert_raises(ArgumentError) { Supervise::Client.new("ipc:///#{'x' * 600}") }
  end
end
