# frozen_string_literal: true

# test_readiness.rb: worker calls against a real supervised: ready with a
# status line in a group that uses readiness, heartbeat against a group's
# watchdog, and the typed errors outside a worker and in a descendant of
# one. Each behaviour has a control group that does not make the call (a
# worker that never calls ready stays :starting; one that sends no
# heartbeat is restarted by the watchdog), so the assertions can fail.
require_relative "helper"

class TestReadiness < Minitest::Test
  WATCHDOG_MS = 1000
  GROUPS = [
    { name: "waiter", count: 1, purpose: "reports ready", mode: "ready", args: ["up"],
      options: { ready: true } },
    { name: "sleeper", count: 1, purpose: "never reports ready", argv: ["/bin/sleep", "3600"],
      options: { ready: true } },
    { name: "beater", count: 1, purpose: "sends heartbeats", mode: "heartbeat", args: ["200"],
      options: { ready: true, watchdog_ms: WATCHDOG_MS } },
    { name: "silent", count: 1, purpose: "sends no heartbeat", argv: ["/bin/sleep", "3600"],
      options: { watchdog_ms: WATCHDOG_MS } }
  ].freeze

  def sup
    SvTest.shared(:readiness, GROUPS)
  end

  def test_ready_with_status_shows_in_the_list
    r = sup.result("waiter", 0)
    assert_equal "ok", r["ready"]
    sup.client do |c|
      w = SvTest.wait_for("waiter to be ready") { (x = c.status("waiter", 0)).ready? && x }
      assert_equal r["pid"], w.pid
      assert_equal :running, w.state
      assert_equal "up", w.status_text
      assert_equal [0, 0, 0], [w.generation, w.fast_failures, w.restart_in_ms]
      listed = c.list.select { |x| x.group == "waiter" }
      assert_equal [[true, "up"]], listed.map { |x| [x.ready, x.status_text] }
      other = c.status("sleeper", 0) # the control: no ready call
      assert_equal [:starting, false, ""], [other.state, other.ready, other.status_text]
      info = c.groups.to_h { |g| [g.name, g] }
      assert_equal [1, 0], [info["waiter"].ready, info["waiter"].starting]
      assert_equal [0, 1], [info["sleeper"].ready, info["sleeper"].starting]
    end
  end

  def test_ready_in_a_descendant_is_refused
    r = sup.result("waiter", 0)
    assert_equal [Supervise::PermissionDenied::CODE, "EPERM"], r["descendant"]
    assert_equal 0, r["descendant_exit"]
  end

  def test_heartbeat_keeps_the_worker_past_the_watchdog
    sup.client do |c|
      # Wait on a deadline until the heartbeating worker has run three
      # watchdog intervals and the silent one was restarted by its watchdog.
      beater, silent = SvTest.wait_for("three watchdog intervals", timeout: 30) do
        b = c.status("beater", 0)
        s = c.status("silent", 0)
        [b, s] if b.uptime * 1000 >= 3 * WATCHDOG_MS && s.generation >= 1
      end
      assert_equal [0, 0, :running], [beater.generation, beater.restarts, beater.state]
      assert_operator silent.generation, :>=, 1, "the control: the watchdog works"
    end
  end

  def test_worker_calls_outside_a_worker
    sup.client do |c|
      [-> { c.ready }, -> { c.ready("x") }, -> { c.heartbeat }, -> { c.set_status("x") }].each do |call|
        e = assert_raises(Supervise::NotAWorker) { call.call }
        assert_equal 10, e.code
        refute_empty e.detail
      end
      assert_raises(ArgumentError) { c.ready("x" * 1025) }
      assert_raises(ArgumentError) { c.ready(:up) }
      assert_raises(ArgumentError) { c.set_status(nil) }
    end
    # The default client without SUPERVISE_URL: refused with no round trip.
    saved = ENV.delete("SUPERVISE_URL")
    begin
      assert_raises(Supervise::NotAWorker) { Supervise.ready("up") }
      assert_raises(Supervise::NotAWorker) { Supervise.heartbeat }
      assert_raises(Supervise::NotAWorker) { Supervise.status("up") }
    ensure
      ENV["SUPERVISE_URL"] = saved if saved
    end
  end
end
