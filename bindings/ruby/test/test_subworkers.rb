# frozen_string_literal: true

# test_subworkers.rb: sub-workers in Ruby (issue 8, "Nested workers"). Two
# workers of one group (max_subworkers = 4) run
# test/support/subworker_worker.rb, which registers Threads and
# Process.fork children through Supervise.thread_identity, subworker and
# child_identity and reports what the supervisor answered; the assertions
# are here. One worker is then restarted to check that a dead process's
# numbers are reclaimed and that its next generation inherits their memory.
require_relative "helper"

class TestSubWorkers < Minitest::Test
  WORKER = File.join(SvTest::ROOT, "test", "support", "subworker_worker.rb")
  GROUPS = [
    { name: "subw", count: 2, purpose: "threads and children as sub-workers",
      script: WORKER, mode: "subworkers", options: { max_subworkers: 4 } }
  ].freeze

  def sup
    SvTest.shared(:subworkers, GROUPS)
  end

  def report(ordinal, generation = 0)
    r = sup.result("subw", ordinal, generation, timeout: 60)
    assert_nil r["error"], r["error"]
    r
  end

  def process_frame(r)
    w = r.fetch("worker")
    ["process", w["ordinal"], "subw", w["generation"]]
  end

  def test_two_threads_get_0_and_1_under_their_process
    r = report(0)
    threads = r.fetch("threads")
    assert_equal %w[pool-0 pool-1], threads.keys.sort
    assert_equal [0, 1], threads.values_at("pool-0", "pool-1").map { |t| t["ordinal"] }
    threads.each do |name, t|
      assert_equal "thread", t["kind"]
      assert t["same"], "#{name}: registered once per thread"
      assert_equal r["pid"], t["pid"], "a thread's pid is its process's"
      assert_equal process_frame(r), t["parent"]
      assert_equal [process_frame(r), ["thread", t["ordinal"], name, t["generation"]]], t["context"]
    end
  end

  def test_a_thread_that_comes_back_takes_its_number_again
    r = report(0)
    first = r.fetch("threads")
    again = r.fetch("again")
    # pool-1 came back first, while 0 was the lowest free number: the label
    # memory gives it 1 again, with the next sub-generation.
    %w[pool-0 pool-1].each do |name|
      assert_equal first[name]["ordinal"], again[name]["ordinal"], name
      assert_equal first[name]["generation"] + 1, again[name]["generation"], name
    end
  end

  def test_two_processes_thread_0_are_told_apart_by_the_parent
    a = report(0)
    b = report(1)
    ta = a.dig("threads", "pool-0")
    tb = b.dig("threads", "pool-0")
    assert_equal [0, 0], [ta["ordinal"], tb["ordinal"]]
    refute_equal ta["parent"], tb["parent"]
    assert_equal [0, 1], [ta["parent"][1], tb["parent"][1]]
    refute_equal a["pid"], b["pid"]
  end

  def test_the_bound_gives_a_typed_error
    r = report(0)
    fill = r.fetch("fill")
    # Registered at once: 2 and 3 in either order (0 and 1 are held).
    assert_equal [2, 3], fill.values.map { |t| t["ordinal"] }.sort
    # A fifth live thread over max_subworkers = 4.
    assert_equal({ "error" => "Supervise::Exhausted" }, r["over"])
  end

  def test_the_block_form_releases_at_its_end
    s = report(0).fetch("scoped")
    assert s["same"], "thread_identity inside the block returns the block's identity"
    assert_equal "scoped", s.dig("inside", "context", 1, 2)
    assert s["raised"]
    # Released at the end of each block (the second by an exception): each
    # next block is a new grant of the same number.
    gens = [s["inside"], s["again"], s["third"]].map { |x| x["generation"] }
    assert_equal [s["inside"]["ordinal"]] * 3, [s["inside"], s["again"], s["third"]].map { |x| x["ordinal"] }
    assert_equal [gens[0], gens[0] + 1, gens[0] + 2], gens
  end

  def test_forked_children_get_process_p_process_c
    r = report(0)
    assert_equal 4, r["swept"], "the four ended holder threads are released"
    kids = r.fetch("children")
    assert_equal [0, 0], r["child_statuses"]
    assert_equal 2, kids.size
    kids.each do |k|
      assert_nil k["error"], k["error"]
      me = k.fetch("me")
      assert_equal "process", me["kind"]
      assert_equal k["pid"], me["pid"]
      refute_equal r["pid"], k["pid"]
      assert_equal process_frame(r), me["parent"]
      assert_equal [process_frame(r), ["process", me["ordinal"], me.dig("context", 1, 2), me["generation"]]],
                   me["context"]
      assert k["again"], "registered once per process"
      assert_equal me, k["who"], "the child's own whoami answers its sub-worker identity"
      assert_equal true, k["copy_eq_handle"], "the one-call copy reads two frames and the parent as the handle does"
      assert_equal true, k["reused"], "an unchanged answer gives back the same frozen Identity"
      assert_equal "Supervise::TooLarge", k["nested"], "a third level is refused"
    end
    assert_equal [0, 1], kids.map { |k| k.dig("me", "ordinal") }.sort
    assert_equal %w[kid-0 kid-1], kids.map { |k| k.dig("me", "context", 1, 2) }.sort
  end

  def test_a_dead_process_numbers_are_reclaimed_and_remembered
    old = report(1)
    sup.client { |c| c.restart("subw", 1, expected_generation: 0) }
    r = report(1, 1)
    assert_equal ["process", 1, "subw", 1], r.dig("threads", "pool-0", "parent")
    # The new generation's threads get their numbers (the dead process's
    # were reclaimed) and the same ones as before, with sub-generations that
    # keep growing across the worker's generations.
    %w[pool-0 pool-1].each do |name|
      assert_equal old.dig("threads", name, "ordinal"), r.dig("threads", name, "ordinal")
      assert_operator r.dig("threads", name, "generation"), :>, old.dig("again", name, "generation")
    end
  end

  def test_outside_a_worker
    saved = ENV.fetch("SUPERVISE_URL", nil)
    ENV.delete("SUPERVISE_URL")
    assert_raises(Supervise::NotAWorker) { Supervise.thread_identity }
    assert_raises(Supervise::NotAWorker) { Supervise.child_identity }
    assert_raises(Supervise::NotAWorker) { Supervise.subworker("x") { flunk "ran" } }
    assert_raises(ArgumentError) { Supervise.thread_identity(label: "x" * 65) }
  ensure
    ENV["SUPERVISE_URL"] = saved if saved
  end
end
