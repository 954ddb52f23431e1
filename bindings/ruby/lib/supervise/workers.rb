# frozen_string_literal: true

# workers.rb: Supervise::Worker, one row of ListWorkers / WorkerStatus (what
# `supervisectl status` shows). Frozen values copied out of the C sv_workers
# handle (see identity.rb for the rule). Times are in seconds, like every
# duration of this binding; state is a Symbol (:running, :stopping,
# :backoff, :starting, :failed, :waiting, :idle, :draining, or :unknown for
# a state a newer server added), state_number its protocol number (kept
# even when the name is :unknown); last_exit_code and
# last_signal are nil when there is none. ready is true once the worker
# reported ready (or its group does not use readiness); status_text is its
# last status line ("" when none); fast_failures the backoff step;
# restart_in the seconds before a restart in :backoff (0 otherwise).
# draining is true once it was told to drain, drain_deadline_in the seconds
# left before it is killed (0 when none). Activity (docs/activity.md, v1.4):
# activities is the number of its threads inside an activity, activity the
# oldest one's composed name ("request: db query") and activity_age its age
# in seconds; an idle worker (or one with `activity = false`, or a server
# before v1.4) has 0, "" and 0.0.
module Supervise
  Worker = Struct.new(:group, :ordinal, :generation, :pid, :state, :uptime, :purpose,
                      :restarts, :last_exit_code, :last_signal, :ready, :status_text,
                      :fast_failures, :restart_in, :state_number, :draining,
                      :drain_deadline_in, :activities, :activity, :activity_age,
                      keyword_init: true)

  class Worker
    # ready? is #ready.
    def ready?
      ready
    end

    # busy? tells whether the worker is inside at least one activity.
    def busy?
      activities.positive?
    end

    # restart_in_ms is #restart_in in whole milliseconds, as the protocol
    # sends it.
    def restart_in_ms
      (restart_in * 1000).round
    end

    # list_from_native copies every entry of a C sv_workers (non-NULL, still
    # owned by the caller) into a frozen Array of frozen Workers.
    def self.list_from_native(ptr)
      n = Native
      Array.new(n.sv_workers_count(ptr)) do |i|
        code = n.sv_workers_last_exit_code(ptr, i)
        sig = n.sv_workers_last_signal(ptr, i)
        new(group: n.sv_workers_group(ptr, i), ordinal: n.sv_workers_ordinal(ptr, i),
            generation: n.sv_workers_generation(ptr, i), pid: n.sv_workers_pid(ptr, i),
            state: Native::STATES.fetch(n.sv_workers_state(ptr, i), :unknown),
            state_number: n.sv_workers_state(ptr, i),
            uptime: n.sv_workers_uptime_ms(ptr, i) / 1000.0, purpose: n.sv_workers_purpose(ptr, i),
            restarts: n.sv_workers_restarts(ptr, i), last_exit_code: code.negative? ? nil : code,
            last_signal: sig.zero? ? nil : sig, ready: n.sv_workers_ready(ptr, i) != 0,
            status_text: n.sv_workers_status_text(ptr, i).to_s,
            fast_failures: n.sv_workers_fast_failures(ptr, i),
            restart_in: n.sv_workers_restart_in_ms(ptr, i) / 1000.0,
            draining: n.sv_workers_draining(ptr, i) != 0,
            drain_deadline_in: n.sv_workers_drain_deadline_in_ms(ptr, i) / 1000.0,
            activities: n.sv_workers_activities(ptr, i), activity: n.sv_workers_activity(ptr, i).to_s,
            activity_age: n.sv_workers_activity_age_ms(ptr, i) / 1000.0).freeze
      end.freeze
    end
  end
end
