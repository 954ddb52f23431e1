# frozen_string_literal: true

# probe_worker.rb: a worker the tests run under supervised. It uses the
# binding, writes what it learned as JSON to OUTDIR/<group>-<ordinal>-
# <generation>.json (atomically: written aside, then renamed), then waits for
# SIGTERM and exits 0.
#
#   usage: probe_worker.rb MODE OUTDIR [ARG]
#   MODE identity   whoami (live, default client), from_env, hello
#        ready      Supervise.ready(ARG), then a forked child (a descendant,
#                   not the worker) calls Supervise.ready too; both outcomes
#        heartbeat  Supervise.ready, then Supervise.heartbeat every ARG ms
#                   until SIGTERM (writes nothing; a failed call ends the
#                   worker with status 1)
#        fork       whoami, then Process.fork 4 children that each call the
#                   binding at once and answer through a pipe (see fork_probe)
#        fork_busy  the same while another thread of the parent keeps calling
#                   whoami, so that a fork can happen in the middle of a call
require_relative "worker_common"

# How long the parent waits for its 4 children before it kills them.
CHILD_DEADLINE = 15.0
CHILDREN = 4

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def identity_h(id)
  id.to_h.merge(context: id.context.map(&:to_h), parent: id.parent&.to_h)
end

def identity_probe
  live = Supervise.whoami
  # Client#whoami's one-call copy against the sv_identity handle's
  # accessors; a repeated, unchanged answer returns the same Identity.
  copy = Supervise::Client.open do |c|
    first = c.whoami
    { copy_eq_handle: first == c.send(:whoami_handle, 5) && first == live, reused: c.whoami.equal?(first) }
  end
  { pid: Process.pid, live: identity_h(live), env: identity_h(Supervise::Identity.from_env),
    hello: Supervise.hello.to_h }.merge(copy)
end

# child_body runs in a forked child: wait for the parent's "go" (EOF on
# go_r), call the binding, answer on w. Exits normally (finalizers run).
def child_body(go_r, w)
  IO.select([go_r], nil, nil, CHILD_DEADLINE)
  t0 = now
  begin
    id = Supervise.whoami(timeout: 5)
    hello = Supervise.hello(timeout: 5)
    answer = { ok: true, pid: Process.pid, identity: identity_h(id), supervisor_id: hello.supervisor_id }
  rescue Exception => e # rubocop:disable Lint/RescueException
    answer = { ok: false, pid: Process.pid, error: "#{e.class}: #{e.message}" }
  end
  answer[:seconds] = now - t0
  w.write(JSON.generate(answer))
  w.close
  exit 0
end

# collect reads every child's answer and exit status until the deadline,
# then kills (by pid) whoever is left.
def collect(children, deadline)
  open = children.to_h { |c| [c[:r], c] }
  until open.empty?
    left = deadline - now
    break if left <= 0

    ready, = IO.select(open.keys, nil, nil, left)
    next unless ready

    ready.each do |r|
      chunk = r.read_nonblock(65_536, exception: false)
      next if chunk == :wait_readable

      c = open[r]
      if chunk.nil?
        open.delete(r)
      else
        (c[:buf] ||= +"") << chunk
      end
    end
  end
  children.map do |c|
    waiter = c[:waiter]
    hung = waiter.join([deadline - now, 0.5].max).nil?
    if hung
      Process.kill(:KILL, c[:pid])
      waiter.join(5)
    end
    st = waiter.value
    answer = c[:buf].to_s.empty? ? nil : JSON.parse(c[:buf])
    { pid: c[:pid], answer: answer, hung: hung, exitstatus: st&.exitstatus, termsig: st&.termsig }
  end
end

# start_busy_thread starts a thread calling whoami until the block says
# stop, and returns once it has made its first call (each call is bounded by
# its timeout, so this returns within that time). Its value is the count.
def start_busy_thread(&stop)
  started = Queue.new
  t = Thread.new do
    n = 0
    begin
      Supervise.whoami(timeout: 5)
      n += 1
    ensure
      started << true
    end
    until stop.call
      Supervise.whoami(timeout: 5)
      n += 1
    end
    n
  end
  started.pop
  t
end

# outcome runs the block: "ok", or [code, name] of a Supervise::Error.
def outcome
  yield
  "ok"
rescue Supervise::Error => e
  [e.code, e.name]
end

def ready_probe(text)
  mine = outcome { Supervise.ready(text) }
  r, w = IO.pipe
  pid = Process.fork do
    r.close
    w.write(JSON.generate(outcome { Supervise.ready }))
    w.close
    exit!(0)
  end
  w.close
  waiter = Process.detach(pid)
  answer = r.read if IO.select([r], nil, nil, CHILD_DEADLINE)
  r.close
  if waiter.join(CHILD_DEADLINE).nil?
    Process.kill(:KILL, pid)
    waiter.join(5)
  end
  { pid: Process.pid, ready: mine, descendant: answer.to_s.empty? ? nil : JSON.parse(answer),
    descendant_exit: waiter.value&.exitstatus }
end

def heartbeat_probe(interval_ms)
  # Its group has `ready = true`: the watchdog starts at Ready, so the
  # interpreter's start-up time does not count against it.
  Supervise.ready("beating")
  # The worker's own pacing: a heartbeat every interval until SIGTERM.
  loop do
    Supervise.heartbeat(timeout: interval_ms * 4 / 1000.0)
    sleep(interval_ms / 1000.0)
  end
end

def fork_probe(busy)
  before = Supervise.whoami # the default client is now open in this process
  stop = false
  busy_thread = (start_busy_thread { stop } if busy)
  go_r, go_w = IO.pipe
  children = Array.new(CHILDREN) do
    r, w = IO.pipe
    pid = Process.fork do
      r.close
      go_w.close
      child_body(go_r, w)
    end
    w.close
    { pid: pid, r: r, waiter: Process.detach(pid) }
  end
  go_w.close # every child starts its calls now
  results = collect(children, now + CHILD_DEADLINE)
  stop = true
  busy_calls = busy_thread&.value
  after = Supervise.whoami
  fresh = Supervise::Client.open { |c| c.hello.supervisor_id }
  { pid: Process.pid, before: identity_h(before), after: identity_h(after), fresh_hello: fresh,
    children: results, busy_calls: busy_calls }
end

mode, outdir, arg = ARGV
abort("usage: probe_worker.rb MODE OUTDIR [ARG]") unless mode && outdir
data = case mode
       when "identity" then identity_probe
       when "ready" then ready_probe(arg.to_s)
       when "heartbeat" then heartbeat_probe(Integer(arg))
       when "fork" then fork_probe(false)
       when "fork_busy" then fork_probe(true)
       else abort("unknown mode #{mode}")
       end
write_result(outdir, data)
sleep
