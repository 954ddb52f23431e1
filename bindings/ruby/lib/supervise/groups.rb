# frozen_string_literal: true

# groups.rb: Supervise::GroupInfo, one group as ListGroups reports it (what
# `supervisectl groups` shows): its size, failure state, restart type,
# strategy and how many of its workers are in each state. Frozen values
# copied out of the C sv_groups handle (see identity.rb for the rule).
module Supervise
  GroupInfo = Struct.new(:name, :count, :max_count, :failed, :failure_reason, :restart, :strategy,
                         :running, :ready, :starting, :stopping, :backoff, :purpose,
                         keyword_init: true)

  class GroupInfo
    # failed? tells whether the group exceeded its restart intensity (nothing
    # restarts until Client#reset).
    def failed?
      failed
    end

    # list_from_native copies every entry of a C sv_groups (non-NULL, still
    # owned by the caller) into a frozen Array of frozen GroupInfos.
    def self.list_from_native(ptr)
      n = Native
      Array.new(n.sv_groups_count(ptr)) do |i|
        new(name: n.sv_groups_name(ptr, i), count: n.sv_groups_count_wanted(ptr, i),
            max_count: n.sv_groups_max_count(ptr, i), failed: n.sv_groups_failed(ptr, i) != 0,
            failure_reason: n.sv_groups_failure_reason(ptr, i).to_s,
            restart: n.sv_groups_restart(ptr, i), strategy: n.sv_groups_strategy(ptr, i),
            running: n.sv_groups_running(ptr, i), ready: n.sv_groups_ready(ptr, i),
            starting: n.sv_groups_starting(ptr, i), stopping: n.sv_groups_stopping(ptr, i),
            backoff: n.sv_groups_backoff(ptr, i), purpose: n.sv_groups_purpose(ptr, i)).freeze
      end.freeze
    end
  end
end
