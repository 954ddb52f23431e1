# frozen_string_literal: true

# test_durability.rb: Hello's durability (docs/durability.md) through the
# binding: known and ok from a healthy supervisor; lost, with its reason,
# while the state directory is full, and back once there is room again.
#
# The full case puts state_dir on a 64 KiB tmpfs of its own, as
# tests/integration/integration_durability.c does. Mounting needs root
# (CAP_SYS_ADMIN); without it the case is skipped, saying why. It fills the
# tmpfs to the last byte, restarts workers (each restart is journaled) until
# Hello says durability is lost, bounded by a number of restarts, then
# removes the filler and waits, with a deadline, for the daemon's
# once-a-second snapshot to bring durability back. Workers are /bin/sleep.
require_relative "helper"
require "open3"

class TestDurability < Minitest::Test
  GROUP = "sleepers"
  NW = 2
  # Restarts tried before durability must be reported lost.
  MAX_CHURN = 200
  # Durability back after the repair: the daemon retries every second.
  RESTORE_S = 15

  def groups
    [{ name: GROUP, count: NW, purpose: "sleep while the ruby binding reads durability",
       argv: ["/bin/sleep", "3600"], options: { min_uptime_ms: 0 } }]
  end

  def now_ms
    Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  end

  def test_durability_known_and_ok
    before = now_ms
    sup = SvTest::Supervisor.new(groups)
    h = begin
      sup.client(&:hello)
    ensure
      sup.stop
    end
    d = h.durability
    assert_kind_of Supervise::Durability, d
    assert h.feature?("durable.status")
    assert d.known?
    assert d.ok?
    assert_equal "", d.reason
    assert_equal "", d.message
    assert_operator d.since_ms, :>=, before - 1000
    assert_operator d.since_ms, :<=, now_ms + 1000
    assert_equal d.since_ms, (d.since.to_r * 1000).to_i
    assert d.frozen?
    refute Supervise::Durability::UNKNOWN.known?
    assert_nil Supervise::Durability::UNKNOWN.since
  end

  # mount_tmpfs mounts a 64 KiB tmpfs on path; returns nil or why it cannot.
  def mount_tmpfs(path)
    return "not root: mounting a tmpfs for state_dir needs CAP_SYS_ADMIN" unless Process.euid.zero?

    out, st = Open3.capture2e("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", path)
    st.success? ? nil : "cannot mount a tmpfs on #{path}: #{out.strip}"
  end

  # fill writes path/filler until the filesystem refuses a byte.
  def fill(path)
    File.open(File.join(path, "filler"), "wb") do |f|
      f.sync = true
      chunk = "x" * 4096
      loop do
        f.syswrite(chunk)
      rescue Errno::ENOSPC
        break if chunk.size == 1

        chunk = chunk[0, chunk.size / 2]
      end
    end
  end

  # restart restarts one worker and waits until its successor runs.
  def restart(client, ordinal)
    gen = client.status(GROUP, ordinal).generation
    client.restart(GROUP, ordinal, expected_generation: gen)
    SvTest.wait_for("#{GROUP}/#{ordinal} after generation #{gen}", timeout: 10) do
      w = client.status(GROUP, ordinal)
      w.generation > gen && w.state == :running
    end
  end

  def test_durability_lost_on_a_full_state_dir
    top = Dir.mktmpdir("sv-rb-dur.")
    mnt = File.join(top, "state")
    Dir.mkdir(mnt)
    why = mount_tmpfs(mnt)
    if why
      FileUtils.rm_rf(top)
      skip why
    end
    begin
      sup = SvTest::Supervisor.new(groups, top: "state_dir = #{SvTest.q(mnt)};")
      sup.client do |c|
        SvTest.wait_for("workers running", timeout: 10) { c.list(GROUP).all? { |w| w.state == :running } }
        assert c.hello.durability.ok?
        broke = now_ms
        fill(mnt)
        d = nil
        MAX_CHURN.times do |n|
          restart(c, n % NW)
          d = c.hello.durability
          break unless d.ok?
        end
        assert d.known?
        refute d.ok?, "still durable after #{MAX_CHURN} restarts"
        assert_equal "ENOSPC", d.reason
        assert_match(/No space left on device/, d.message)
        assert_operator d.since_ms, :>=, broke
        assert_operator d.since_ms, :<=, now_ms + 1000
        # Supervision goes on meanwhile.
        restart(c, 0)
        refute c.hello.durability.ok?
        # Room again: a snapshot succeeds within a few seconds.
        File.unlink(File.join(mnt, "filler"))
        d = SvTest.wait_for("durability back", timeout: RESTORE_S) do
          x = c.hello.durability
          x.ok? ? x : nil
        end
        assert_equal "", d.reason
        assert_equal "", d.message
      end
    ensure
      sup&.stop
      system("umount", "-l", mnt, %i[out err] => File::NULL) unless why
      FileUtils.rm_rf(top)
    end
  end
end
