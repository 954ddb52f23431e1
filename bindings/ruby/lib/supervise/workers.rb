# frozen_string_literal: true

# workers.rb: Supervise::Worker, one row of ListWorkers / WorkerStatus (what
# `supervisectl status` shows). Frozen values copied out of the C sv_workers
# handle (see identity.rb for the rule). Times are in seconds, like every
# duration of this binding; state is a Symbol (:running, :stopping,
# :backoff); last_exit_code and last_signal are nil when there is none.
module Supervise
  Worker = Struct.new(:group, :ordinal, :generation, :pid, :state, :uptime, :purpose,
                      :restarts, :last_exit_code, :last_signal, keyword_init: true)

  class Worker
    # list_from_native copies every entry of a C sv_workers (non-NULL, still
    # owned by the caller) into a frozen Array of frozen Workers.
    def self.list_from_native(ptr)
      n = Native
      Array.new(n.sv_workers_count(ptr)) do |i|
        code = n.sv_workers_last_exit_code(ptr, i)
        sig = n.sv_workers_last_signal(ptr, i)
        new(group: n.sv_workers_group(ptr, i), ordinal: n.sv_workers_ordinal(ptr, i),
            generation: n.sv_workers_generation(ptr, i), pid: n.sv_workers_pid(ptr, i),
            state: Native::STATES.fetch(n.sv_workers_state(ptr, i), :unspecified),
            uptime: n.sv_workers_uptime_ms(ptr, i) / 1000.0, purpose: n.sv_workers_purpose(ptr, i),
            restarts: n.sv_workers_restarts(ptr, i), last_exit_code: code.negative? ? nil : code,
            last_signal: sig.zero? ? nil : sig).freeze
      end.freeze
    end
  end
end
