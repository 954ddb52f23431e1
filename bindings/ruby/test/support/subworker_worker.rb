# frozen_string_literal: true

# subworker_worker.rb: a worker for test_subworkers.rb. It registers Ruby
# threads and Process.fork children as sub-workers and writes what it got
# to OUTDIR/<group>-<ordinal>-<generation>.json, then waits for SIGTERM.
# Its group has max_subworkers = 4.
#
#   usage: subworker_worker.rb MODE OUTDIR     (MODE: "subworkers")
#
# Steps (every wait is a Queue or a pipe, never a sleep):
#   threads   pool-0 and pool-1 register (thread_identity) while both live,
#             twice each (the second call must return the same Identity)
#   durable   both end; a new pool-1 registers first, then a new pool-0:
#             each takes its old number back (label memory beats lowest
#             free), with the next sub-generation
#   bounds    with those two alive, fill-2 and fill-3 register (4 = the
#             bound); a fifth thread's registration must raise Exhausted
#   scoped    Supervise.subworker("scoped") { } twice, the second raising:
#             the number is released at each block's end
#   sweep     the ended holders' numbers are released (release_ended_threads)
#   children  2 Process.fork children register (child_identity), ask
#             whoami, try to register a thread (a third level: TooLarge),
#             answer through a pipe and stay until both have registered
require_relative "worker_common"

def frame_h(f)
  f && [f.kind.to_s, f.ordinal, f.name, f.generation]
end

def ident(id)
  { ordinal: id.ordinal, generation: id.generation, kind: id.kind.to_s, pid: id.pid,
    context: id.context.map { |f| frame_h(f) }, parent: frame_h(id.parent) }
end

# A thread that registers under name, reports [ident, same?] on ready and
# lives until release receives anything. Returns [thread, release queue].
def holder(name, ready)
  release = Queue.new
  t = Thread.new do
    Thread.current.name = name
    begin
      me = Supervise.thread_identity
      ready << [name, ident(me).merge(same: Supervise.thread_identity.equal?(me))]
    rescue Supervise::Error => e
      ready << [name, { error: e.class.name }]
    end
    release.pop
  end
  [t, release]
end

# start_holders starts one holder per name and returns {name => report},
# and the [thread, release] pairs.
def start_holders(names)
  ready = Queue.new
  pairs = names.map { |n| holder(n, ready) }
  got = Array.new(names.size) { ready.pop }.to_h
  [got, pairs]
end

def finish(pairs)
  pairs.each { |_, rel| rel << :go }
  pairs.each { |t, _| t.join(10) || raise("a holder thread did not end") }
end

def threads_probe
  report = {}
  # One after the other (so that pool-0 gets 0), both alive at once.
  first0, q0 = start_holders(%w[pool-0])
  first1, q1 = start_holders(%w[pool-1])
  report[:threads] = first0.merge(first1)
  finish(q0 + q1)
  # Both ended; pool-1 comes back first. The lowest free number is 0, but
  # the label memory gives pool-1 its old 1.
  back1, p1 = start_holders(%w[pool-1])
  back0, p0 = start_holders(%w[pool-0])
  report[:again] = back1.merge(back0)
  fill, pf = start_holders(%w[fill-2 fill-3])
  report[:fill] = fill
  over, po = start_holders(%w[over])
  report[:over] = over["over"]
  finish(p1 + p0 + pf + po)
  # The bound counts threads and children together: the four holders have
  # ended but keep their numbers until a sweep (or the next registration).
  report[:swept] = Supervise.release_ended_threads
  report
end

def scoped_probe
  out = {}
  Thread.new do
    Thread.current.name = "scoper"
    Supervise.subworker("scoped") do |me|
      out[:inside] = ident(me)
      out[:same] = Supervise.thread_identity.equal?(me)
    end
    begin
      Supervise.subworker("scoped") do |me|
        out[:again] = ident(me)
        raise "boom"
      end
    rescue RuntimeError
      out[:raised] = true
    end
    out[:third] = Supervise.subworker("scoped") { |me| ident(me) }
  end.join
  out
end

def child_body(i, w, go_r)
  answer = begin
    me = Supervise.child_identity(label: "kid-#{i}")
    who = Supervise.whoami
    nested = begin
      Supervise.thread_identity(label: "inner")
      "none"
    rescue Supervise::Error => e
      e.class.name
    end
    copy = Supervise::Client.open do |c|
      first = c.whoami
      { copy_eq_handle: first == c.send(:whoami_handle, 5), reused: c.whoami.equal?(first) }
    end
    { pid: Process.pid, me: ident(me), who: ident(who), again: Supervise.child_identity.equal?(me),
      nested: nested }.merge(copy)
  rescue Exception => e # rubocop:disable Lint/RescueException
    { pid: Process.pid, error: "#{e.class}: #{e.message}" }
  end
  w.write(JSON.generate(answer))
  w.close
  go_r.read # EOF once every child has answered
end

def children_probe(count)
  go_r, go_w = IO.pipe
  kids = Array.new(count) do |i|
    r, w = IO.pipe
    pid = Process.fork do
      r.close
      go_w.close
      child_body(i, w, go_r)
      exit!(0)
    end
    w.close
    [pid, r]
  end
  go_r.close
  answers = kids.map do |_, r|
    text = r.read
    r.close
    JSON.parse(text)
  end
  go_w.close
  statuses = kids.map { |pid, _| Process.wait2(pid)[1].exitstatus }
  { children: answers, child_statuses: statuses }
end

mode, outdir = ARGV
abort("usage: subworker_worker.rb subworkers OUTDIR") unless mode == "subworkers" && outdir
data = { pid: Process.pid, worker: ident(Supervise.whoami) }
begin
  data.merge!(threads_probe)
  data[:scoped] = scoped_probe
  data.merge!(children_probe(2))
rescue Exception => e # rubocop:disable Lint/RescueException
  data[:error] = "#{e.class}: #{e.message}\n#{e.backtrace.first(5).join("\n")}"
end
write_result(outdir, data)
sleep
