# frozen_string_literal: true

# test_prometheus_ruby.rb: a real consumer of the ordinal (issue 8). Three
# workers of examples/prometheus/counter_worker.rb, which count with Debian's
# ruby-prometheus-client-mmap keyed by "worker_ORDINAL", run under a
# supervised this test starts; each is killed with SIGKILL and restarted 50
# times while the workers count. Afterwards:
#   - the metrics directory holds exactly the files of the first start
#     (counter_worker_N-0.db and gauge_all_worker_N-0.db, N = 0..2), checked
#     after every answer of every generation, not only at the end;
#   - the counter summed by the client's own reader (Formats::Text.
#     marshal_multiprocess) equals the increments the workers acknowledged,
#     and so does each ordinal's file (MmapedDict.read_all_values);
#   - a worker's "metrics" answer (what a /metrics endpoint serves) shows
#     the same total;
#   - each worker's own logs add up to the same numbers (51 logs each);
#   - the supervisor reports generation 50 and 50 restarts per ordinal, and
#     the generation gauge has one series per ordinal, all at 50.
#
# Exactness: a worker answers "inc K" only after the K increments are in its
# mmap'd file and its log (see the worker's design comment); this test kills
# a worker only after its answer, so the true total is the sum of the
# acknowledged K. The kills of one ordinal land while the other two are
# starting or counting (one thread per ordinal).
#
# The pid to kill is the supervisor's (`supervisectl status --json`),
# checked against the pid the worker reports. The workers read their
# identity from the environment through the C library's
# sv_identity_from_env, so their group's env names this build's library
# (SUPERVISE_LIBRARY). Each wait is a poll with a deadline. The test stops
# the daemon it started, by its pid.
#
# Usage (ctest sets these): SUPERVISED, SUPERVISECTL, SUPERVISE_LIBRARY.
# Exit 0 pass, 1 fail,
# 77 skip (ruby-prometheus-client-mmap is not installed). SV_TEST_KEEP=1
# keeps the temporary directory.
begin
  require "prometheus/client"
  require "prometheus/client/formats/text"
  require "prometheus/client/mmaped_dict"
rescue LoadError => e
  warn "SKIP: ruby-prometheus-client-mmap is not installed (#{e.message}); " \
       "apt-get install ruby-prometheus-client-mmap"
  exit 77
end
require "json"
require "open3"
require "rbconfig"
require "socket"
require "tmpdir"
require "fileutils"

ROOT = File.expand_path("../..", __dir__)
RB_LIB = File.join(ROOT, "bindings", "ruby", "lib")

