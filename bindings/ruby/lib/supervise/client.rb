# frozen_string_literal: true

# client.rb: Supervise::Client, a connection to a supervisor (sv_client).
#
# Design:
#   - Each call takes `timeout:` in seconds (nil waits forever) and defaults
#     to the client's own timeout (5 s unless given). The deadline covers the
#     whole call, including a (re)connect the call has to make first.
#   - Results are frozen Ruby values; the C handles they were read from are
#     freed before the call returns. Errors raise Supervise::Error subclasses
#     carrying the supervisor's message (sv_client_error_message).
#   - Threads: one Ruby Mutex serialises the calls of a client (the C handle
#     does the same) and guards its connection against close(). The C calls
#     that wait release Ruby's global lock, so other threads keep running.
#   - Fork safety: the connection belongs to the process that opened it. A
#     client remembers that pid; when it is used in another process (a child
#     after Process.fork), it abandons the inherited C handle without
#     touching it (not even to close it: its lock may have been held by a
#     thread that does not exist in the child, and the transport's state is
#     the parent's) and opens a fresh connection within the call's deadline.
#     The finalizer that closes a handle runs only in the process that opened
#     it, so a child that exits normally never touches its parent's handle.
#     The abandoned handle is one small allocation (and, depending on the
#     transport, one file descriptor) per client per child; the parent's
#     connection is unaffected.
#   - Worker calls (#ready, #heartbeat, #set_status) are made by a worker
#     about itself: the supervisor checks the kernel's credentials of the
#     connection, so only the worker process itself may make them (a
#     descendant gets PermissionDenied, anyone else NotAWorker).
module Supervise
  # A connection to one supervisor.
  class Client
    # Default timeout of every call, in seconds.
    DEFAULT_TIMEOUT = 5.0
    # Longest URL the C client accepts, in bytes (CL_MAX_URL - 1).
    MAX_URL = 511
    # sv_err SV_ETOOLARGE: sv_client_whoami_copy's answer does not fit.
    ETOOLARGE = TooLarge::CODE

    # The C handle and the pid of the process that opened it. Shared with
    # the finalizer, which must not reference the Client itself.
    class Handle < NativeHandle
      attr_accessor :pid

      # owned? is true in the process that opened the handle: only that one
      # closes it.
      def owned?
        @pid == Process.pid
      end

      # close_native closes the C client.
      def close_native(ptr)
        Native.sv_client_close(ptr)
      end
    end

    # open creates a client (see #initialize). With a block, it yields the
    # client, closes it when the block ends (even by an exception) and
    # returns the block's value; without, it returns the client.
    extend BlockOpen

    class << self
      # resolve_url picks the URL: url when given and non-empty, else
      # $SUPERVISE_URL, else the default socket (sv_default_url), like
      # supervisectl. Raises ArgumentError for a URL over MAX_URL bytes.
      def resolve_url(url)
        url = url.to_s
        url = ENV.fetch("SUPERVISE_URL", "") if url.empty?
        if url.empty?
          Native.load!
          buf = FFI::MemoryPointer.new(:char, MAX_URL + 1)
          err = Native.sv_default_url(buf, buf.size)
          raise Errors.from_code(err, "cannot build the default socket URL") unless err.zero?

          url = buf.read_string
        end
        raise ArgumentError, "URL longer than #{MAX_URL} bytes" if url.bytesize > MAX_URL
        raise ArgumentError, "URL contains a NUL byte" if url.include?("\0")

        url.dup.freeze
      end
    end

    # The URL this client connects to, and its default timeout in seconds.
    attr_reader :url, :timeout

    # initialize loads the library and, unless connect: false, connects to
    # url (nil: $SUPERVISE_URL, else the default socket) within timeout
    # seconds. With connect: false the first call connects. Raises
    # Supervise::ConnectFailed, Supervise::InvalidArgument, ArgumentError,
    # Supervise::LibraryNotFound. Close it with #close (or use Client.open
    # with a block); an unclosed client is closed when collected.
    def initialize(url = nil, timeout: DEFAULT_TIMEOUT, connect: true)
      Native.load!
      Deadline.new(timeout) # validates
      @url = self.class.resolve_url(url)
      @timeout = timeout
      @lock = Mutex.new
      @closed = false
      @handle = Handle.new
      ObjectSpace.define_finalizer(self, Handle.finalizer(@handle))
      @lock.synchronize { handle(Deadline.new(timeout)) } if connect
    end

    # close disconnects; later calls raise IOError. Closing twice is fine.
    # In a forked child it only forgets the parent's connection.
    def close
      @lock.synchronize do
        @closed = true
        @handle.release
      end
      nil
    end

    # closed? tells whether #close was called.
    def closed?
      @closed
    end

    # hello exchanges Hello: returns a Supervise::Hello.
    def hello(timeout: @timeout)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_hello(c, ms, out) }
      owned(out, :sv_hello_free) { |p| Hello.from_native(p) }
    end

    # whoami asks the supervisor who this process is (by the kernel's
    # credentials of the connection): returns a Supervise::Identity. Raises
    # Supervise::NotAWorker when this process is not (a descendant of) one
    # of its workers.
    #
    # Every call makes the round trip. One foreign call
    # (sv_client_whoami_copy) does it and fills this client's reusable
    # result struct under the lock; the Identity is copied out of it before
    # the lock is released, or, when the answer is byte for byte the one
    # the struct held, the (frozen) Identity built from that answer is
    # returned again. With the connection of this process open already,
    # the timeout is the request's whole deadline without reading the clock.
    def whoami(timeout: @timeout)
      @lock.synchronize do
        if @closed || @handle.address.nil? || @handle.pid != Process.pid
          deadline = Deadline.new(timeout)
          ptr = handle(deadline)
          ms = deadline.remaining_ms
        else
          ms = Deadline.ms(timeout)
          ptr = FFI::Pointer.new(@handle.address)
        end
        res = (@whoami_res ||= Identity::LiveResult.new)
        err = Native.sv_client_whoami_copy(ptr, ms, res.struct)
        return res.identity if err.zero?
        raise Errors.from_code(err, Native.sv_client_error_message(ptr)) unless err == ETOOLARGE
      end
      whoami_handle(timeout) # an answer beyond the protocol's bounds
    end

    # list returns the workers of group (nil: every group) as an Array of
    # Supervise::Worker. Raises Supervise::NotFound for an unknown group.
    def list(group = nil, timeout: @timeout)
      group = group.nil? ? nil : text(group)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_list(c, group, ms, out) }
      owned(out, :sv_workers_free) { |p| Worker.list_from_native(p) }
    end

    # status returns the Supervise::Worker at ordinal of group. Raises
    # Supervise::NotFound for an unknown group or an empty ordinal.
    def status(group, ordinal, timeout: @timeout)
      group = text(group)
      ordinal = u32(ordinal, "ordinal")
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_status(c, group, ordinal, ms, out) }
      owned(out, :sv_workers_free) { |p| Worker.list_from_native(p).first }
    end

    # scale sets the number of workers of group to count; returns the
    # previous target. Raises Supervise::NotFound, Supervise::Exhausted
    # (above the group's max_count), Supervise::Busy.
    def scale(group, count, timeout: @timeout)
      group = text(group)
      count = u32(count, "count")
      prev = FFI::MemoryPointer.new(:uint32)
      call(timeout) { |c, ms| Native.sv_client_scale(c, group, count, ms, prev) }
      prev.read_uint32
    end

    # stop stops every worker of group; returns the previous target. The
    # group can be started again with #scale. Errors as #scale.
    def stop(group, timeout: @timeout)
      group = text(group)
      prev = FFI::MemoryPointer.new(:uint32)
      call(timeout) { |c, ms| Native.sv_client_stop(c, group, ms, prev) }
      prev.read_uint32
    end

    # restart stops the worker at ordinal of group; the supervisor starts its
    # replacement with the same ordinal and the next generation. Returns nil.
    # With expected_generation (the generation #status showed), a
    # compare-and-swap: it restarts only if the worker's generation is still
    # that one, else Supervise::Conflict and nothing changes; the library
    # resends such a request after a lost connection. Without it, not
    # retried on a lost connection (it is not idempotent). Raises
    # Supervise::NotFound, Busy (the group failed: #reset it), Conflict.
    def restart(group, ordinal, expected_generation: nil, timeout: @timeout)
      group = text(group)
      ordinal = u32(ordinal, "ordinal")
      if expected_generation.nil?
        call(timeout) { |c, ms| Native.sv_client_restart(c, group, ordinal, ms) }
      else
        gen = u64(expected_generation, "expected_generation")
        call(timeout) { |c, ms| Native.sv_client_restart_if(c, group, ordinal, gen, ms) }
      end
      nil
    end

    # reset clears the failed state of group (restart intensity exceeded),
    # its restart history and its workers' backoff, and starts them again;
    # harmless on a group that has not failed. Returns nil. Raises
    # Supervise::NotFound, Busy.
    def reset(group, timeout: @timeout)
      group = text(group)
      call(timeout) { |c, ms| Native.sv_client_reset(c, group, ms) }
      nil
    end

    # groups returns the groups (only group when given) as an Array of
    # Supervise::GroupInfo, in the order of the config file. Raises
    # Supervise::NotFound for an unknown group.
    def groups(group = nil, timeout: @timeout)
      group = group.nil? ? nil : text(group)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_groups(c, group, ms, out) }
      owned(out, :sv_groups_free) { |p| GroupInfo.list_from_native(p) }
    end

    # ready tells the supervisor that this worker is ready, with an optional
    # status line (at most 1024 bytes; the supervisor keeps 255). A worker
    # of a group with `ready = true` is :starting until it does. Calling it
    # again changes only the status line. Returns nil. Raises
    # Supervise::NotAWorker, PermissionDenied (a descendant of a worker).
    def ready(status = nil, timeout: @timeout)
      status = status.nil? ? nil : status_arg(status)
      call(timeout) { |c, ms| Native.sv_client_ready(c, status, ms) }
      nil
    end

    # set_status sets this worker's status line (Worker#status_text). In
    # protocol v1.1 the line travels with Ready, so this is ready(text): it
    # also marks the worker ready. Errors as #ready.
    def set_status(text, timeout: @timeout)
      ready(status_arg(text), timeout: timeout)
    end

    # heartbeat tells the supervisor that this worker is alive: it re-arms
    # the group's watchdog (watchdog_ms). Returns nil. Errors as #ready.
    def heartbeat(timeout: @timeout)
      call(timeout) { |c, ms| Native.sv_client_heartbeat(c, ms) }
      nil
    end

    # events subscribes to the event socket this client's supervisor
    # announces in Hello (see Supervise::Events; one timeout covers the
    # Hello and the connection). With a block: yields each event as it
    # comes (each waits up to wait seconds, nil: forever) until the block
    # breaks, then closes the reader. Without: returns the open reader.
    def events(prefix: nil, wait: nil, timeout: @timeout, &block)
      deadline = Deadline.new(timeout)
      url = hello(timeout: deadline.remaining_s).events_url
      raise UnsupportedVersion, "the supervisor announces no event socket (protocol v1.0)" if url.empty?

      Supervise.open_events(Events.new(prefix: prefix, url: url, timeout: deadline.remaining_s, wait: wait),
                            &block)
    end

    def inspect
      "#<#{self.class} #{@url}#{@closed ? ' (closed)' : ''}>"
    end

    private

    # call runs the block with this process's C handle and the milliseconds
    # left, under the client's lock; a non-zero sv_err raises.
    def call(timeout)
      deadline = Deadline.new(timeout)
      @lock.synchronize do
        ptr = handle(deadline)
        err = yield(ptr, deadline.remaining_ms)
        raise Errors.from_code(err, Native.sv_client_error_message(ptr)) unless err.zero?
      end
    end

    # handle returns this process's C handle, connecting first when there is
    # none yet or the one held was opened by another process (fork).
    def handle(deadline)
      raise IOError, "closed #{self.class}" if @closed

      if @handle.address.nil? || @handle.pid != Process.pid
        @handle.address = nil # inherited across fork: abandoned, never used
        out = FFI::MemoryPointer.new(:pointer)
        err = Native.sv_client_open(out, @url, deadline.remaining_ms)
        raise Errors.from_code(err, "connecting to #{@url}") unless err.zero?

        @handle.pid = Process.pid
        @handle.address = out.read_pointer.address
      end
      FFI::Pointer.new(@handle.address)
    end

    # whoami_handle is whoami through an sv_identity handle (any size).
    def whoami_handle(timeout)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_whoami(c, ms, out) }
      owned(out, :sv_identity_free) { |p| Identity.from_native(p) }
    end

    # owned reads the handle a successful call stored in out, yields it and
    # frees it with free_fn whatever the block does.
    def owned(out, free_fn)
      ptr = out.read_pointer
      begin
        yield ptr
      ensure
        Native.public_send(free_fn, ptr)
      end
    end

    def text(value)
      raise ArgumentError, "expected a String, got #{value.class}" unless value.is_a?(String) || value.is_a?(Symbol)

      s = value.to_s
      raise ArgumentError, "string contains a NUL byte" if s.include?("\0")

      s
    end

    def status_arg(value)
      raise ArgumentError, "status must be a String, got #{value.class}" unless value.is_a?(String)
      raise ArgumentError, "status contains a NUL byte" if value.include?("\0")
      raise ArgumentError, "status longer than 1024 bytes" if value.bytesize > 1024

      value
    end

    def u64(value, what)
      raise ArgumentError, "#{what} must be an Integer in 0..#{2**64 - 1}" unless value.is_a?(Integer) && value.between?(0, 2**64 - 1)

      value
    end

    # u64_request checks value as an unsigned 64-bit argument (what names it
    # in the ArgumentError), then runs the request the block makes from the
    # C handle, that value and the milliseconds left (see #call); returns
    # nil. For the requests whose one argument is such an integer.
    def u64_request(value, what, timeout)
      value = u64(value, what)
      call(timeout) { |c, ms| yield(c, value, ms) }
      nil
    end

    def u32(value, what)
      raise ArgumentError, "#{what} must be an Integer in 0..#{2**32 - 1}" unless value.is_a?(Integer) && value.between?(0, 2**32 - 1)

      value
    end
  end
end
