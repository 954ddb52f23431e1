# frozen_string_literal: true

# test_activity_status.rb: the activity fields of Supervise::Worker
# (docs/activity.md) against a real supervised. A worker that stays inside
# "request" > "db query" shows one in-flight activity named
# "request: db query" whose age grows; an idle worker of the same daemon
# (the control) shows nothing.
require_relative "helper"

class TestActivityStatus < Minitest::Test
  WORKER = File.join(SvTest::ROOT, "test", "support", "activity_worker.rb")
  GROUPS = [
    { name: "busy", count: 1, purpose: "inside an activity", script: WORKER, mode: "busy" },
    { name: "idle", count: 1, purpose: "in no activity", script: WORKER, mode: "idle" }
  ].freeze

  def sup
    SvTest.shared(:activity_status, GROUPS)
  end

  def test_a_busy_worker_shows_its_oldest_activity
    r = sup.result("busy", 0)
    assert_equal 2, r["depth"], "the worker recorded both scopes"
    sup.client do |c|
      # The supervisor's view is at most 100 ms stale: poll with a deadline.
      w = SvTest.wait_for("busy[0] to show its activity") { (x = c.status("busy", 0)).busy? && x }
      assert_equal r["pid"], w.pid
      assert_equal 1, w.activities
      assert_equal "request: db query", w.activity
      assert_operator w.activity_age, :>=, 0.0
      later = SvTest.wait_for("the activity to age") do
        (x = c.status("busy", 0)).activity_age > w.activity_age && x
      end
      assert_equal "request: db query", later.activity
      listed = c.list("busy").first
      assert_equal [1, "request: db query"], [listed.activities, listed.activity]
    end
  end

  def test_an_idle_worker_shows_nothing
    r = sup.result("idle", 0)
    assert_equal 0, r["depth"]
    sup.client do |c|
      w = c.status("idle", 0)
      assert_equal r["pid"], w.pid
      assert_equal [0, "", 0.0], [w.activities, w.activity, w.activity_age]
      refute w.busy?
      refute w.draining
    end
  end
end
