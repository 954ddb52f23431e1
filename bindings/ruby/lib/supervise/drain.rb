# frozen_string_literal: true

# drain.rb: a worker asked to finish what it holds and exit (protocol
# section 12): Supervise::Drain (the worker's side), the administrator's
# Client#drain / #drain_report, Supervise.draining?, drain_extend, drain_ack.
#
# Design:
#   - How a worker learns it is draining: the supervisor publishes a drain
#     notice (event kind "drain", details "drain_id=N deadline_in_ms=M") on
#     the worker's own topic w/GROUP/ORDINAL/ before it sends the group's
#     drain_signal (the stop signal by default; "none": the notice is all it
#     gets). A Drain subscribes to that topic when created, through the C
#     event reader, which has no thread of its own, and reads it only when
#     the worker asks (#poll, #wait, #draining?). Handlers given to #on_drain
#     run in the thread that polls, once. No thread is started, so the
#     binding stays safe to use after Process.fork (the reader reconnects in
#     a child, see events.rb).
#   - During a rolling restart the old and new generation of an ordinal
#     share the topic: a notice counts only for this process's generation.
#   - A notice published before the subscription was live is lost (PUB keeps
#     nothing); #check and Supervise.draining? ask WhoAmI instead (one round
#     trip), whose draining field says the same.
#   - #extend_deadline(seconds) sends DrainExtend (deadline = now + seconds, capped by
#     drain_extend_max_ms); #ack(served) sends DrainAck. Both come from the
#     worker process itself (a descendant: PermissionDenied; not draining:
#     NotFound).
module Supervise
  # The drain notice: drain_id (its report), deadline_in_ms (left before
  # SIGKILL when sent), received_at (CLOCK_MONOTONIC seconds when read) and
  # source (:event or :whoami).
  DrainNotice = Struct.new(:drain_id, :deadline_in_ms, :received_at, :source, keyword_init: true)

  # One row of a drain report.
  DrainedWorker = Struct.new(:group, :ordinal, :generation, :pid, :reaped, :exited, :code, :signal,
                             :acknowledged, :killed, :time_to_exit_ms, :served, keyword_init: true)

  # A drain's report: id, done (every row reaped), workers.
  DrainReport = Struct.new(:id, :done, :workers, keyword_init: true) do
    # from_native copies a C sv_drain_report (not freed here).
    def self.from_native(ptr)
      n = [Native.sv_drain_report_count(ptr), 65_536].min
      rows = Array.new(n) do |i|
        DrainedWorker.new(
          group: Native.sv_drain_report_group(ptr, i).dup.freeze, ordinal: Native.sv_drain_report_ordinal(ptr, i),
          generation: Native.sv_drain_report_generation(ptr, i), pid: Native.sv_drain_report_pid(ptr, i),
          reaped: Native.sv_drain_report_is_reaped(ptr, i) != 0, exited: Native.sv_drain_report_exited(ptr, i) != 0,
          code: Native.sv_drain_report_code(ptr, i), signal: Native.sv_drain_report_signal(ptr, i),
          acknowledged: Native.sv_drain_report_acknowledged(ptr, i) != 0,
          killed: Native.sv_drain_report_killed(ptr, i) != 0,
          time_to_exit_ms: Native.sv_drain_report_time_to_exit_ms(ptr, i),
          served: Native.sv_drain_report_served(ptr, i)
        ).freeze
      end
      new(id: Native.sv_drain_report_id(ptr), done: Native.sv_drain_report_done(ptr) != 0,
          workers: rows.freeze).freeze
    end
  end

  # The drain requests of a Client.
  class Client
    # The protocol's bound on a drain deadline or extension, in seconds.
    MAX_DRAIN_S = 86_400

    # drain (administration) drains every worker (group nil), every worker
    # of group (ordinal nil) or one; deadline: seconds before SIGKILL (0:
    # the group's drain_timeout_ms). Returns the first DrainReport; follow
    # it with #drain_report. Raises NotFound, PermissionDenied, Busy,
    # Exhausted.
    def drain(group = nil, ordinal: nil, deadline: 0, timeout: @timeout)
      raise ArgumentError, "an ordinal needs a group" if group.nil? && !ordinal.nil?

      group = group.nil? ? nil : text(group)
      ord = ordinal.nil? ? -1 : u32(ordinal, "ordinal")
      dl = deadline.nil? || deadline.zero? ? 0 : seconds_ms(deadline, "deadline")
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_drain(c, group, ord, dl, ms, out) }
      owned(out, :sv_drain_report_free) { |p| DrainReport.from_native(p) }
    end

    # drain_report returns the current DrainReport of drain id (or of a
    # report). Raises NotFound once it is no longer kept.
    def drain_report(id, timeout: @timeout)
      id = id.is_a?(DrainReport) ? id.id : u64(id, "drain id")
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_drain_report(c, id, ms, out) }
      owned(out, :sv_drain_report_free) { |p| DrainReport.from_native(p) }
    end

    # drain_extend: this worker, draining, asks for its deadline to be now +
    # seconds. Raises NotFound (not draining), NotAWorker, PermissionDenied.
    def drain_extend(seconds, timeout: @timeout)
      more = seconds_ms(seconds, "seconds")
      call(timeout) { |c, ms| Native.sv_client_drain_extend(c, more, ms) }
      nil
    end

    # drain_ack: this worker has drained (it exits next), having served
    # served work items. Errors as #drain_extend.
    def drain_ack(served = 0, timeout: @timeout)
      u64_request(served, "served", timeout) { |c, n, ms| Native.sv_client_drain_ack(c, n, ms) }
    end

    # drain_state asks WhoAmI whether this process is draining: returns
    # [draining (true/false), milliseconds left before SIGKILL].
    def drain_state(timeout: @timeout)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_whoami(c, ms, out) }
      owned(out, :sv_identity_free) do |p|
        [Native.sv_identity_draining(p) != 0, Native.sv_identity_drain_deadline_in_ms(p)]
      end
    end

    private

    def seconds_ms(seconds, what)
      raise ArgumentError, "#{what} must be in (0, #{MAX_DRAIN_S}] seconds" unless
        seconds.is_a?(Numeric) && seconds.positive? && seconds <= MAX_DRAIN_S

      [(seconds * 1000).to_i, 1].max
    end
  end

  # A worker's view of its own drain.
  class Drain
    attr_reader :group, :ordinal, :generation, :notice

    # Subscribes to this worker's topic (identity from SUPERVISE_*;
    # NotAWorker outside a worker). client: for #extend, #ack, #check
    # (default: Supervise.client). timeout: seconds to connect. A block, if
    # given, is registered as #on_drain.
    def initialize(client: nil, timeout: Client::DEFAULT_TIMEOUT, &handler)
      me = Identity.from_env
      @group = me.group
      @ordinal = me.ordinal
      @generation = me.generation
      @client = client || Supervise.client
      @notice = nil
      @handlers = []
      @events = Events.new(prefix: "w/#{@group}/#{@ordinal}/", timeout: timeout)
      on_drain(&handler) if handler
    end

    # on_drain registers a handler(notice), run once by the poll that sees
    # the notice (at once when it was seen already).
    def on_drain(&handler)
      raise ArgumentError, "on_drain needs a block" unless handler

      @handlers << handler
      handler.call(@notice) if @notice
      handler
    end

    # poll reads this worker's events for up to timeout seconds (0: what
    # has arrived; nil: until the notice); returns the DrainNotice once
    # draining, else nil.
    def poll(timeout = 0)
      return @notice if @notice

      deadline = timeout.nil? ? nil : now + timeout
      loop do
        left = deadline.nil? ? nil : [deadline - now, 0].max
        ev = @events.next_event(timeout: left)
        return nil if ev.nil?
        return seen(ev) if ev.kind.to_s == "drain" && ev.generation == @generation
        return nil if deadline && now >= deadline
      end
    end

    # wait waits up to timeout seconds for the notice; TimedOut if none.
    def wait(timeout = nil)
      poll(timeout) or raise TimedOut, "no drain notice within #{timeout} s"
    end

    # draining? reads what has arrived (no wait, no round trip).
    def draining?
      !poll(0).nil?
    end

    # check asks WhoAmI (one round trip) for a notice that may have been
    # missed; returns the DrainNotice or nil.
    def check(timeout: Client::DEFAULT_TIMEOUT)
      unless @notice
        draining, left = @client.drain_state(timeout: timeout)
        announce(DrainNotice.new(drain_id: 0, deadline_in_ms: left, received_at: now, source: :whoami)) if draining
      end
      @notice
    end

    # extend_deadline asks for the deadline to be now + seconds (DrainExtend;
    # not #extend, which every Ruby object has).
    def extend_deadline(seconds, timeout: Client::DEFAULT_TIMEOUT)
      @client.drain_extend(seconds, timeout: timeout)
    end

    # ack tells the supervisor this worker has drained (DrainAck).
    def ack(served = 0, timeout: Client::DEFAULT_TIMEOUT)
      @client.drain_ack(served, timeout: timeout)
    end

    # close unsubscribes (the notice, if seen, is kept).
    def close
      @events.close
    end

    private

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def seen(event)
      fields = event.details.split.first(16).to_h { |w| k, _, v = w.partition("="); [k, v] }
      id = fields["drain_id"].to_s.match?(/\A\d{1,20}\z/) ? fields["drain_id"].to_i : 0
      left = fields["deadline_in_ms"].to_s.match?(/\A\d{1,20}\z/) ? fields["deadline_in_ms"].to_i : 0
      announce(DrainNotice.new(drain_id: id, deadline_in_ms: left, received_at: now, source: :event))
    end

    def announce(notice)
      @notice = notice.freeze
      @handlers.each { |h| h.call(@notice) }
      @notice
    end
  end

  class << self
    # draining? asks WhoAmI whether this worker was told to drain.
    def draining?(timeout: Client::DEFAULT_TIMEOUT)
      worker_client("ask whether it is draining").drain_state(timeout: timeout).first
    end

    # drain_extend / drain_ack: Client#drain_extend / #drain_ack for this
    # worker through the default client.
    def drain_extend(seconds, timeout: Client::DEFAULT_TIMEOUT)
      worker_client("extend a drain").drain_extend(seconds, timeout: timeout)
    end

    def drain_ack(served = 0, timeout: Client::DEFAULT_TIMEOUT)
      worker_client("acknowledge a drain").drain_ack(served, timeout: timeout)
    end
  end
end
