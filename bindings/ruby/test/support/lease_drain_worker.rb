# frozen_string_literal: true

# lease_drain_worker.rb: a worker for test_leases_drain.rb, run under a real
# supervised.
#
#   lease_drain_worker.rb drain OUT
#       subscribes to its own topic (Supervise::Drain), reports ready, then
#       "serves" (counts loop turns) until the drain notice arrives; writes
#       OUT (JSON: pid, served, notice, WhoAmI's draining), sends
#       DrainAck(served) and exits 0.
#   lease_drain_worker.rb fork OUT POOL
#       acquires its own lease on POOL (slot = its ordinal) as a worker, then
#       forks 4 children with Process.fork; each opens a session of its own,
#       acquires a lease on POOL in a block (released at its end) and exits
#       0. Waits for them with a deadline (a child still running then is
#       killed by its pid and reported as hung), renews its own lease,
#       writes OUT and waits for SIGTERM.
require_relative "worker_common"

def lease_h(l)
  { "id" => l.id, "pool" => l.pool, "slot" => l.slot, "token" => l.token,
    "resource" => l.resource, "holder" => l.holder }
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def drain_mode(out)
  d = Supervise::Drain.new
  calls = 0
  d.on_drain { calls += 1 }
  Supervise.ready("serving")
  served = 0
  served += 1 while d.poll(0.02).nil?
  draining, left = Supervise.client.drain_state
  n = d.notice
  write_json(out, { "pid" => Process.pid, "served" => served, "handler_calls" => calls,
               "notice" => { "drain_id" => n.drain_id, "deadline_in_ms" => n.deadline_in_ms,
                             "source" => n.source.to_s },
               "draining" => draining, "deadline_in_ms" => left })
  d.ack(served)
  d.close
  exit 0
end

def child(pool)
  Supervise.session(10) do |s|
    s.lease(pool, timeout: 5) do |l|
      lease_h(l).merge("listed" => s.leases(pool).map(&:id), "pid" => Process.pid)
    end
  end
rescue StandardError => e
  { "error" => e.inspect, "pid" => Process.pid }
end

def fork_mode(out, pool)
  me = Supervise.whoami
  mine = Supervise.lease(pool, slot: me.ordinal)
  kids = Array.new(4) do
    r, w = IO.pipe
    pid = Process.fork do
      r.close
      w.write(JSON.generate(child(pool)))
      w.close
      exit!(0)
    end
    w.close
    [pid, r]
  end
  deadline = now + 20
  results = kids.map do |pid, r|
    status = nil
    while now < deadline
      _, status = Process.waitpid2(pid, Process::WNOHANG)
      break if status

      sleep 0.01
    end
    if status.nil?
      Process.kill(:KILL, pid)
      Process.waitpid(pid)
      text = "hung"
    else
      text = status.signaled? ? "signal #{status.termsig}" : "exit #{status.exitstatus}"
    end
    data = r.read
    r.close
    { "pid" => pid, "status" => text, "answer" => data.empty? ? nil : JSON.parse(data) }
  end
  renewed = mine.renew
  write_json(out, { "pid" => Process.pid, "mine" => lease_h(mine), "renewed_token" => renewed.token,
               "children" => results })
  sleep
end

case ARGV[0]
when "drain" then drain_mode(ARGV.fetch(1))
when "fork" then fork_mode(ARGV.fetch(1), ARGV.fetch(2))
else
  warn "usage: lease_drain_worker.rb drain OUT | fork OUT POOL"
  exit 2
end
