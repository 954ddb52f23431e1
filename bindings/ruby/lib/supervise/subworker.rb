# frozen_string_literal: true

# subworker.rb: sub-workers, threads and forked children of a worker
# (protocol v1.4, feature "subworkers"; docs/subworkers.md).
#
#   Thread.new do
#     Thread.current.name = "pool-0"
#     me = Supervise.thread_identity          # [process p, thread t]
#   end
#   Supervise.subworker("indexer") { |me| ... }   # released at block end
#   Process.fork { me = Supervise.child_identity(label: "kid") }  # [p, c]
#
# Design:
#   - A thread registers through the process's default client (the
#     supervisor knows the caller from the kernel's credentials of that
#     connection; the label is only the process's name for the thread). Its
#     grant is kept with Thread#thread_variable_set: thread-local, not
#     fiber-local, so fibers of one thread share it.
#   - Ruby has no hook that runs when a thread ends. Every grant is also
#     kept in one process-wide table with its Thread; each registration
#     first releases the grants of threads that have ended (a sweep), and
#     Supervise.release_ended_threads does it on demand. So a thread that
#     ends and a new one for the same role (same label) get the same number,
#     with the next sub-generation; and a number is never kept by a dead
#     thread longer than the next registration (the process's death reclaims
#     the rest).
#   - Supervise.subworker with a block registers for the block and releases
#     in an `ensure`, exception or not (unless the thread held that label
#     already: then the outer registration keeps it).
#   - A forked child registers itself (Supervise.child_identity, alias
#     register_child) on its own connection; the default client reconnects
#     in a child (client.rb). Its number is released when it exits (the
#     supervisor watches its pidfd) or by release_child.
#   - Fork: every grant remembers the pid that made it; the table belongs to
#     that pid. A child starts with an empty table and never releases its
#     parent's grants.
#   - The C identity handle of a grant is kept until the grant is released
#     (the release names it), then freed; Identity values are frozen copies.
module Supervise
  # The registration of a sub-worker (internal; see Supervise.thread_identity).
  module SubWorker
    # The longest label the supervisor takes, in bytes.
    MAX_LABEL = 64
    # The deadline of a release made by a sweep, in seconds.
    RELEASE_TIMEOUT = 1.0
    # Upper bound of a wanted number (a uint32 on the wire).
    MAX_NUMBER = 2**32 - 1
    # The thread variable holding a thread's Grant.
    KEY = :__supervise_subworker
    # Poll interval of a child's retry while its number is still held.
    RETRY_STEP = 0.02

    # One registration: the Identity, whether it was a re-claim (again),
    # the pid that made it, the thread it belongs to (nil for a child) and
    # the C handle a release names.
    class Grant
      attr_reader :identity, :again, :pid, :thread

      def initialize(identity, again, address, thread)
        @identity = identity
        @again = again
        @address = address
        @thread = thread
        @pid = Process.pid
      end

      # mine? tells whether this process made it and it is not released.
      def mine?
        !@address.nil? && @pid == Process.pid
      end

      # release sends ReleaseSubWorker (once) and frees the C handle; in
      # another process (a forked child) it only forgets the grant. Raises
      # the release's error when raise_errors, else swallows it (the
      # process's death reclaims the number).
      def release(timeout: RELEASE_TIMEOUT, raise_errors: false)
        addr = @address
        @address = nil
        return nil if addr.nil? || @pid != Process.pid

        ptr = FFI::Pointer.new(addr)
        begin
          Supervise.client.release_subworker(ptr, timeout: timeout)
        rescue Error, IOError
          raise if raise_errors
        ensure
          Native.sv_identity_free(ptr)
        end
        nil
      end
    end

    @lock = Mutex.new
    @pid = nil
    @grants = [] # thread grants of this process
    @child = nil # this process's grant as a child

    class << self
      # register sends RegisterSubWorker through the default client and
      # returns a Grant. kind: :thread or :process.
      def register(kind, label, number, tid, thread, timeout)
        Supervise.worker_client("register a sub-worker")
        number = check_number(number)
        id_out = FFI::MemoryPointer.new(:pointer)
        again = FFI::MemoryPointer.new(:int)
        Supervise.client.register_subworker(kind, label, number, tid, id_out, again, timeout: timeout)
        ptr = id_out.read_pointer
        begin
          identity = Identity.from_native(ptr)
        rescue StandardError
          Native.sv_identity_free(ptr)
          raise
        end
        Grant.new(identity, again.read_int != 0, ptr.address, thread)
      end

      # label returns the label as a String: given (1..64 bytes, no NUL),
      # or the thread's name, or "thread-<native id>" (cut to 64 bytes).
      def label_for(label, thread)
        if label.nil?
          name = thread.name.to_s
          name = "thread-#{thread.native_thread_id}" if name.empty?
          return cut(name)
        end
        raise ArgumentError, "label must be a String, got #{label.class}" unless label.is_a?(String)
        unless label.bytesize.between?(1, MAX_LABEL) && !label.include?("\0")
          raise ArgumentError, "label must be 1..#{MAX_LABEL} bytes without NUL"
        end

        label
      end

      # thread_grant returns the calling thread's live grant, or nil.
      def thread_grant
        g = Thread.current.thread_variable_get(KEY)
        g if g&.mine?
      end

      # register_thread registers the calling thread (label nil: its name),
      # after releasing the grants of ended threads. When the label is held
      # by another live thread (Conflict) and neither label nor number was
      # asked for, it retries once as "name#native_id": correct, not durable.
      def register_thread(label, number, timeout)
        thread = Thread.current
        raw = label_for(label, thread)
        deadline = Deadline.new(timeout)
        @lock.synchronize do
          own_table
          sweep
          grant = begin
            register(:thread, raw, number, thread.native_thread_id, thread, deadline.remaining_s)
          rescue Conflict
            raise unless label.nil? && number.nil?

            alt = cut("#{raw}##{thread.native_thread_id}")
            register(:thread, alt, nil, thread.native_thread_id, thread, deadline.remaining_s)
          end
          @grants << grant unless grant.again
          grant
        end
      end

      # forget drops grant from the table and releases it.
      def release_grant(grant)
        @lock.synchronize { @grants.delete(grant) if own_table }
        grant.release
      end

      # sweep releases the grants of threads that have ended; returns how
      # many. Called under @lock.
      def sweep
        ended = @grants.reject { |g| g.thread&.alive? }
        ended.each do |g|
          @grants.delete(g)
          g.release
        end
        ended.size
      end

      # sweep_now is sweep under the lock (Supervise.release_ended_threads).
      def sweep_now
        @lock.synchronize do
          own_table
          sweep
        end
      end

      # child registers this process as a forked child of its worker (once
      # per process). With a number, a Conflict (the number's previous
      # holder has exited but the supervisor has not seen it yet) is retried
      # until the deadline.
      def child(label, number, timeout)
        raw = label.nil? ? nil : label_for(label, nil)
        deadline = Deadline.new(timeout)
        @lock.synchronize do
          own_table
          return @child.identity if @child&.mine?

          @child = claim_child(raw, number, deadline)
          @child.identity
        end
      end

      # release_child gives up this process's number as a child.
      def release_child
        grant = @lock.synchronize do
          own_table
          g = @child
          @child = nil
          g
        end
        grant&.release(timeout: Client::DEFAULT_TIMEOUT, raise_errors: true)
        nil
      end

      private

      def claim_child(raw, number, deadline)
        loop do
          return register(:process, raw, number, 0, nil, deadline.remaining_s)
        rescue Conflict
          raise if number.nil? || deadline.remaining_s&.<=(RETRY_STEP)

          sleep RETRY_STEP
        end
      end

      # own_table resets the table in a forked child (the grants are the
      # parent's: forgotten, never released here). Returns true.
      def own_table
        return true if @pid == Process.pid

        @pid = Process.pid
        @grants = []
        @child = nil
        true
      end

      def check_number(number)
        return -1 if number.nil?
        raise ArgumentError, "number must be nil or an Integer in 0..#{MAX_NUMBER}" unless number.is_a?(Integer) && number.between?(0, MAX_NUMBER)

        number
      end

      def cut(str)
        s = str.b.byteslice(0, MAX_LABEL).force_encoding(Encoding::UTF_8)
        s = s.byteslice(0, s.bytesize - 1) until s.valid_encoding?
        s.delete("\0")
      end
    end
  end

  class Client
    # register_subworker sends RegisterSubWorker (kind :thread or :process)
    # and stores the C identity in id_out and the again flag in again_out
    # (internal: use Supervise.thread_identity / child_identity).
    def register_subworker(kind, label, number, tid, id_out, again_out, timeout: @timeout)
      k = { thread: 2, process: 1 }.fetch(kind)
      call(timeout) do |c, ms|
        Native.sv_client_subworker_register(c, k, label, number, tid, ms, id_out, again_out)
      end
      nil
    end

    # release_subworker sends ReleaseSubWorker for the C identity ptr
    # (internal). A grant that is no longer current is released too.
    def release_subworker(ptr, timeout: @timeout)
      call(timeout) { |c, ms| Native.sv_client_subworker_release(c, ptr, ms) }
      nil
    end
  end

  class << self
    # thread_identity returns the calling thread's sub-worker Identity,
    # registering it on first use: kind :thread, ordinal its number under
    # the process, generation its sub-generation, context [process p,
    # thread t], parent the process frame. label: its role (default: the
    # thread's name, else "thread-<native id>"); number: a wanted number
    # (default: the one this label held last, else the lowest free). Kept
    # until the thread ends (then released by the next registration of the
    # process, or Supervise.release_ended_threads) or the process dies.
    # Raises NotAWorker (outside a worker), TooLarge (in a registered
    # child), Exhausted (the group's max_subworkers), Conflict (the number
    # is held), ArgumentError.
    def thread_identity(label: nil, number: nil, timeout: Client::DEFAULT_TIMEOUT)
      grant = SubWorker.thread_grant
      return grant.identity if grant

      grant = SubWorker.register_thread(label, number, timeout)
      Thread.current.thread_variable_set(SubWorker::KEY, grant)
      grant.identity
    end

    # subworker registers the calling thread under label for the block,
    # yields its Identity, releases it when the block ends (by an exception
    # too) and returns the block's value. Inside, thread_identity returns
    # it. Errors as thread_identity.
    def subworker(label = nil, number: nil, timeout: Client::DEFAULT_TIMEOUT)
      raise ArgumentError, "Supervise.subworker needs a block" unless block_given?

      grant = SubWorker.register_thread(label, number, timeout)
      prev = Thread.current.thread_variable_get(SubWorker::KEY)
      Thread.current.thread_variable_set(SubWorker::KEY, grant)
      begin
        yield grant.identity
      ensure
        Thread.current.thread_variable_set(SubWorker::KEY, prev)
        SubWorker.release_grant(grant) unless grant.again
      end
    end

    # release_thread_identity releases the calling thread's registration
    # now (nil if it has none).
    def release_thread_identity
      grant = SubWorker.thread_grant
      return nil unless grant

      Thread.current.thread_variable_set(SubWorker::KEY, nil)
      SubWorker.release_grant(grant)
    end

    # release_ended_threads releases the numbers of threads that have ended
    # (a registration does it too); returns how many.
    def release_ended_threads
      SubWorker.sweep_now
    end

    # child_identity registers this process, forked by a worker (a Puma or
    # Unicorn worker under a supervised master), as its sub-worker and
    # returns the Identity: kind :process, context [process p, process c].
    # Once per process; released when it exits (or release_child). number:
    # a wanted number (a Puma worker index); while its previous holder's
    # exit is not yet seen (Conflict) it is retried until timeout. Raises
    # NotAWorker (the parent is no worker), PermissionDenied (called in the
    # worker itself), Exhausted, Conflict, ArgumentError.
    def child_identity(label: nil, number: nil, timeout: Client::DEFAULT_TIMEOUT)
      SubWorker.child(label, number, timeout)
    end
    alias register_child child_identity

    # release_child gives this child's number back before it exits.
    def release_child
      SubWorker.release_child
    end
  end
end
