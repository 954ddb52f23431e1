# frozen_string_literal: true

# test_library.rb: finding the shared library. Each case runs in a fresh Ruby
# process, since this one has already loaded the library.
require_relative "helper"
require "open3"

class TestLibrary < Minitest::Test
  # run_ruby runs code with the binding on the load path and env changes;
  # returns [stdout+stderr, status]. Bounded by a deadline.
  def run_ruby(env, code)
    out = +""
    status = nil
    Open3.popen2e(SvTest::WORKER_VARS.merge(env), SvTest::RUBY, "-I", SvTest::LIB, "-e", code) do |i, oe, t|
      i.close
      reader = Thread.new { oe.read }
      if t.join(30).nil?
        Process.kill(:KILL, t.pid)
        flunk "ruby did not finish within 30 s"
      end
      out = reader.value
      status = t.value
    end
    [out, status]
  end

  PROBE = <<~RUBY
    require "supervise"
    begin
      Supervise.hello(timeout: 0)
    rescue Supervise::LibraryNotFound => e
      puts "LibraryNotFound: \#{e.message}"
      exit 3
    rescue Supervise::Error => e
      puts "loaded: \#{e.class}"
    end
  RUBY

  def test_missing_library_is_one_clear_error
    out, st = run_ruby({ "SUPERVISE_LIBRARY" => "/nonexistent/libsupervise.so.0" }, PROBE)
    assert_equal 3, st.exitstatus, out
    assert_includes out, "SUPERVISE_LIBRARY=/nonexistent/libsupervise.so.0"
    assert_includes out, "libsupervise.so.0"
    assert_equal 1, out.lines.size, out
  end

  def test_not_installed_names_both
    dir = File.dirname(ENV.fetch("SUPERVISE_LIBRARY"))
    # Through the soname, found on LD_LIBRARY_PATH: loads.
    out, st = run_ruby({ "SUPERVISE_LIBRARY" => nil, "LD_LIBRARY_PATH" => dir, "SUPERVISE_URL" => nil }, PROBE)
    assert st.success?, out
    assert_match(/loaded: Supervise::/, out)
    # Without it the soname may still be installed system-wide; if it is not,
    # the message names both ways.
    out, st = run_ruby({ "SUPERVISE_LIBRARY" => nil, "LD_LIBRARY_PATH" => nil }, PROBE)
    if st.exitstatus == 3
      assert_includes out, "SUPERVISE_LIBRARY is not set"
      assert_includes out, "libsupervise.so.0"
    else
      assert st.success?, out
    end
  end

  # from_env is the C library's sv_identity_from_env, so it needs the
  # library; without it the error is the one clear LibraryNotFound, while
  # require and the error classes still work.
  def test_from_env_uses_the_library
    env = { "SUPERVISE_URL" => "ipc:///x", "SUPERVISE_GROUP" => "web", "SUPERVISE_ORDINAL" => "1",
            "SUPERVISE_GENERATION" => "4", "SUPERVISE_PURPOSE" => "p", "SUPERVISE_SUPERVISOR_ID" => "sid" }
    code = 'require "supervise"; p Supervise::NotFound::CODE; ' \
           "begin; id = Supervise::Identity.from_env; p [id.group, id.ordinal, id.generation]; " \
           "rescue Supervise::LibraryNotFound; puts 'LibraryNotFound'; end"
    out, st = run_ruby(env, code)
    assert st.success?, out
    assert_equal %(4\n["web", 1, 4]\n), out
    out, st = run_ruby(env.merge("SUPERVISE_LIBRARY" => "/nonexistent/libsupervise.so.0"), code)
    assert st.success?, out
    assert_equal "4\nLibraryNotFound\n", out
  end
end
