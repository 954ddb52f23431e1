# frozen_string_literal: true

# deadline.rb: timeouts in seconds, turned into the C client's milliseconds.
#
# Design: every call of this binding that waits takes `timeout:` in seconds
# (Integer or Float, like Ruby's own IO#wait or Thread#join); nil means wait
# forever. A Deadline is fixed when the call starts, so a call that first has
# to (re)connect and then send its request stays within one budget.
module Supervise
  # A point in time by which a call must be done.
  class Deadline
    # The C client's "infinite" (SV_TIMEOUT_INFINITE).
    INFINITE_MS = Enums::TIMEOUT_INFINITE
    # Upper bound of a finite timeout handed to C (an int of milliseconds).
    MAX_MS = 2**31 - 1

    # seconds: a non-negative Numeric, or nil for no deadline. Raises
    # ArgumentError for anything else.
    def initialize(seconds)
      if seconds.nil?
        @at = nil
      elsif seconds.is_a?(Numeric) && seconds.real? && seconds >= 0 && seconds.finite?
        @at = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
      else
        raise ArgumentError, "timeout must be nil or a non-negative number of seconds, got #{seconds.inspect}"
      end
    end

    # ms converts seconds (validated as by new) straight to the C client's
    # milliseconds, rounded up: what remaining_ms of a Deadline made now
    # would return, for a call that needs no other step first.
    def self.ms(seconds)
      return INFINITE_MS if seconds.nil?
      raise ArgumentError, "timeout must be nil or a non-negative number of seconds, got #{seconds.inspect}" \
        unless seconds.is_a?(Numeric) && seconds.real? && seconds >= 0 && seconds.finite?

      [(seconds * 1000).ceil, MAX_MS].min
    end

    # remaining_ms is what is left, in whole milliseconds rounded up, for a
    # C call: -1 without deadline, 0 once it has passed.
    def remaining_ms
      return INFINITE_MS if @at.nil?

      left = @at - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      return 0 if left <= 0

      [(left * 1000).ceil, MAX_MS].min
    end

    # remaining_s is what is left in seconds (nil without deadline, 0 once
    # it has passed), to hand one deadline on to another call.
    def remaining_s
      return nil if @at.nil?

      [@at - Process.clock_gettime(Process::CLOCK_MONOTONIC), 0].max
    end
  end
end
