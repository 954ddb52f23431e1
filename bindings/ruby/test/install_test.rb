# frozen_string_literal: true

# install_test.rb: the gem installs the Ruby way and works from there.
#
#   1. `gem build supervise.gemspec --output TMP/supervise.gem`
#   2. `gem install --local --install-dir TMP/gems` (with
#      --ignore-dependencies: --install-dir makes RubyGems look for
#      dependencies in that directory only, and ffi is Debian's ruby-ffi)
#   3. a smoke check in a fresh ruby, run outside the source tree with
#      GEM_HOME=TMP/gems and GEM_PATH=TMP/gems plus the system's gem path (for
#      ruby-ffi), no -I: `gem "supervise"` activates the installed gem and its
#      ffi dependency; the library loads; a connection nobody answers raises
#      ConnectFailed; from_env outside a worker raises NotAWorker
#   4. the installed examples/whoami_worker.rb runs as a worker under a real
#      supervised and prints its identity line
# Each command runs with a deadline.
require_relative "helper"
require "open3"

class InstallTest < Minitest::Test
  def setup
    @tmp = Dir.mktmpdir("sv-rb-install.")
    @gems = File.join(@tmp, "gems")
    sys = Gem.path.join(File::PATH_SEPARATOR)
    @gem_env = { "GEM_HOME" => @gems, "GEM_PATH" => [@gems, sys].join(File::PATH_SEPARATOR),
                 "RUBYOPT" => nil, "RUBYLIB" => nil }
  end

  def teardown
    FileUtils.rm_rf(@tmp)
  end

  # run runs argv with env changes in dir; fails the test when it does not
  # exit 0 within timeout seconds. Returns its output.
  def run_cmd(env, argv, dir: @tmp, timeout: 120)
    Open3.popen2e(SvTest::WORKER_VARS.merge(env), *argv, chdir: dir) do |i, oe, t|
      i.close
      reader = Thread.new { oe.read }
      if t.join(timeout).nil?
        Process.kill(:KILL, t.pid)
        flunk "#{argv.join(' ')} did not finish within #{timeout} s"
      end
      out = reader.value
      assert t.value.success?, "#{argv.join(' ')} failed:\n#{out}"
      out
    end
  end

  def gem_cmd
    File.join(RbConfig::CONFIG["bindir"], "gem")
  end

  SMOKE = <<~RUBY
    gem "supervise"
    require "supervise"
    spec = Gem.loaded_specs.fetch("supervise")
    abort "loaded from \#{spec.full_gem_path}" unless spec.full_gem_path.start_with?(ENV["GEM_HOME"])
    abort "ffi not activated" unless Gem.loaded_specs["ffi"]
    abort "version" unless Supervise::VERSION == "#{Supervise::VERSION}"
    abort "library \#{Supervise.library_version}" unless Supervise.library_version == "0.1.0"
    begin
      Supervise::Client.new("ipc://" + Dir.pwd + "/nobody.sock", timeout: 0.2)
      abort "connected to nobody"
    rescue Supervise::ConnectFailed => e
      abort "code \#{e.code}" unless e.code == 103
    end
    begin
      Supervise::Identity.from_env
      abort "from_env outside a worker"
    rescue Supervise::NotAWorker
    end
    puts "smoke ok \#{spec.full_gem_path}"
  RUBY

  def test_build_install_and_use
    gem_file = File.join(@tmp, "supervise.gem")
    run_cmd({}, [gem_cmd, "build", File.join(SvTest::ROOT, "supervise.gemspec"), "--output", gem_file],
            dir: SvTest::ROOT)
    assert File.exist?(gem_file)
    run_cmd({}, [gem_cmd, "install", "--local", "--no-document", "--ignore-dependencies",
                 "--install-dir", @gems, gem_file])
    installed = File.join(@gems, "gems", "supervise-#{Supervise::VERSION}")
    %w[lib/supervise.rb lib/supervise/client.rb examples/whoami_worker.rb README.md].each do |f|
      assert File.exist?(File.join(installed, f)), "#{f} installed"
    end
    out = run_cmd(@gem_env, [SvTest::RUBY, "-e", SMOKE])
    assert_includes out, "smoke ok #{installed}"

    example = File.join(installed, "examples", "whoami_worker.rb")
    argv = ["/usr/bin/env", "SUPERVISE_LIBRARY=#{ENV.fetch('SUPERVISE_LIBRARY')}", "GEM_HOME=#{@gems}",
            "GEM_PATH=#{@gem_env['GEM_PATH']}", SvTest::RUBY, example]
    sup = SvTest::Supervisor.new([{ name: "inst", count: 1, purpose: "installed gem", argv: argv }])
    begin
      SvTest.wait_for("the installed example's line") { sup.log.include?("[rb] I am inst[0] generation 0 pid ") }
      assert_match(/\[rb\] I am inst\[0\] generation 0 pid \d+ of 1, purpose "installed gem", context process:inst\/0, parent none/,
                   sup.log)
    ensure
      st = sup.stop
    end
    assert st.success?, st.inspect
  end
end
