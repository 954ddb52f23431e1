# frozen_string_literal: true

# bench_bindings_worker.rb: the Ruby worker of bench_bindings.py.
#
# Runs under supervised and answers the commands of bench_bindings_worker.c
# (its design comment is the protocol), timing the Ruby binding:
#
#   live N    N calls of Client#whoami on one client (connected by the
#             warm-up), each timed on its own
#   env N K   N samples, each the time of K Identity.from_env calls
#   act N K   N samples, each the time of K Supervise.activity scopes
#   lease N K POOL
#             N samples, each the time of K client.lease(POOL) (any slot,
#             no wait) + Lease#release pairs; "err" when a call fails or a
#             slot's fencing token does not grow between two grants
#   quit      exit 0
#
# Commands come one per line from the FIFO ARGV[0], answers go to the FIFO
# ARGV[1]; times are Process.clock_gettime(CLOCK_MONOTONIC, :nanosecond)
# differences. The binding comes from -I, the library from SUPERVISE_LIBRARY.
require "supervise"

# The timing loops and the command parser.
module BenchWorker
  MAX_SAMPLES = 100_000
  MAX_BATCH = 10_000
  # The last grant seen [slot, token]: only this worker runs while it is
  # timed and it releases each lease first, so a slot's tokens must grow.
  LAST = [-1, 0]

  module_function

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  end

  # time_live times n live whoami calls; returns their durations (ns).
  def time_live(client, n)
    Array.new(n) do
      t0 = now
      client.whoami
      now - t0
    end
  end

  # time_env times n batches of k Identity.from_env calls (ns per batch).
  def time_env(n, k)
    Array.new(n) do
      t0 = now
      k.times { Supervise::Identity.from_env }
      now - t0
    end
  end

  # time_act times n batches of k Supervise.activity scopes (ns per batch).
  def time_act(n, k)
    Array.new(n) do
      t0 = now
      k.times { Supervise.activity("bench") { nil } }
      now - t0
    end
  end

  # time_lease times n batches of k lease acquire + release pairs on pool
  # (ns per batch); returns an "err" line when a token did not grow.
  def time_lease(client, pool, n, k)
    Array.new(n) do
      t0 = now
      k.times do
        held = client.lease(pool)
        held.release
        return "err lease: a fencing token did not grow" if held.slot == LAST[0] && held.token <= LAST[1]

        LAST[0] = held.slot
        LAST[1] = held.token
      end
      now - t0
    end
  end

  # answer returns the answer line to one command line, nil for quit.
  def answer(client, line)
    case line.strip
    when "quit" then nil
    when /\Alive (\d+)\z/
      n = Regexp.last_match(1).to_i
      n.between?(1, MAX_SAMPLES) ? "ok #{time_live(client, n).join(' ')}" : "err bad command"
    when /\Aenv (\d+) (\d+)\z/
      n = Regexp.last_match(1).to_i
      k = Regexp.last_match(2).to_i
      ok = n.between?(1, MAX_SAMPLES) && k.between?(1, MAX_BATCH)
      ok ? "ok #{time_env(n, k).join(' ')}" : "err bad command"
    when /\Aact (\d+) (\d+)\z/
      n = Regexp.last_match(1).to_i
      k = Regexp.last_match(2).to_i
      ok = n.between?(1, MAX_SAMPLES) && k.between?(1, MAX_BATCH)
      ok ? "ok #{time_act(n, k).join(' ')}" : "err bad command"
    when /\Alease (\d+) (\d+) ([A-Za-z0-9_.-]{1,64})\z/
      n = Regexp.last_match(1).to_i
      k = Regexp.last_match(2).to_i
      pool = Regexp.last_match(3)
      return "err bad command" unless n.between?(1, MAX_SAMPLES) && k.between?(1, MAX_BATCH)

      t = time_lease(client, pool, n, k)
      t.is_a?(String) ? t : "ok #{t.join(' ')}"
    else "err bad command"
    end
  rescue Supervise::Error => e
    "err #{e.message}"
  end
end

if ARGV.size != 2
  warn "usage: bench_bindings_worker.rb CMD_FIFO REPLY_FIFO"
  exit 2
end
client = Supervise::Client.new(connect: false)
# The driver opens the reply FIFO first, then the command FIFO.
File.open(ARGV[0], "r") do |cmd|
  File.open(ARGV[1], "w") do |out|
    cmd.each_line do |line|
      ans = BenchWorker.answer(client, line)
      break if ans.nil?

      out.write("#{ans}\n")
      out.flush
    end
  end
end
client.close
