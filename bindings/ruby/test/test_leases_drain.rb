# frozen_string_literal: true

# test_leases_drain.rb: leases and drain through the Ruby binding, against a
# real supervised with three pools (files: 2 slots with a file each; p: 1
# slot; forkpool: 6 slots) and two groups: "drainer" (a Ruby worker that
# listens for its drain notice; drain_signal "none", so the notice is all it
# gets) and "forker" (a worker holding a lease that forks 4 children, each
# taking one of its own through a session). The test process is no worker:
# it holds leases through sessions and, as the daemon's uid, may drain.
require_relative "helper"

class TestLeasesDrain < Minitest::Test
  WORKER = File.join(SvTest::ROOT, "test", "support", "lease_drain_worker.rb")
  POOLS = <<~POOLS
    pools = (
      { name = "files"; slots = 2; path = "{dir}/res/{slot}.dat"; on_release = "truncate"; },
      { name = "p"; slots = 1; },
      { name = "forkpool"; slots = 6; }
    );
  POOLS

  def sup
    @@sup ||= begin # rubocop:disable Style/ClassVars
      out = Dir.mktmpdir("sv-rb-ld.")
      @@out = out # rubocop:disable Style/ClassVars
      Minitest.after_run { FileUtils.rm_rf(out) }
      groups = [
        { name: "drainer", count: 1, purpose: "drains on its notice",
          argv: SvTest.ruby_argv(WORKER, "drain", File.join(out, "drain.json")),
          options: { ready: true, drain_signal: "none", drain_timeout_ms: 10_000 } },
        { name: "forker", count: 1, purpose: "holds a lease and forks",
          argv: SvTest.ruby_argv(WORKER, "fork", File.join(out, "fork.json"), "forkpool") }
      ]
      SvTest.shared(:leases_drain, groups, top: POOLS)
    end
  end

  def out(name)
    sup
    File.join(@@out, name)
  end

  def test_acquire_release_token_and_resource
    sup.client do |c|
      c.session(10) do |s|
        first = c.lease("files", slot: 1, session: s)
        assert_equal ["files", 1], [first.pool, first.slot]
        assert_operator first.token, :>, 0
        assert_equal File.join(sup.dir, "res", "1.dat"), first.resource
        assert File.exist?(first.resource)
        assert_equal "session:#{s.id}", first.holder
        assert_equal [[first.id, first.token]], c.leases("files", session: s).map { |l| [l.id, l.token] }
        first.release
        assert_empty c.leases("files", session: s)
        second = s.lease("files", slot: 1)
        assert_operator second.token, :>, first.token
        assert_equal second.token, second.renew.token
        second.release
      end
    end
  end

  def test_block_releases_on_exception
    sup.client do |c|
      c.session(10) do |s|
        held = nil
        assert_raises(ZeroDivisionError) do
          s.lease("p") do |l|
            held = l
            assert_equal [l.id], s.leases("p").map(&:id)
            1 / 0
          end
        end
        refute_nil held
        assert_empty s.leases("p")
        c.session(10) do |other|
          assert_equal 0, other.lease("p") { |l| l.slot }
        end
      end
    end
  end

  def test_block_returns_and_releases
    sup.client do |c|
      c.session(10) do |s|
        v = s.lease("p") { |l| [l.slot, s.leases("p").size] }
        assert_equal [0, 1], v
        assert_empty s.leases("p")
      end
    end
  end

  def test_non_holder_release_refused
    sup.client do |c|
      c.session(10) do |owner|
        c.session(10) do |thief|
          l = owner.lease("p")
          assert_raises(Supervise::PermissionDenied) { c.lease_release(l.id, session: thief) }
          assert_raises(Supervise::PermissionDenied) { c.lease_renew(l.id, session: thief) }
          assert_equal [l.id], owner.leases("p").map(&:id)
          l.release
        end
      end
    end
  end

  def test_busy_and_deadline
    sup.client do |c|
      c.session(10) do |a|
        c.session(10) do |b|
          a.lease("p") do
            assert_raises(Supervise::Exhausted, Supervise::Busy) { b.lease("p") }
            assert_raises(Supervise::DeadlinePassed) { b.lease("p", wait: 0.2, timeout: 3) }
          end
        end
      end
    end
  end

  def test_not_a_worker_needs_a_session
    sup.client do |c|
      assert_raises(Supervise::NotAWorker) { c.lease("p") }
    end
    assert_raises(Supervise::NotAWorker) { Supervise.lease("p") }
    assert_raises(Supervise::NotAWorker) { Supervise::Drain.new }
  end

  def test_drain_worker_acks_and_exits
    sup.client do |c|
      SvTest.wait_for("the drainer to be ready") { c.list("drainer").any?(&:ready) }
      worker = c.list("drainer").first
      first = c.drain("drainer", deadline: 10)
      assert_equal [["drainer", 0, worker.pid]], first.workers.map { |w| [w.group, w.ordinal, w.pid] }
      report = SvTest.wait_for("the drain to be done") do
        r = c.drain_report(first.id)
        r.done ? r : nil
      end
      row = report.workers.first
      seen = JSON.parse(File.read(out("drain.json")))
      assert_equal worker.pid, seen["pid"]
      assert_equal first.id, seen["notice"]["drain_id"]
      assert_equal "event", seen["notice"]["source"]
      assert_operator seen["notice"]["deadline_in_ms"], :>, 0
      assert_equal 1, seen["handler_calls"]
      assert_equal true, seen["draining"]
      assert row.acknowledged
      refute row.killed
      assert row.exited
      assert_equal 0, row.code
      assert_equal seen["served"], row.served
      refute(c.list("drainer").any? { |w| w.pid == worker.pid })
    end
  end

  def test_fork_children_take_leases_of_their_own
    path = out("fork.json")
    SvTest.wait_for("the forking worker's report (#{sup.log})", timeout: 30) { File.exist?(path) }
    r = JSON.parse(File.read(path))
    mine = r["mine"]
    assert_equal ["forkpool", 0], [mine["pool"], mine["slot"]]
    assert mine["holder"].start_with?("forker/0@"), mine["holder"]
    assert_equal mine["token"], r["renewed_token"]
    kids = r["children"]
    assert_equal ["exit 0"] * 4, kids.map { |k| k["status"] }, kids.inspect
    kids.each do |k|
      a = k["answer"]
      refute_nil a
      refute a.key?("error"), a.inspect
      assert_equal k["pid"], a["pid"]
      assert a["holder"].start_with?("session:"), a["holder"]
      assert_equal [a["id"]], a["listed"]
      refute_equal mine["slot"], a["slot"]
    end
    assert_equal 4, kids.map { |k| k["answer"]["id"] }.uniq.size
    sup.client do |c|
      assert_equal [mine["id"]], c.leases("forkpool").select { |l| l.holder == mine["holder"] }.map(&:id)
    end
  end
end
