# frozen_string_literal: true

# test_fork.rb: prefork safety. A worker uses the binding (the default
# client is open), then forks 4 children with Process.fork; each child calls
# the binding at once and answers through a pipe. All 4 must answer with the
# worker's identity, none may abort or hang (the worker kills a child still
# running after its deadline), and the parent must still work afterwards.
# The second case forks while another thread of the parent is inside a call.
require_relative "helper"

class TestFork < Minitest::Test
  GROUPS = [
    { name: "prefork", count: 1, purpose: "forks 4 children", mode: "fork" },
    { name: "busy", count: 1, purpose: "forks during a call", mode: "fork_busy" }
  ].freeze

  def sup
    SvTest.shared(:fork, GROUPS)
  end

  def check(group)
    r = sup.result(group, 0, timeout: 60)
    before = r.fetch("before")
    assert_equal [group, 0, 0, r["pid"]], before.values_at("group", "ordinal", "generation", "pid")
    children = r.fetch("children")
    assert_equal 4, children.size
    report = children.map do |c|
      "pid #{c['pid']}: hung=#{c['hung']} exit=#{c['exitstatus'].inspect} " \
        "signal=#{c['termsig'].inspect} answer=#{c['answer'].inspect}"
    end.join("\n")
    children.each do |c|
      refute c["hung"], "child did not finish before the deadline:\n#{report}"
      assert_nil c["termsig"], "child killed by a signal:\n#{report}"
      assert_equal 0, c["exitstatus"], report
      a = c.fetch("answer") || flunk("no answer:\n#{report}")
      assert a["ok"], report
      assert_equal c["pid"], a["pid"]
      id = a.fetch("identity")
      assert_equal [group, 0, 0, r["pid"]], id.values_at("group", "ordinal", "generation", "pid"),
                   "a child of the worker is identified as the worker"
      assert_equal before["supervisor_id"], a["supervisor_id"]
    end
    assert_equal 4, children.map { |c| c["pid"] }.uniq.size
    assert_equal before, r.fetch("after"), "the parent still works"
    assert_equal before["supervisor_id"], r["fresh_hello"]
    r
  end

  def test_fork_after_use
    check("prefork")
  end

  def test_fork_during_a_call_in_another_thread
    r = check("busy")
    assert_operator r["busy_calls"], :>=, 1
  end
end
