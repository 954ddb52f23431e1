# frozen_string_literal: true

# test_activity.rb: Supervise.activity, the scoped form of activities:
# nesting, popping on an exception, per-thread stacks, no-ops without a
# region and in a Process.fork child. The region is a temporary file given
# in SUPERVISE_ACTIVITY, as the supervisor would; what was recorded is read
# back from the file's bytes (docs/activity.md, "Region format"), not
# through the binding.
require_relative "helper"

class TestActivity < Minitest::Test
  SLOTS = 64
  SLOT0 = 64
  SLOT_SIZE = 960

  def setup
    @dir = Dir.mktmpdir("sv-act")
    @path = File.join(@dir, "region")
    File.write(@path, "")
    @saved = ENV.fetch("SUPERVISE_ACTIVITY", nil)
    ENV["SUPERVISE_ACTIVITY"] = @path
    Supervise::Activity.close!
  end

  def teardown
    Supervise::Activity.close!
    ENV["SUPERVISE_ACTIVITY"] = @saved
    FileUtils.rm_rf(@dir)
  end

  # recorded returns [open scopes over every slot, names of the entries].
  def recorded
    data = File.binread(@path)
    total = 0
    names = []
    SLOTS.times do |i|
      off = SLOT0 + (SLOT_SIZE * i)
      depth = data.byteslice(off + 4, 4).unpack1("L")
      total += depth
      [depth, 16].min.times do |e|
        raw = data.byteslice(off + 16 + (56 * e) + 8, 48)
        names << raw.split("\0", 2).first.to_s
      end
    end
    [total, names]
  end

  def test_nesting_composes_and_pops
    Supervise.activity("request") do
      Supervise.activity("db query") do
        assert_equal [2, ["request", "db query"]], recorded
        assert_equal 2, Supervise::Activity.depth
      end
      assert_equal [1, ["request"]], recorded
    end
    assert_equal [0, []], recorded
  end

  def test_block_value_is_returned
    assert_equal 42, Supervise.activity("x") { 42 }
  end

  def test_scope_pops_on_exception
    assert_raises(RuntimeError) do
      Supervise.activity("outer") do
        Supervise.activity("inner") do
          assert_equal 2, recorded.first
          raise "boom"
        end
      end
    end
    assert_equal [0, []], recorded
    assert_equal 0, Supervise::Activity.depth
  end

  def test_threads_have_their_own_stacks
    q_in = Queue.new
    q_go = Queue.new
    Supervise.activity("request") do
      t = Thread.new do
        Supervise.activity("indexing") do
          q_in << true
          q_go.pop
        end
      end
      q_in.pop
      assert_equal 1, Supervise::Activity.depth
      total, names = recorded
      assert_equal 2, total
      assert_equal %w[indexing request], names.sort
      q_go << true
      t.join(10)
    end
    assert_equal [0, []], recorded
  end

  def test_forked_child_records_nothing
    Supervise.activity("parent") do
      pid = Process.fork do
        code = Supervise.activity("child") { Supervise::Activity.depth.zero? ? 0 : 1 }
        exit!(code)
      end
      _, status = Process.wait2(pid)
      assert_equal 0, status.exitstatus
      assert_equal [1, ["parent"]], recorded
    end
  end

  def test_no_region_is_a_noop
    Supervise::Activity.close!
    ENV.delete("SUPERVISE_ACTIVITY")
    assert_equal :ran, Supervise.activity("x") { :ran }
    assert_equal 0, Supervise::Activity.depth
  end
end
