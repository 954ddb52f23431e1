# frozen_string_literal: true

# default_client.rb: the module-level API, Supervise.whoami and friends, over
# one process-wide default Client.
#
# Design: the default client is created on first use, connected to
# $SUPERVISE_URL (else the default socket, like supervisectl) by the first
# call, within that call's deadline. It is a plain Client, so after
# Process.fork each child that uses it connects on its own (see client.rb):
# a prefork server may call Supervise.whoami in the master, fork, and call it
# again in every child.
module Supervise
  @default_lock = Mutex.new
  @default_client = nil

  class << self
    # client returns the process-wide default Client (created lazily, not
    # closed by the caller).
    def client
      c = @default_client
      return c if c && !c.closed?

      @default_lock.synchronize do
        if @default_client.nil? || @default_client.closed?
          @default_client = Client.new(nil, connect: false)
        end
        @default_client
      end
    end

    # close_default_client closes the default client; the next call opens a
    # new one.
    def close_default_client
      @default_lock.synchronize do
        @default_client&.close
        @default_client = nil
      end
    end

    # whoami asks the supervisor, live, who this process is; returns an
    # Identity. Raises Supervise::NotAWorker when $SUPERVISE_URL is not set
    # (without a round trip) or the supervisor does not know this process.
    # timeout in seconds, nil for none.
    def whoami(timeout: Client::DEFAULT_TIMEOUT)
      if ENV.fetch("SUPERVISE_URL", "").empty?
        raise NotAWorker, "SUPERVISE_URL is not set: this process was not started by a supervisor"
      end

      client.whoami(timeout: timeout)
    end

    # identity_from_env is Identity.from_env (zero round trips).
    def identity_from_env(env = ENV)
      Identity.from_env(env)
    end

    # hello, list, status, scale, stop and restart call the method of the
    # same name on the default client (see Client).
    def hello(timeout: Client::DEFAULT_TIMEOUT)
      client.hello(timeout: timeout)
    end

    def list(group = nil, timeout: Client::DEFAULT_TIMEOUT)
      client.list(group, timeout: timeout)
    end

    def status(group, ordinal, timeout: Client::DEFAULT_TIMEOUT)
      client.status(group, ordinal, timeout: timeout)
    end

    def scale(group, count, timeout: Client::DEFAULT_TIMEOUT)
      client.scale(group, count, timeout: timeout)
    end

    def stop(group, timeout: Client::DEFAULT_TIMEOUT)
      client.stop(group, timeout: timeout)
    end

    def restart(group, ordinal, expected_generation: nil, timeout: Client::DEFAULT_TIMEOUT)
      client.restart(group, ordinal, expected_generation: expected_generation, timeout: timeout)
    end

    def reset(group, timeout: Client::DEFAULT_TIMEOUT)
      client.reset(group, timeout: timeout)
    end

    def groups(group = nil, timeout: Client::DEFAULT_TIMEOUT)
      client.groups(group, timeout: timeout)
    end

    # status with two arguments (group, ordinal) reads a worker, as
    # Client#status; with one (text) it sets this worker's status line, as
    # Client#set_status (which in protocol v1.1 also marks it ready).
    def status(*args, timeout: Client::DEFAULT_TIMEOUT)
      case args.size
      when 1 then worker_client("report a status").set_status(args[0], timeout: timeout)
      when 2 then client.status(*args, timeout: timeout)
      else raise ArgumentError, "wrong number of arguments (given #{args.size}, expected 1 or 2)"
      end
    end

    # ready, heartbeat: Client#ready / #heartbeat on the default client, for
    # the worker itself. NotAWorker without a round trip when $SUPERVISE_URL
    # is not set.
    def ready(status = nil, timeout: Client::DEFAULT_TIMEOUT)
      worker_client("report readiness").ready(status, timeout: timeout)
    end

    def heartbeat(timeout: Client::DEFAULT_TIMEOUT)
      worker_client("send a heartbeat").heartbeat(timeout: timeout)
    end

    # events subscribes to the supervisor's events (Supervise::Events:
    # url nil means events.sock beside $SUPERVISE_URL). With a block it
    # yields each event until the block breaks (each waits up to wait
    # seconds, nil: forever; TimedOut after that), closes the reader and
    # returns the block's value; without, it returns the open reader, an
    # Enumerable (reader.each is an Enumerator). Close it with #close.
    def events(prefix: nil, url: nil, wait: nil, timeout: Client::DEFAULT_TIMEOUT, &block)
      open_events(Events.new(prefix: prefix, url: url, timeout: timeout, wait: wait), &block)
    end

    # open_events runs the block form of events on an open reader.
    def open_events(reader)
      return reader unless block_given?

      begin
        reader.each { |ev| yield ev }
      ensure
        reader.close
      end
    end

    # worker_client is the default client for a call a worker makes about
    # itself; raises NotAWorker when $SUPERVISE_URL is not set.
    def worker_client(what)
      if ENV.fetch("SUPERVISE_URL", "").empty?
        raise NotAWorker, "SUPERVISE_URL is not set: this process was not started by a supervisor, " \
                          "it cannot #{what}"
      end

      client
    end

    # library_version returns sv_version() of the loaded C library.
    def library_version
      Native.load!.sv_version
    end
  end
end
