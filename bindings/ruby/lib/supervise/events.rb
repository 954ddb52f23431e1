# frozen_string_literal: true

# events.rb: Supervise::Events, a reader of the supervisor's event stream
# (sv_events), and Supervise::Event, one event.
#
# Design:
#   - An Events wraps one C sv_events handle, which subscribes to the
#     supervisor's event socket (nng PUB/SUB, docs/protocol.md section 9)
#     with no thread of its own. It connects when created, so the events
#     published from then on are kept (PUB keeps nothing for a reader that
#     is not connected yet).
#   - prefix filters on the topic: "w/GROUP/" every worker of a group,
#     "w/GROUP/ORDINAL/" one worker, "g/GROUP/" the group's own events; nil
#     keeps everything.
#   - Waiting is always bounded: #next_event(timeout:) returns nil when
#     nothing came in time; #each waits up to `wait` seconds for each event
#     (nil: forever) and raises Supervise::TimedOut when it passes. The wait
#     releases Ruby's global lock.
#   - Events is Enumerable: `reader.each` without a block is an Enumerator,
#     and reader.find / first / lazy work as usual.
#   - Fork: the C reader is fork-safe like the client: used in a child, it
#     drops the inherited socket without touching it and connects anew (the
#     events in between are lost to the child). The Ruby lock is replaced in
#     a child, as a thread of the parent may have held it.
#   - Each Event is a frozen value; the C event is freed at once. kind is a
#     Symbol (:started, :stopping, :exited, ...; :unknown for a kind of a
#     newer supervisor), time a Time, details the kind's fields as
#     "key=value" words ("code=3 uptime_ms=12"; "" when none).
module Supervise
  Event = Struct.new(:seq, :kind, :group, :ordinal, :generation, :pid, :time, :details,
                     :worker, :supervisor_id, keyword_init: true)

  class Event
    # worker? is true for a worker event (ordinal, generation and pid set).
    def worker?
      worker
    end

    # from_native copies a C sv_event (non-NULL, still owned by the caller).
    def self.from_native(ptr)
      n = Native
      new(seq: n.sv_event_seq(ptr), kind: n.sv_event_kind(ptr).to_sym, group: n.sv_event_group(ptr),
          ordinal: n.sv_event_ordinal(ptr), generation: n.sv_event_generation(ptr),
          pid: n.sv_event_pid(ptr), time: Time.at(Rational(n.sv_event_time_unix_ms(ptr), 1000)),
          details: n.sv_event_details(ptr).to_s, worker: n.sv_event_is_worker(ptr) != 0,
          supervisor_id: n.sv_event_supervisor_id(ptr)).freeze
    end
  end

  # A subscription to a supervisor's events.
  class Events
    include Enumerable

    # Longest topic prefix the C reader accepts, in bytes.
    MAX_PREFIX = 200

    # The C handle, shared with the finalizer (which must not reference the
    # reader itself).
    class Handle < NativeHandle
      # close_native closes the C reader.
      def close_native(ptr)
        Native.sv_events_close(ptr)
      end
    end

    # open creates a reader (see #initialize). With a block, it yields the
    # reader, closes it when the block ends and returns the block's value.
    extend BlockOpen

    attr_reader :prefix, :url
    # Seconds #each waits for each event (nil: forever).
    attr_accessor :wait

    # initialize subscribes to url (nil: events.sock beside $SUPERVISE_URL,
    # else beside the default socket; Client#events asks the supervisor)
    # within timeout seconds, keeping the events whose topic starts with
    # prefix (nil: all). Raises Supervise::ConnectFailed, InvalidArgument,
    # ArgumentError (a bad prefix or url).
    def initialize(prefix: nil, url: nil, timeout: Client::DEFAULT_TIMEOUT, wait: nil)
      Native.load!
      deadline = Deadline.new(timeout)
      Deadline.new(wait) # validates
      @prefix = check(prefix, MAX_PREFIX, "prefix")
      @url = check(url, Client::MAX_URL, "url")
      @wait = wait
      @lock = Mutex.new
      @pid = Process.pid
      @handle = Handle.new
      out = FFI::MemoryPointer.new(:pointer)
      err = Native.sv_events_open(out, @url, @prefix, deadline.remaining_ms)
      raise Errors.from_code(err, "subscribing to #{@url || 'the default event socket'}") unless err.zero?

      @handle.address = out.read_pointer.address
      ObjectSpace.define_finalizer(self, Handle.finalizer(@handle))
    end

    # next_event waits up to timeout seconds (nil: forever) for the next
    # event: an Event, or nil when none came in time. Raises
    # Supervise::ConnectionClosed or ConnectFailed when the supervisor went
    # away (the next call reconnects; the events in between are lost),
    # ProtocolError, and IOError once closed.
    def next_event(timeout: nil)
      deadline = Deadline.new(timeout)
      lock.synchronize do
        raise IOError, "closed #{self.class}" if @handle.address.nil?

        ptr = FFI::Pointer.new(@handle.address)
        out = FFI::MemoryPointer.new(:pointer)
        err = Native.sv_events_next(ptr, deadline.remaining_ms, out)
        return nil if err == TimedOut::CODE
        raise Errors.from_code(err, Native.sv_events_error_message(ptr)) unless err.zero?

        ev = out.read_pointer
        begin
          Event.from_native(ev)
        ensure
          Native.sv_event_free(ev)
        end
      end
    end

    # each yields every event as it comes, waiting up to #wait seconds for
    # each (nil: forever); raises Supervise::TimedOut when one does not
    # come in time. Without a block, an Enumerator.
    def each
      return enum_for(:each) unless block_given?

      loop do
        ev = next_event(timeout: @wait)
        raise TimedOut, "no event within #{@wait} s" if ev.nil?

        yield ev
      end
    end

    # close unsubscribes; closing twice is fine.
    def close
      lock.synchronize { @handle.release }
      nil
    end

    # closed? tells whether #close was called.
    def closed?
      @handle.address.nil?
    end

    def inspect
      "#<#{self.class} #{@url || '(default)'} prefix=#{@prefix.inspect}#{closed? ? ' (closed)' : ''}>"
    end

    private

    # lock is this process's Mutex: a fresh one in a forked child.
    def lock
      if @pid != Process.pid
        @lock = Mutex.new
        @pid = Process.pid
      end
      @lock
    end

    def check(value, max, what)
      return nil if value.nil?
      raise ArgumentError, "#{what} must be a String, got #{value.class}" unless value.is_a?(String)
      raise ArgumentError, "#{what} contains a NUL byte" if value.include?("\0")
      raise ArgumentError, "#{what} longer than #{max} bytes" if value.bytesize > max

      value.dup.freeze
    end
  end
end