# The test's steps; a failed check raises PromTest::Failure.
module PromTest
  class Failure < StandardError; end

  WORKERS = 3
  KILLS = 50
  GROUP = "prom"
  WORKER = File.join(ROOT, "examples", "prometheus", "counter_worker.rb")
  COUNTER = "example_requests_total"
  GAUGE = "example_worker_generation"

  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def check(cond, msg)
    raise Failure, msg unless cond
  end

  # workers returns `supervisectl status GROUP --json` as [ordinal,
  # generation, pid, restarts] rows sorted by ordinal.
  def workers(url)
    out, err, st = Open3.capture3(ENV.fetch("SUPERVISECTL"), "-s", url, "status", GROUP, "--json")
    raise Failure, "supervisectl status: #{st.inspect}: #{err}" unless st.success?

    JSON.parse(out).map { |w| w.values_at("ordinal", "generation", "pid", "restarts") }.sort
  end

  # wait_for polls the block every 5 ms until it returns a truthy value.
  def wait_for(what, timeout)
    deadline = now + timeout
    loop do
      v = yield
      return v if v
      raise Failure, "timed out after #{timeout} s waiting for #{what}" if now > deadline

      sleep 0.005
    end
  end

  def q(str)
    "\"#{str.gsub('\\', '\\\\\\\\').gsub('"', '\\"')}\""
  end

  def config(dir)
    argv = [RbConfig.ruby, "-I", RB_LIB, WORKER].map { |a| q(a) }.join(", ")
    <<~CONF
      socket_dir = #{q(File.join(dir, 'sock'))};
      stop_timeout_ms = 3000;
      groups = ( {
        name = #{q(GROUP)};
        argv = [ #{argv} ];
        count = #{WORKERS};
        purpose = "count requests with prometheus-client-mmap";
        env = [ #{q("prometheus_multiproc_dir=#{dir}/metrics")}, #{q("PROM_EXAMPLE_RUN_DIR=#{dir}/run")},
                #{q("SUPERVISE_LIBRARY=#{ENV.fetch('SUPERVISE_LIBRARY')}")} ];
        min_uptime_ms = 0;
      } );
    CONF
  end

  # request sends one line to worker ord and returns its whole answer, or
  # nil when nobody listens on the socket (yet) or the listener died with
  # the connection open (a worker just killed).
  def request(run, ord, line, timeout: 5)
    UNIXSocket.open(File.join(run, "worker-#{ord}.sock")) do |s|
      s.write("#{line}\n")
      out = +""
      deadline = now + timeout
      loop do
        raise Failure, "worker #{ord}: no answer to #{line.inspect} in #{timeout} s" if now > deadline

        next unless s.wait_readable(0.1)

        chunk = s.read_nonblock(65_536, exception: false)
        break if chunk.nil?

        out << chunk unless chunk == :wait_readable
      end
      out
    end
  rescue Errno::ENOENT, Errno::ECONNREFUSED, Errno::ECONNRESET, Errno::EPIPE
    nil
  end

  # ok parses "ok PID GENERATION COUNT" into integers.
  def ok(ans, ord, what)
    m = /\Aok (\d+) (\d+) (\d+)\n\z/.match(ans.to_s)
    check(m, "worker #{ord}: bad answer to #{what}: #{ans.inspect}")
    m.captures.map(&:to_i)
  end

  # await returns the pid of worker ord once generation gen answers.
  def await(run, ord, gen)
    wait_for("worker #{ord} generation #{gen}", 15) do
      ans = request(run, ord, "ping")
      next nil if ans.nil?

      pid, g, = ok(ans, ord, "ping")
      pid if g == gen
    end
  end

  def db_files(dir)
    Dir.children(File.join(dir, "metrics")).select { |f| f.end_with?(".db") }.sort
  end

  EXPECTED_FILES = (0...WORKERS).flat_map { |n| ["counter_worker_#{n}-0.db", "gauge_all_worker_#{n}-0.db"] }.sort.freeze

  def check_files(dir, when_)
    got = db_files(dir)
    check(got == EXPECTED_FILES, "metric files #{when_}: #{got.inspect}, expected #{EXPECTED_FILES.inspect}")
  end

  # run_ordinal drives one worker through KILLS kill -9 cycles; returns the
  # increments it acknowledged, initial (those of generation 0 so far)
  # included.
  def run_ordinal(dir, url, ord, seed, initial)
    run = File.join(dir, "run")
    rng = Random.new(seed)
    acked = initial
    (0..KILLS).each do |gen|
      pid = await(run, ord, gen)
      k = rng.rand(1..60)
      rpid, rgen, count = ok(request(run, ord, "inc #{k}"), ord, "inc #{k}")
      before = gen.zero? ? initial : 0
      check([rpid, rgen, count] == [pid, gen, before + k], "worker #{ord}: answer #{[rpid, rgen, count]} to inc #{k}")
      acked += k
      check_files(dir, "after worker #{ord} generation #{gen} counted")
      break if gen == KILLS

      _, wgen, wpid, = workers(url).find { |w| w[0] == ord }
      check(wpid == pid && wgen == gen,
            "worker #{ord}: supervisor says pid #{wpid} gen #{wgen}, worker says #{pid} gen #{gen}")
      Process.kill(:KILL, pid)
    end
    acked
  end

  # sum_logs adds up the log lines of ordinal ord; returns [total, files].
  def sum_logs(dir, ord)
    logs = Dir.glob(File.join(dir, "run", "increments-#{ord}-*.log"))
    [logs.sum { |f| File.readlines(f).sum(&:to_i) }, logs.size]
  end

  def verify(dir, url, acked)
    check_files(dir, "at the end")
    metrics = File.join(dir, "metrics")
    acked.each_with_index do |n, ord|
      per_file = Prometheus::Client::MmapedDict.read_all_values(File.join(metrics, "counter_worker_#{ord}-0.db"))
      check(per_file.size == 1 && per_file[0][1] == n,
            "counter_worker_#{ord}-0.db holds #{per_file.inspect}, acknowledged #{n}")
      logged, nlogs = sum_logs(dir, ord)
      check(logged == n && nlogs == KILLS + 1, "worker #{ord}: #{nlogs} logs adding up to #{logged}, acknowledged #{n}")
    end
    text = Prometheus::Client::Formats::Text.marshal_multiprocess(metrics)
    total = text[/^#{COUNTER} (\S+)$/, 1]
    check(total && Float(total) == acked.sum, "#{COUNTER} in the exposition: #{total.inspect}, acknowledged #{acked.sum}\n#{text}")
    served = request(File.join(dir, "run"), 0, "metrics").to_s
    check(served[/^#{COUNTER} (\S+)$/, 1] == total, "worker 0 serves #{COUNTER} #{served.inspect}, files say #{total}")
    gauges = text.scan(/^#{GAUGE}\{pid="([^"]*)"\} (\S+)$/).sort
    want = (0...WORKERS).map { |n| ["worker_#{n}", KILLS.to_f] }
    check(gauges.map { |p, v| [p, Float(v)] } == want, "generation gauge series: #{gauges.inspect}")
    ws = workers(url).map { |o, g, _, r| [o, g, r] }
    check(ws == (0...WORKERS).map { |n| [n, KILLS, KILLS] }, "supervisor: [ordinal, generation, restarts] #{ws.inspect}")
    text
  end

  def stop(pid, waiter)
    begin
      Process.kill(:TERM, pid)
    rescue Errno::ESRCH
      raise Failure, "supervised (pid #{pid}) exited early: #{waiter.value.inspect}"
    end
    return waiter.value if waiter.join(15)

    Process.kill(:KILL, pid)
    waiter.join(5)
    raise Failure, "supervised (pid #{pid}) did not exit within 15 s of SIGTERM"
  end

  def main
    supervised = ENV.fetch("SUPERVISED", "")
    check(File.executable?(supervised), "SUPERVISED must name the daemon of a build")
    check(File.executable?(ENV.fetch("SUPERVISECTL", "")), "SUPERVISECTL must name supervisectl of a build")
    dir = Dir.mktmpdir("sv-prom-rb.")
    %w[sock metrics run].each { |d| FileUtils.mkdir_p(File.join(dir, d)) }
    File.write(File.join(dir, "supervised.conf"), config(dir))
    log = File.join(dir, "daemon.log")
    clean = ENV.keys.grep(/\ASUPERVISE_/).to_h { |k| [k, nil] }
    daemon = Process.spawn(clean, supervised, "--config", File.join(dir, "supervised.conf"), "--foreground",
                           in: File::NULL, %i[out err] => [log, "w"])
    waiter = Process.detach(daemon)
    url = "ipc://#{dir}/sock/control.sock"
    ok = false
    begin
      wait_for("the daemon's control socket", 10) { File.socket?(File.join(dir, "sock", "control.sock")) }
      t0 = now
      # Every ordinal counts once before any kill: the file set is complete.
      initial = Array.new(WORKERS) do |ord|
        run = File.join(dir, "run")
        first = await(run, ord, 0)
        check(ok(request(run, ord, "inc 1"), ord, "inc 1") == [first, 0, 1], "worker #{ord}: first inc")
        1
      end
      check_files(dir, "after the first start")
      threads = (0...WORKERS).map do |ord|
        Thread.new do
          Thread.current.report_on_exception = false
          run_ordinal(dir, url, ord, 1000 + ord, initial[ord])
        end
      end
      acked = threads.map(&:value)
      text = verify(dir, url, acked)
      puts text.lines.grep(/^(#{COUNTER}|#{GAUGE})/).join
      puts format("PASS: %d workers x %d kill -9, %d increments acknowledged and counted, %d metric files, %.1f s",
                  WORKERS, KILLS, acked.sum, EXPECTED_FILES.size, now - t0)
      ok = true
    rescue StandardError => e
      warn "FAIL: #{e.class}: #{e.message}"
    ensure
      status = begin
        stop(daemon, waiter)
      rescue Failure => e
        warn "FAIL: #{e.message}"
        nil
      end
      unless status&.success?
        warn "FAIL: supervised exited with #{status.inspect}"
        ok = false
      end
      warn "daemon log:\n#{File.read(log).lines.last(30).join}" unless ok
      ENV["SV_TEST_KEEP"] ? warn("kept #{dir}") : FileUtils.rm_rf(dir)
    end
    exit(ok ? 0 : 1)
  end
end

PromTest.main
