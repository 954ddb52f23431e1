# frozen_string_literal: true

# test_example.rb: examples/whoami_worker.rb under a real supervised prints
# its identity line, and exits 0 on SIGTERM.
require_relative "helper"

class TestExample < Minitest::Test
  EXAMPLE = File.join(SvTest::ROOT, "examples", "whoami_worker.rb")

  def test_example_worker
    sup = SvTest::Supervisor.new([{ name: "ex", count: 2, purpose: "show the Ruby example",
                                    argv: SvTest.ruby_argv(EXAMPLE) }])
    pids = {}
    stopped = false
    (0..1).each do |i|
      line = SvTest.wait_for("the line of ex[#{i}]") do
        sup.log.lines.find { |l| l.start_with?("[rb] I am ex[#{i}] ") }
      end
      m = /\A\[rb\] I am ex\[#{i}\] generation 0 pid (\d+) of 2, purpose "show the Ruby example", context process:ex\/#{i}, parent none\n\z/.match(line)
      assert m, line
      pids[i] = m[1].to_i
    end
    ws = sup.client { |c| c.list("ex") }
    assert_equal pids, ws.to_h { |w| [w.ordinal, w.pid] }
    st = sup.stop
    stopped = true
    assert st.success?, "supervised: #{st.inspect}"
    log = sup.log
    (0..1).each do |i|
      assert_includes log, "[rb] ex[#{i}] got SIGTERM: finishing and exiting 0\n"
      assert_match(/pid #{pids[i]} exited with status 0/, log)
    end
  ensure
    sup&.stop unless stopped
  end
end
