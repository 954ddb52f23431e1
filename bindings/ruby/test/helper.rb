# frozen_string_literal: true

# helper.rb: fixtures of the minitest suite.
#
# SvTest::Supervisor starts a real `supervised` (path in $SUPERVISED) with a
# temporary config and socket_dir under a temporary directory, in the
# foreground with its output in DIR/daemon.log, and stops it by its pid:
# SIGTERM, then a wait bounded by a deadline (SIGKILL and a failure after
# it). Worker results are files written by test/support/probe_worker.rb;
# the tests poll for them with a deadline (a file has no change event).
require "minitest/autorun"
require "json"
require "tmpdir"
require "fileutils"
require "rbconfig"

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "supervise"

module SvTest
  ROOT = File.expand_path("..", __dir__)
  LIB = File.join(ROOT, "lib")
  PROBE = File.join(ROOT, "test", "support", "probe_worker.rb")
  RUBY = RbConfig.ruby

  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # program returns the path in environment variable var (an executable).
  def program(var)
    path = ENV.fetch(var, "")
    raise "#{var} must name the #{var.downcase} program of a build" unless File.executable?(path)

    path
  end

  # wait_for polls the block every 20 ms until it returns a truthy value,
  # which it returns; raises Minitest::Assertion after timeout seconds.
  def wait_for(what, timeout: 20)
    deadline = now + timeout
    loop do
      v = yield
      return v if v
      raise Minitest::Assertion, "timed out after #{timeout} s waiting for #{what}" if now > deadline

      sleep 0.02
    end
  end

  # ruby_argv is the argv of a Ruby worker using this binding. supervised
  # gives its workers its own environment minus every SUPERVISE_* variable
  # (and a group's env may not set one), so $SUPERVISE_LIBRARY is handed on
  # through env(1) in front of ruby.
  def ruby_argv(*args)
    lib = ENV.fetch("SUPERVISE_LIBRARY", "")
    (lib.empty? ? [] : ["/usr/bin/env", "SUPERVISE_LIBRARY=#{lib}"]) + [RUBY, "-I", LIB, *args]
  end

  # A libconfig string literal.
  def q(str)
    "\"#{str.gsub('\\', '\\\\\\\\').gsub('"', '\\"')}\""
  end

  # The variables a supervisor sets: a test run inside a worker must not
  # pass its own to the daemon it starts.
  WORKER_VARS = Supervise::Identity::ENV_NAMES.to_h { |k| [k, nil] }.freeze

  # A supervised daemon started for a test.
  class Supervisor
    attr_reader :dir, :url, :pid, :outdir, :log_path

    # groups: Array of Hashes {name:, count:, purpose:, argv: [...]}; a
    # group with mode: M runs probe_worker.rb M OUTDIR [args...] instead of
    # argv (args: [...]; script: another worker of test/support taking the
    # same arguments); options: {ready: true, watchdog_ms: 500} adds other
    # keys of docs/config.md.
    def initialize(groups, top: "")
      @top = top
      @dir = Dir.mktmpdir("sv-rb-test.")
      @outdir = File.join(@dir, "out")
      FileUtils.mkdir_p(@outdir)
      sockdir = File.join(@dir, "sock")
      @url = "ipc://#{sockdir}/control.sock"
      conf = File.join(@dir, "supervised.conf")
      File.write(conf, config(sockdir, groups))
      @log_path = File.join(@dir, "daemon.log")
      @pid = Process.spawn(WORKER_VARS, SvTest.program("SUPERVISED"), "--config", conf, "--foreground",
                           in: File::NULL, %i[out err] => [@log_path, "w"])
      @waiter = Process.detach(@pid)
      # sv_client_open retries until its deadline: this waits for the socket.
      Supervise::Client.open(@url, timeout: 10, &:hello)
    rescue StandardError
      warn "supervised did not come up; its log:\n#{log}"
      stop
      raise
    end

    def config(sockdir, groups)
      body = groups.map do |g|
        script = g[:script] || PROBE
        argv = g[:argv] || SvTest.ruby_argv(script, g.fetch(:mode), @outdir, *g.fetch(:args, []))
        extra = (g[:options] || {}).map { |k, v| "  #{k} = #{v.is_a?(String) ? SvTest.q(v) : v};\n" }.join
        <<~GROUP
          {
            name = #{SvTest.q(g.fetch(:name))};
            argv = [ #{argv.map { |a| SvTest.q(a) }.join(', ')} ];
            count = #{g.fetch(:count)};
            purpose = #{SvTest.q(g.fetch(:purpose))};
          #{extra}}
        GROUP
      end
      <<~CONF
        socket_dir = #{SvTest.q(sockdir)};
        stop_timeout_ms = 3000;
        #{@top.gsub('{dir}', @dir)}
        groups = ( #{body.join(",\n")} );
      CONF
    end

    # result waits for the JSON file of group[ordinal] generation and
    # returns it parsed.
    def result(group, ordinal, generation = 0, timeout: 30)
      path = File.join(@outdir, "#{group}-#{ordinal}-#{generation}.json")
      SvTest.wait_for("#{path} (daemon log:\n#{log})", timeout: timeout) { File.exist?(path) }
      JSON.parse(File.read(path))
    end

    # log returns the daemon's output so far (kept after stop).
    def log
      return @final_log if @final_log

      File.exist?(@log_path) ? File.read(@log_path) : ""
    end

    # client opens a new Client on this daemon (closed by the block form).
    def client(timeout: 5, &block)
      Supervise::Client.open(@url, timeout: timeout, &block)
    end

    # stop sends SIGTERM and waits up to timeout seconds; returns the
    # Process::Status. After the deadline: SIGKILL and an assertion failure.
    # Removes the temporary directory unless SV_TEST_KEEP is set.
    def stop(timeout: 15)
      return @status if @status || @waiter.nil?

      begin
        Process.kill(:TERM, @pid)
      rescue Errno::ESRCH
        nil
      end
      if @waiter.join(timeout).nil?
        Process.kill(:KILL, @pid)
        @waiter.join(5)
        raise Minitest::Assertion, "supervised (pid #{@pid}) did not exit within #{timeout} s of SIGTERM"
      end
      @status = @waiter.value
    ensure
      unless ENV["SV_TEST_KEEP"] || @waiter&.alive?
        @final_log = log
        FileUtils.rm_rf(@dir)
      end
    end
  end

  # shared returns one daemon per key for the whole run (stopped at exit).
  @shared = {}
  def shared(key, groups, top: "")
    @shared[key] ||= Supervisor.new(groups, top: top)
  end

  Minitest.after_run do
    @shared.each_value do |s|
      st = s.stop
      warn "supervised exited with #{st.inspect}" unless st&.success?
    end
  end
end
