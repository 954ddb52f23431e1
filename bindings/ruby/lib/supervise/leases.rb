# frozen_string_literal: true

# leases.rb: leases on the supervisor's pools (docs/leases.md; protocol
# section 11): Supervise::Lease, Supervise::Session, Client#lease & co and
# Supervise.lease.
#
# Design:
#   - A Lease is a frozen value copied out of the C sv_lease, which is freed
#     before the caller sees it: id, pool, slot, token (the fencing token,
#     strictly increasing per slot), resource (the slot's file or directory,
#     "" when the pool owns none), expires_in_ms (0: no TTL), holder
#     ("GROUP/ORD@GEN" or "session:ID"), unclaimed, epoch. It remembers the
#     client and the session it was acquired with, so #renew and #release
#     speak for the same holder.
#   - The holder is the calling worker as the kernel identifies it, or, for
#     a process that is not a worker (a tool; a forked child that wants a
#     lease of its own rather than its worker's), a Session it opened.
#   - The block forms (Supervise.lease("metrics") { |l| ... },
#     Client#lease with a block, Session#lease with a block) release the
#     lease when the block ends, by an exception too; a failed release then
#     never hides the block's own exception.
#   - fork: every call goes through Client#call, which reconnects in a child
#     (client.rb); nothing here starts a thread.
module Supervise
  # A lease the supervisor granted.
  Lease = Struct.new(:id, :pool, :slot, :token, :resource, :expires_in_ms, :holder,
                     :unclaimed, :epoch, :session, :client, keyword_init: true) do
    # renew extends the lease by its pool's TTL; returns the renewed Lease.
    # Raises NotFound (gone), PermissionDenied (not the holder), Conflict.
    def renew(timeout: client.timeout)
      client.lease_renew(id, session: session, timeout: timeout)
    end

    # release ends the lease (one that is gone already is fine). Raises
    # PermissionDenied when this process is not its holder.
    def release(timeout: client.timeout)
      client.lease_release(id, session: session, timeout: timeout)
    end

    def inspect
      "#<Supervise::Lease #{id} #{pool}[#{slot}] token #{token}#{resource.empty? ? '' : " #{resource}"}>"
    end
    alias_method :to_s, :inspect
  end

  # A lease session of a process that is not a worker; its leases end
  # with it.
  class Session
    attr_reader :id, :client

    def initialize(client, id)
      @client = client
      @id = id
      freeze
    end

    # lease acquires a lease held by this session (see Client#lease).
    def lease(pool, slot: nil, wait: 0, timeout: @client.timeout, &block)
      @client.lease(pool, slot: slot, wait: wait, session: @id, timeout: timeout, &block)
    end

    # leases lists this session's leases.
    def leases(pool = nil, timeout: @client.timeout)
      @client.leases(pool, session: @id, timeout: timeout)
    end

    # renew restarts the session's TTL; NotFound once it expired.
    def renew(timeout: @client.timeout)
      @client.session_renew(@id, timeout: timeout)
    end

    # close ends the session and its leases (closing twice is fine).
    def close(timeout: @client.timeout)
      @client.session_close(@id, timeout: timeout)
    end

    def inspect
      "#<Supervise::Session #{@id}>"
    end
  end

  # The lease requests of a Client.
  class Client
    # The slot argument meaning "the lowest free one".
    ANY_SLOT = Enums::LEASE_ANY_SLOT
    # Longest pool name (the protocol's bound on names).
    MAX_POOL = 64

    # lease acquires a lease on pool: on slot (e.g. the worker's ordinal) or,
    # with nil, the lowest free one, waiting up to wait seconds (0: not at
    # all) for one to be freed. session: a Session (or its id) for a holder
    # that is not a worker; nil: this worker. With a block: yields the Lease,
    # releases it when the block ends (even by an exception) and returns the
    # block's value; without, returns the Lease. Raises NotFound (no such
    # pool or session), Exhausted (no free slot), Busy (the slot is taken),
    # DeadlinePassed (the wait ended with none), Conflict, NotAWorker (no
    # session outside a worker), PermissionDenied (another uid's session).
    def lease(pool, slot: nil, wait: 0, session: nil, timeout: @timeout)
      pool = pool_arg(pool)
      slot = slot.nil? ? ANY_SLOT : u32(slot, "slot")
      wait_ms = wait_ms_arg(wait)
      sid = session_arg(session)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_lease_acquire(c, pool, slot, wait_ms, sid, ms, out) }
      l = owned(out, :sv_lease_free) { |p| lease_from_native(p, sid) }
      return l unless block_given?

      Supervise.scoped_lease(l) { yield l }
    end

    # lease_renew renews lease (a Lease or its id); returns the renewed
    # Lease. Raises NotFound, PermissionDenied, Conflict.
    def lease_renew(lease, session: nil, timeout: @timeout)
      id, sid = lease_ids(lease, session)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_lease_renew(c, id, sid, ms, out) }
      owned(out, :sv_lease_free) { |p| lease_from_native(p, sid) }
    end

    # lease_release ends lease (a Lease or its id); returns nil. Raises
    # PermissionDenied when the caller is not its holder.
    def lease_release(lease, session: nil, timeout: @timeout)
      id, sid = lease_ids(lease, session)
      call(timeout) { |c, ms| Native.sv_client_lease_release(c, id, sid, ms) }
      nil
    end

    # leases lists leases (of pool, or of every pool): an administrator
    # sees every one, a worker its own, a session's owner that session's.
    def leases(pool = nil, session: nil, timeout: @timeout)
      pool = pool.nil? ? nil : pool_arg(pool)
      sid = session_arg(session)
      out = FFI::MemoryPointer.new(:pointer)
      call(timeout) { |c, ms| Native.sv_client_lease_list(c, pool, sid, ms, out) }
      owned(out, :sv_leases_free) do |p|
        Array.new([Native.sv_leases_count(p), 65_536].min) { |i| lease_from_native(Native.sv_leases_at(p, i), sid) }
      end
    end

    # session opens a lease session living ttl seconds unless renewed.
    # With a block: yields the Session and closes it when the block ends.
    def session(ttl, timeout: @timeout)
      raise ArgumentError, "ttl must be in (0, 86400] seconds" unless ttl.is_a?(Numeric) && ttl.positive? && ttl <= 86_400

      out = FFI::MemoryPointer.new(:uint64)
      call(timeout) { |c, ms| Native.sv_client_session_open(c, [(ttl * 1000).to_i, 1].max, ms, out) }
      s = Session.new(self, out.read_uint64)
      return s unless block_given?

      failed = false
      begin
        yield s
      rescue Exception # rubocop:disable Lint/RescueException
        failed = true
        raise
      ensure
        begin
          s.close
        rescue Error
          raise unless failed
        end
      end
    end

    # session_renew / session_close: see Session.
    def session_renew(id, timeout: @timeout)
      u64_request(id, "session", timeout) { |c, sid, ms| Native.sv_client_session_renew(c, sid, ms) }
    end

    def session_close(id, timeout: @timeout)
      u64_request(id, "session", timeout) { |c, sid, ms| Native.sv_client_session_close(c, sid, ms) }
    end

    private

    def lease_from_native(ptr, sid)
      Lease.new(id: Native.sv_lease_id(ptr), pool: Native.sv_lease_pool(ptr).dup.freeze,
                slot: Native.sv_lease_slot(ptr), token: Native.sv_lease_token(ptr),
                resource: (Native.sv_lease_resource(ptr) || "").dup.freeze,
                expires_in_ms: Native.sv_lease_expires_in_ms(ptr),
                holder: (Native.sv_lease_holder_name(ptr) || "").dup.freeze,
                unclaimed: Native.sv_lease_unclaimed(ptr) != 0, epoch: Native.sv_lease_epoch(ptr),
                session: sid, client: self).freeze
    end

    def lease_ids(lease, session)
      if lease.is_a?(Lease)
        [lease.id, session.nil? ? lease.session : session_arg(session)]
      else
        [u64(lease, "lease id"), session_arg(session)]
      end
    end

    def pool_arg(pool)
      pool = text(pool)
      raise ArgumentError, "pool must be 1..#{MAX_POOL} bytes" unless pool.bytesize.between?(1, MAX_POOL)

      pool
    end

    def session_arg(session)
      return 0 if session.nil?
      return session.id if session.is_a?(Session)

      u64(session, "session")
    end

    def wait_ms_arg(wait)
      return 0 if wait.nil? || wait.zero?
      raise ArgumentError, "wait must be >= 0 seconds" unless wait.is_a?(Numeric) && wait.positive?

      [(wait * 1000).ceil, 2**32 - 1].min
    end
  end

  class << self
    # lease acquires a lease through the default client (Client#lease); with
    # a block it is released when the block ends, by an exception too:
    #   Supervise.lease("metrics", slot: me.ordinal) { |l| ... }
    # A worker holds it itself (NotAWorker without a round trip when
    # $SUPERVISE_URL is not set); another process passes session:.
    def lease(pool, slot: nil, wait: 0, session: nil, timeout: Client::DEFAULT_TIMEOUT, &block)
      c = session.nil? ? worker_client("hold a lease without a session") : client
      c.lease(pool, slot: slot, wait: wait, session: session, timeout: timeout, &block)
    end

    # leases: this worker's (or session's) leases (Client#leases).
    def leases(pool = nil, session: nil, timeout: Client::DEFAULT_TIMEOUT)
      client.leases(pool, session: session, timeout: timeout)
    end

    # session: Client#session on the default client.
    def session(ttl, timeout: Client::DEFAULT_TIMEOUT, &block)
      client.session(ttl, timeout: timeout, &block)
    end

    # scoped_lease yields, then releases l whatever happens; a release that
    # fails while an exception is on its way out is dropped in its favour.
    def scoped_lease(lease)
      failed = false
      begin
        yield
      rescue Exception # rubocop:disable Lint/RescueException
        failed = true
        raise
      ensure
        begin
          lease.release
        rescue Error
          raise unless failed
        end
      end
    end
  end
end
