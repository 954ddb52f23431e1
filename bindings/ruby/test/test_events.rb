# frozen_string_literal: true

# test_events.rb: the event reader, groups, reset and restart with an
# expected generation, against a real supervised. A subscription is live
# only once the supervisor has taken the reader's connection (PUB keeps
# nothing for a reader not yet connected), so a test first asks for a no-op
# scale, which publishes group_scaled, and waits for that event: no sleep.
require_relative "helper"

class TestEvents < Minitest::Test
  N = 2
  GROUPS = [
    { name: "ev", count: N, purpose: "watched by the event tests", argv: ["/bin/sleep", "3600"] }
  ].freeze

  def setup
    @sup = SvTest::Supervisor.new(GROUPS) # each test restarts workers: its own daemon
    @sup.client do |c|
      SvTest.wait_for("both workers running") { c.list("ev").map(&:state) == [:running] * N }
    end
  end

  def teardown
    @sup&.stop
  end

  # next_matching reads reader until an event satisfies the block, within
  # the deadline (monotonic seconds); every event read goes into seen.
  def next_matching(reader, deadline, seen = [])
    loop do
      left = deadline - SvTest.now
      flunk "no matching event; saw #{seen.map(&:to_h)}" if left <= 0
      ev = reader.next_event(timeout: left)
      next unless ev

      seen << ev
      return ev if yield ev
    end
  end

  # The PUB socket may attach a new reader a moment after it connects (an
  # event published before is not delivered): scale again until one arrives.
  def sync(client, reader)
    deadline = SvTest.now + 10
    loop do
      client.scale("ev", N)
      begin
        next_matching(reader, [deadline, SvTest.now + 0.3].min) { |e| e.kind == :group_scaled && e.group == "ev" }
        return
      rescue Minitest::Assertion
        raise if SvTest.now >= deadline
      end
    end
  end

  def test_events_see_a_restart
    @sup.client do |c|
      assert c.hello.events_url.end_with?("/events.sock")
      one = c.events(prefix: "w/ev/1/") # opened before the sync below
      every = c.events
      begin
        sync(c, every)
        old = c.status("ev", 1)
        assert_equal 0, old.generation
        c.restart("ev", 1, expected_generation: 0)
        deadline = SvTest.now + 15
        [every, one].each do |reader|
          seen = []
          stopping = next_matching(reader, deadline, seen) { |e| e.kind == :stopping && e.group == "ev" && e.ordinal == 1 }
          started = next_matching(reader, deadline, seen) { |e| e.kind == :started && e.group == "ev" && e.ordinal == 1 }
          assert_equal [0, old.pid, "reason=restart"], [stopping.generation, stopping.pid, stopping.details]
          assert_equal 1, started.generation
          refute_includes [0, old.pid], started.pid
          assert_operator stopping.seq, :<, started.seq
          assert stopping.worker? && started.worker?
          assert_kind_of Time, started.time
          assert_in_delta Time.now.to_f, started.time.to_f, 60
          assert started.frozen?
          assert_equal [["ev", 1]], seen.map { |e| [e.group, e.ordinal] }.uniq if reader.equal?(one)
        end
        assert_equal 1, c.status("ev", 1).generation
      ensure
        one.close
        every.close
      end
      assert one.closed?
      assert_raises(IOError) { one.next_event(timeout: 0) }
      one.close # twice is fine
    end
  end

  # pinger calls scale (a no-op publishing group_scaled) every 50 ms until
  # stopped or 20 s have passed: for block forms, which cannot sync before
  # their block runs.
  def pinger
    stop = false
    deadline = SvTest.now + 20
    t = Thread.new do
      @sup.client do |c|
        until stop || SvTest.now > deadline
          c.scale("ev", N)
          sleep 0.05
        end
      end
    end
    yield
  ensure
    stop = true
    t&.join
  end

  def test_enumerator_and_timeouts
    ENV["SUPERVISE_URL"] = @sup.url # the module-level reader finds events.sock beside it
    reader = Supervise.events(prefix: "g/ev/", wait: 10)
    @sup.client do |c|
      sync(c, reader)
      c.scale("ev", N)
      ev = reader.each.next # an Enumerator
      assert_equal [:group_scaled, "ev", false, "previous=#{N} count=#{N}"],
                   [ev.kind, ev.group, ev.worker?, ev.details]
      assert_equal [0, 0, 0], [ev.ordinal, ev.generation, ev.pid]
      assert_nil reader.next_event(timeout: 0.2)
      reader.wait = 0.1
      assert_raises(Supervise::TimedOut) { reader.each { flunk "no event expected" } }
    end
  ensure
    reader&.close
    ENV.delete("SUPERVISE_URL")
  end

  def test_block_form_breaks_and_closes
    ENV["SUPERVISE_URL"] = @sup.url
    kept = nil
    got = pinger do
      Supervise.events(prefix: "g/ev/", wait: 10) do |ev|
        kept = ObjectSpace.each_object(Supervise::Events).find { |r| !r.closed? && r.prefix == "g/ev/" }
        break ev
      end
    end
    assert_equal [:group_scaled, "ev"], [got.kind, got.group]
    assert kept&.closed?, "the block form closes its reader"
    assert_raises(ArgumentError) { Supervise.events(prefix: "w/#{'x' * 300}") }
    assert_raises(ArgumentError) { Supervise.events(prefix: :w) }
    dir = Dir.mktmpdir("sv-rb-none.")
    assert_raises(Supervise::ConnectFailed) { Supervise.events(url: "ipc://#{dir}/none.sock", timeout: 0.2) }
  ensure
    FileUtils.rm_rf(dir) if dir
    ENV.delete("SUPERVISE_URL")
  end

  def test_groups_reset_and_conflict
    @sup.client do |c|
      info = c.groups("ev").first
      assert_equal ["ev", N, "watched by the event tests", false, ""],
                   [info.name, info.count, info.purpose, info.failed?, info.failure_reason]
      assert_equal %w[permanent one_for_one], [info.restart, info.strategy]
      assert_equal [N, N], [info.running, info.ready]
      assert_equal ["ev"], c.groups.map(&:name)
      assert_raises(Supervise::NotFound) { c.groups("nope") }
      reset_sent = false
      pinger do
        c.events(prefix: "g/ev/", wait: 10) do |ev|
          if ev.kind == :group_scaled && !reset_sent # the subscription is live
            assert_nil c.reset("ev") # not failed: still accepted
            reset_sent = true
          elsif ev.kind == :group_reset
            break
          end
        end
      end
      assert reset_sent
      refute c.groups("ev").first.failed?
      assert_raises(Supervise::NotFound) { c.reset("nope") }
      before = c.status("ev", 0)
      e = assert_raises(Supervise::Conflict) { c.restart("ev", 0, expected_generation: before.generation + 5) }
      assert_equal 11, e.code
      refute_empty e.detail
      after = c.status("ev", 0)
      assert_equal [before.generation, before.pid, :running], [after.generation, after.pid, after.state]
      assert_raises(ArgumentError) { c.restart("ev", 0, expected_generation: -1) }
    end
  end
end
