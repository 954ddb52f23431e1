# frozen_string_literal: true

# counter_worker.rb: a Ruby worker that counts requests with Debian's
# ruby-prometheus-client-mmap (GitLab's client, 0.16) in multiprocess mode,
# keyed by the worker's ordinal instead of its pid.
#
# Design:
#   - Identity comes from Supervise::Identity.from_env: the SUPERVISE_*
#     variables the supervisor set, zero round trips, and the shared library
#     is not even loaded. The client's pid_provider returns "worker_N" (N the
#     ordinal), so the metric files are <type>_worker_N-0.db: a replacement
#     (same ordinal, next generation) reopens its predecessor's files and
#     its counters carry on, and a group of N workers never has more than N
#     sets of files however often they crash. "worker_N" follows the
#     client's own Unicorn helper ("worker_id_N"); the group name is left
#     out because the file-name parser strips "-digits" from every
#     "_"-separated part. One metrics directory per group.
#   - The client flocks each file it opens (LOCK_EX|LOCK_NB) and takes the
#     next number (-1, -2, ...) when the lock is held: a worker of another
#     generation that still held "worker_N" (a blue-green overlap) would
#     write worker_N-1.db instead of corrupting worker_N-0.db. The kernel
#     drops the lock when a process dies, kill -9 included.
#   - Requests arrive on a Unix stream socket, $PROM_EXAMPLE_RUN_DIR/
#     worker-N.sock, one request line per connection, answered with one line
#     (or the exposition text) and closed:
#       ping      -> "ok PID GENERATION COUNT"
#       inc K     -> K counter increments (1 <= K <= 100000), then one line
#                    "K" appended to this process's log, then
#                    "ok PID GENERATION COUNT"
#       metrics   -> the text exposition of every worker's files (what a
#                    /metrics endpoint would serve)
#     COUNT is the number of increments this process made. The order (the
#     mmap'd counter, then the log line with write(2), then the answer)
#     means that once a client has the answer, both the counter file and
#     the log hold the increments, whatever happens to the process next: a
#     test that kills it only after an answer knows the true total exactly.
#   - The log is $PROM_EXAMPLE_RUN_DIR/increments-N-GENERATION.log, one per
#     process, opened O_APPEND with Ruby's buffering off.
#   - SIGTERM (the supervisor's stop signal) ends the worker with status 0.
#
# Environment: prometheus_multiproc_dir (the client's own variable: where the
# .db files live) and PROM_EXAMPLE_RUN_DIR (socket and logs), both existing
# directories; the SUPERVISE_* variables. Exits 2 when one is missing.
require "socket"
require "logger"
require "supervise"
require "prometheus/client"
require "prometheus/client/formats/text"

# The example's request loop.
module PromExample
  MAX_INC = 100_000
  MAX_LINE = 64

  module_function

  # env_dir returns the directory named by variable var, or exits 2.
  def env_dir(var)
    dir = ENV.fetch(var, "")
    return dir if !dir.empty? && File.directory?(dir)

    warn "counter_worker: #{var} must name an existing directory"
    exit 2
  end

  # configure points the client at dir and keys its files on the ordinal.
  def configure(dir, ordinal)
    label = "worker_#{ordinal}"
    Prometheus::Client.configure do |c|
      c.multiprocess_files_dir = dir
      c.pid_provider = -> { label }
      c.logger = Logger.new($stderr, level: Logger::WARN)
    end
  end

  # listen binds path, replacing the socket a dead predecessor left.
  def listen(path)
    File.unlink(path) if File.socket?(path)
    UNIXServer.new(path)
  end

  # answer handles one request line and returns the reply text.
  def answer(line, state)
    case line
    when "ping"
      state.ok
    when /\Ainc (\d{1,6})\z/
      k = Regexp.last_match(1).to_i
      return "err count must be 1..#{MAX_INC}\n" unless k.between?(1, MAX_INC)

      k.times { state.counter.increment }
      state.log.write("#{k}\n")
      state.count += k
      state.ok
    when "metrics"
      Prometheus::Client::Formats::Text.marshal_multiprocess(state.dir)
    else
      "err unknown request\n"
    end
  end

  # serve answers requests until the process is stopped.
  def serve(server, state)
    loop do
      conn = server.accept
      begin
        line = conn.gets(MAX_LINE)&.chomp
        conn.write(answer(line.to_s, state))
      rescue SystemCallError, IOError => e
        warn "counter_worker: #{e.class}: #{e.message}"
      ensure
        conn.close
      end
    end
  end

  # What the request loop works with.
  State = Struct.new(:id, :dir, :counter, :log, :count) do
    def ok
      "ok #{Process.pid} #{id.generation} #{count}\n"
    end
  end
end

trap("TERM") { exit 0 }

id = Supervise::Identity.from_env
dir = PromExample.env_dir("prometheus_multiproc_dir")
run = PromExample.env_dir("PROM_EXAMPLE_RUN_DIR")
PromExample.configure(dir, id.ordinal)

registry = Prometheus::Client.registry
counter = registry.counter(:example_requests_total, "Requests handled by the example workers")
registry.gauge(:example_worker_generation, "Generation of each worker", {}, :all).set({}, id.generation)

log = File.open(File.join(run, "increments-#{id.ordinal}-#{id.generation}.log"),
                File::WRONLY | File::APPEND | File::CREAT)
log.sync = true
server = PromExample.listen(File.join(run, "worker-#{id.ordinal}.sock"))
$stdout.puts "[prometheus] #{id.group}[#{id.ordinal}] generation #{id.generation} pid #{Process.pid}: " \
             "files keyed worker_#{id.ordinal} in #{dir}"
$stdout.flush
PromExample.serve(server, PromExample::State.new(id, dir, counter, log, 0))
