# frozen_string_literal: true

# activity.rb: scoped activities, what this worker is doing, for
# `supervisectl status` and `top` (docs/activity.md).
#
#   Supervise.activity("indexing") do
#     Supervise.activity("parse") { ... }   # shows "indexing: parse"
#   end
#
# Design: the supervisor hands each worker a region file in
# $SUPERVISE_ACTIVITY; it is opened once per process through the C library
# (sv_activity_region_open) and each scope is one sv_activity_enter and one
# sv_activity_leave around the block: no round trip, no lock in the C hot
# path. The C library keeps one stack per thread, so nesting composes per
# thread. The leave is in an `ensure`: an exception (or a throw, a break)
# never leaves a stale name.
#
# A scope is a no-op, the block still runs, when there is no region:
# outside a supervised worker, with `activity = false` in the group, in a
# child made by Process.fork from a process that had it open (the region is
# the parent's), in a descendant that inherited the variable while a live
# process other than itself writes the region (its header names the
# writer: opening it again would wipe that writer's stacks), or when the
# library cannot be loaded. A scope that cannot be recorded (more than 64
# threads, deeper than 1024) runs unrecorded.
module Supervise
  # The process's activity region (internal; use Supervise.activity).
  module Activity
    ENV_ACTIVITY = "SUPERVISE_ACTIVITY"
    # The header's magic and the writer's pid (u32 at offset 24), native
    # byte order (docs/activity.md, "Region format").
    MAGIC = 0x52415653

    @lock = Mutex.new
    @pid = nil
    @region = nil

    class << self
      # region returns this process's region (an FFI::Pointer), opening it
      # on first use, or nil.
      def region
        return @region if @pid == Process.pid

        @lock.synchronize { lookup }
      end

      # depth returns the calling thread's open recorded scopes.
      def depth
        r = region
        return 0 if r.nil?

        out = FFI::MemoryPointer.new(:uint32)
        Native.sv_activity_depth(r, out).zero? ? out.read_uint32 : 0
      end

      # close! closes the region and forgets it (tests; the next scope
      # opens it again from the environment).
      def close!
        @lock.synchronize do
          Native.sv_activity_region_close(@region) if @region && @pid == Process.pid
          @region = nil
          @pid = nil
        end
      end

      private

      def lookup
        return @region if @pid == Process.pid

        # A forked child of a process that had the region: not ours.
        if @pid
          @pid = Process.pid
          @region = nil
          return nil
        end
        @region = open_region(ENV.fetch(ENV_ACTIVITY, ""))
        @pid = Process.pid
        @region
      end

      def open_region(path)
        return nil if path.empty? || owned_elsewhere?(path)

        Native.load!
        out = FFI::MemoryPointer.new(:pointer)
        Native.sv_activity_region_open(out, path).zero? ? out.read_pointer : nil
      rescue LibraryNotFound, SystemCallError
        nil
      end

      # owned_elsewhere? tells whether the header names a live writer that
      # is not this process.
      def owned_elsewhere?(path)
        head = File.open(path, "rb") { |f| f.read(28) }
        return false if head.nil? || head.bytesize < 28

        magic = head.unpack1("L")
        pid = head.byteslice(24, 4).unpack1("L")
        return false if magic != MAGIC || pid.zero? || pid == Process.pid

        Process.kill(0, pid)
        true
      rescue Errno::ESRCH, Errno::ENOENT
        false
      rescue Errno::EPERM
        true
      end
    end
  end

  # Supervise.activity runs the block with the calling thread in activity
  # name (1..47 bytes of UTF-8; longer names are cut) and returns the
  # block's value. Nested calls compose ("outer: inner").
  def self.activity(name)
    raise ArgumentError, "an activity name is a non-empty String" unless name.is_a?(String) && !name.empty?

    region = Activity.region
    entered = !region.nil? && Native.sv_activity_enter(region, name).zero?
    begin
      yield
    ensure
      Native.sv_activity_leave(region) if entered
    end
  end
end
