# frozen_string_literal: true

require "ffi"
require_relative "enums"

# native.rb: loading libsupervise.so.0 and declaring its C functions.
#
# Design:
#   - The library is loaded lazily, on the first call that needs it, so that
#     `require "supervise"` (and `rescue Supervise::NotFound`) work on a
#     machine without the shared library.
#   - Where it comes from: $SUPERVISE_LIBRARY (a path, for an uninstalled
#     build) when set and non-empty, else the installed soname
#     libsupervise.so.0 through the dynamic loader. An explicit path that
#     does not load is an error; there is no silent fallback to another copy.
#     Either failure raises one Supervise::LibraryNotFound naming both ways.
#   - The library is opened with RTLD_NODELETE: ruby-ffi dlclose()s its
#     libraries when Ruby frees every object at exit, while the transport's
#     threads (nng) may still be running code of the library; unmapping it
#     under them crashes the process at exit. RTLD_NOW resolves every
#     declared symbol at load time, so a library missing one fails at once.
#   - Only the C client API (client.h) and the error table (supervise.h) are
#     declared: every object is an opaque pointer read through accessors, so
#     no struct layout is mirrored here.
#   - Calls that talk to the supervisor are declared `blocking: true`: Ruby
#     releases its global lock while they wait, so other threads run. Every
#     one of them carries a timeout (see Supervise::Deadline).
module Supervise
  # Raised when libsupervise.so.0 cannot be loaded. It is a LoadError, like
  # any other missing native library, so a plain `rescue` does not hide it.
  class LibraryNotFound < LoadError; end

  # The raw C functions. Not a public API: use Supervise::Client.
  module Native
    extend FFI::Library

    # Name of the environment variable holding the path of the library.
    ENV_LIBRARY = "SUPERVISE_LIBRARY"
    # The installed soname.
    SONAME = "libsupervise.so.0"

    # Values of sv_kind and sv_state, as Ruby symbols (generated: enums.rb).
    KINDS = Enums::KINDS

    # IdentityFields is sv_identity_fields (client.h): every scalar of an
    # identity in one foreign call.
    class IdentityFields < FFI::Struct
      layout :size, :size_t,
             :group, :string,
             :purpose, :string,
             :supervisor_id, :string,
             :pid, :int64,
             :generation, :uint64,
             :drain_deadline_in_ms, :uint64,
             :frame_count, :uint64,
             :ordinal, :uint32,
             :group_size, :uint32,
             :kind, :int32,
             :draining, :int32
    end
    # FrameFields is sv_frame_fields (client.h): one context frame, flat.
    class FrameFields < FFI::Struct
      layout :name, :string,
             :generation, :uint64,
             :ordinal, :uint32,
             :kind, :int32
    end

    # Capacities of sv_whoami_result (client.h), generated from it.
    WHOAMI_MAX_FRAMES = Enums::WHOAMI_MAX_FRAMES
    WHOAMI_TEXT_BYTES = Enums::WHOAMI_TEXT_BYTES

    # WhoamiResult is sv_whoami_result (client.h): a whole whoami answer
    # that sv_client_whoami_copy fills in one foreign call; its strings
    # point into :text, inside the struct, so nothing is freed.
    class WhoamiResult < FFI::Struct
      layout :size, :size_t,
             :fields, IdentityFields,
             :n_frames, :uint32,
             :has_parent, :int32,
             :text_used, :uint32,
             :unchanged, :int32,
             :parent, FrameFields,
             :frames, [FrameFields, WHOAMI_MAX_FRAMES],
             :text, [:char, WHOAMI_TEXT_BYTES]
    end
    STATES = Enums::STATES

    # [name, argument types, return type, blocking?]
    FUNCTIONS = [
      [:sv_strerror, [:int], :string, false],
      [:sv_err_name, [:int], :string, false],
      [:sv_version, [], :string, false],
      [:sv_default_url, %i[pointer size_t], :int, false],
      [:sv_client_open, %i[pointer string int], :int, true],
      [:sv_client_close, [:pointer], :void, true],
      [:sv_client_error_message, [:pointer], :string, false],
      [:sv_client_hello, %i[pointer int pointer], :int, true],
      [:sv_hello_version, [:pointer], :uint32, false],
      [:sv_hello_minor_version, [:pointer], :uint32, false],
      [:sv_hello_server_name, [:pointer], :string, false],
      [:sv_hello_supervisor_id, [:pointer], :string, false],
      [:sv_hello_feature_count, [:pointer], :size_t, false],
      [:sv_hello_feature, %i[pointer size_t], :string, false],
      [:sv_hello_events_url, [:pointer], :string, false],
      [:sv_hello_durability_known, [:pointer], :int, false],
      [:sv_hello_durability_ok, [:pointer], :int, false],
      [:sv_hello_durability_reason, [:pointer], :string, false],
      [:sv_hello_durability_since_ms, [:pointer], :uint64, false],
      [:sv_hello_durability_message, [:pointer], :string, false],
      [:sv_hello_free, [:pointer], :void, false],
      [:sv_client_whoami, %i[pointer int pointer], :int, true],
      [:sv_identity_group, [:pointer], :string, false],
      [:sv_identity_ordinal, [:pointer], :uint32, false],
      [:sv_identity_generation, [:pointer], :uint64, false],
      [:sv_identity_kind, [:pointer], :int, false],
      [:sv_identity_pid, [:pointer], :int64, false],
      [:sv_identity_purpose, [:pointer], :string, false],
      [:sv_identity_supervisor_id, [:pointer], :string, false],
      [:sv_identity_group_size, [:pointer], :uint32, false],
      [:sv_identity_frame_count, [:pointer], :size_t, false],
      [:sv_identity_frame, %i[pointer size_t pointer pointer pointer], :int, false],
      [:sv_identity_parent, %i[pointer pointer pointer pointer], :int, false],
      [:sv_identity_free, [:pointer], :void, false],
      [:sv_identity_get_fields, %i[pointer pointer], :int, false],
      [:sv_client_whoami_copy, %i[pointer int pointer], :int, true],
      [:sv_client_list, %i[pointer string int pointer], :int, true],
      [:sv_client_status, %i[pointer string uint32 int pointer], :int, true],
      [:sv_workers_count, [:pointer], :size_t, false],
      [:sv_workers_group, %i[pointer size_t], :string, false],
      [:sv_workers_ordinal, %i[pointer size_t], :uint32, false],
      [:sv_workers_generation, %i[pointer size_t], :uint64, false],
      [:sv_workers_pid, %i[pointer size_t], :int64, false],
      [:sv_workers_state, %i[pointer size_t], :int, false],
      [:sv_workers_uptime_ms, %i[pointer size_t], :uint64, false],
      [:sv_workers_purpose, %i[pointer size_t], :string, false],
      [:sv_workers_restarts, %i[pointer size_t], :uint64, false],
      [:sv_workers_last_exit_code, %i[pointer size_t], :int32, false],
      [:sv_workers_last_signal, %i[pointer size_t], :int32, false],
      [:sv_workers_ready, %i[pointer size_t], :int, false],
      [:sv_workers_fast_failures, %i[pointer size_t], :uint32, false],
      [:sv_workers_restart_in_ms, %i[pointer size_t], :uint64, false],
      [:sv_workers_status_text, %i[pointer size_t], :string, false],
      [:sv_workers_free, [:pointer], :void, false],
      [:sv_client_scale, %i[pointer string uint32 int pointer], :int, true],
      [:sv_client_stop, %i[pointer string int pointer], :int, true],
      [:sv_client_restart, %i[pointer string uint32 int], :int, true],
      [:sv_client_restart_if, %i[pointer string uint32 uint64 int], :int, true],
      [:sv_client_reset, %i[pointer string int], :int, true],
      [:sv_client_groups, %i[pointer string int pointer], :int, true],
      [:sv_groups_count, [:pointer], :size_t, false],
      [:sv_groups_name, %i[pointer size_t], :string, false],
      [:sv_groups_count_wanted, %i[pointer size_t], :uint32, false],
      [:sv_groups_max_count, %i[pointer size_t], :uint32, false],
      [:sv_groups_failed, %i[pointer size_t], :int, false],
      [:sv_groups_failure_reason, %i[pointer size_t], :string, false],
      [:sv_groups_restart, %i[pointer size_t], :string, false],
      [:sv_groups_strategy, %i[pointer size_t], :string, false],
      [:sv_groups_running, %i[pointer size_t], :uint32, false],
      [:sv_groups_ready, %i[pointer size_t], :uint32, false],
      [:sv_groups_starting, %i[pointer size_t], :uint32, false],
      [:sv_groups_stopping, %i[pointer size_t], :uint32, false],
      [:sv_groups_backoff, %i[pointer size_t], :uint32, false],
      [:sv_groups_purpose, %i[pointer size_t], :string, false],
      [:sv_groups_free, [:pointer], :void, false],
      [:sv_client_ready, %i[pointer string int], :int, true],
      [:sv_client_heartbeat, %i[pointer int], :int, true],
      [:sv_events_open, %i[pointer string string int], :int, true],
      [:sv_events_next, %i[pointer int pointer], :int, true],
      [:sv_events_error_message, [:pointer], :string, false],
      [:sv_events_close, [:pointer], :void, false],
      [:sv_event_seq, [:pointer], :uint64, false],
      [:sv_event_kind, [:pointer], :string, false],
      [:sv_event_group, [:pointer], :string, false],
      [:sv_event_is_worker, [:pointer], :int, false],
      [:sv_event_ordinal, [:pointer], :uint32, false],
      [:sv_event_generation, [:pointer], :uint64, false],
      [:sv_event_pid, [:pointer], :int64, false],
      [:sv_event_time_unix_ms, [:pointer], :uint64, false],
      [:sv_event_supervisor_id, [:pointer], :string, false],
      [:sv_event_details, [:pointer], :string, false],
      [:sv_event_free, [:pointer], :void, false],
      # v1.3: draining, as WhoAmI reports it (drain.rb)
      [:sv_identity_draining, [:pointer], :int, false],
      [:sv_identity_drain_deadline_in_ms, [:pointer], :uint64, false],
      # leases and sessions (leases.rb)
      [:sv_client_lease_acquire, %i[pointer string int64 uint32 uint64 int pointer], :int, true],
      [:sv_client_lease_renew, %i[pointer uint64 uint64 int pointer], :int, true],
      [:sv_client_lease_release, %i[pointer uint64 uint64 int], :int, true],
      [:sv_client_lease_list, %i[pointer string uint64 int pointer], :int, true],
      [:sv_leases_count, [:pointer], :size_t, false],
      [:sv_leases_at, %i[pointer size_t], :pointer, false],
      [:sv_leases_free, [:pointer], :void, false],
      [:sv_lease_id, [:pointer], :uint64, false],
      [:sv_lease_pool, [:pointer], :string, false],
      [:sv_lease_slot, [:pointer], :uint32, false],
      [:sv_lease_token, [:pointer], :uint64, false],
      [:sv_lease_expires_in_ms, [:pointer], :uint64, false],
      [:sv_lease_resource, [:pointer], :string, false],
      [:sv_lease_holder_name, [:pointer], :string, false],
      [:sv_lease_unclaimed, [:pointer], :int, false],
      [:sv_lease_epoch, [:pointer], :uint64, false],
      [:sv_lease_free, [:pointer], :void, false],
      [:sv_client_session_open, %i[pointer uint64 int pointer], :int, true],
      [:sv_client_session_renew, %i[pointer uint64 int], :int, true],
      [:sv_client_session_close, %i[pointer uint64 int], :int, true],
      # drain (drain.rb)
      [:sv_client_drain, %i[pointer string int64 uint64 int pointer], :int, true],
      [:sv_client_drain_report, %i[pointer uint64 int pointer], :int, true],
      [:sv_client_drain_extend, %i[pointer uint64 int], :int, true],
      [:sv_client_drain_ack, %i[pointer uint64 int], :int, true],
      [:sv_drain_report_id, [:pointer], :uint64, false],
      [:sv_drain_report_done, [:pointer], :int, false],
      [:sv_drain_report_count, [:pointer], :size_t, false],
      [:sv_drain_report_group, %i[pointer size_t], :string, false],
      [:sv_drain_report_ordinal, %i[pointer size_t], :uint32, false],
      [:sv_drain_report_generation, %i[pointer size_t], :uint64, false],
      [:sv_drain_report_pid, %i[pointer size_t], :int64, false],
      [:sv_drain_report_is_reaped, %i[pointer size_t], :int, false],
      [:sv_drain_report_exited, %i[pointer size_t], :int, false],
      [:sv_drain_report_code, %i[pointer size_t], :int32, false],
      [:sv_drain_report_signal, %i[pointer size_t], :int32, false],
      [:sv_drain_report_acknowledged, %i[pointer size_t], :int, false],
      [:sv_drain_report_killed, %i[pointer size_t], :int, false],
      [:sv_drain_report_time_to_exit_ms, %i[pointer size_t], :uint64, false],
      [:sv_drain_report_served, %i[pointer size_t], :uint64, false],
      [:sv_drain_report_free, [:pointer], :void, false],
      # activity.h (activity.rb): no system call, never blocks
      [:sv_activity_region_open, %i[pointer string], :int, false],
      [:sv_activity_region_close, [:pointer], :void, false],
      [:sv_activity_enter, %i[pointer string], :int, false],
      [:sv_activity_leave, [:pointer], :int, false],
      [:sv_activity_depth, %i[pointer pointer], :int, false],
      # v1.4: activity and drain in a worker's status (workers.rb)
      [:sv_workers_draining, %i[pointer size_t], :int, false],
      [:sv_workers_drain_deadline_in_ms, %i[pointer size_t], :uint64, false],
      [:sv_workers_activities, %i[pointer size_t], :uint32, false],
      [:sv_workers_activity, %i[pointer size_t], :string, false],
      [:sv_workers_activity_age_ms, %i[pointer size_t], :uint64, false],
      # v1.4: sub-workers (subworker.rb) and the frames' generations
      [:sv_identity_frame_generation, %i[pointer size_t pointer], :int, false],
      [:sv_client_subworker_register, %i[pointer int string int64 int64 int pointer pointer], :int, true],
      [:sv_client_subworker_release, %i[pointer pointer int], :int, true],
      # the identity from the environment (identity.rb), no round trip
      [:sv_identity_from_env, %i[pointer pointer], :int, false]
    ].freeze

    @load_lock = Mutex.new
    @loaded = false

    class << self
      # load! loads the library and attaches FUNCTIONS once per process;
      # later calls return at once. Raises Supervise::LibraryNotFound.
      def load!
        return self if @loaded

        @load_lock.synchronize do
          next if @loaded

          open_library
          FUNCTIONS.each do |name, args, ret, blocking|
            attach_function(name, args, ret, blocking: blocking)
          end
          @loaded = true
        end
        self
      end

      # loaded? tells whether load! has succeeded in this process.
      def loaded?
        @loaded
      end

      # path describes where the library was loaded from (for messages).
      attr_reader :path

      private

      def open_library
        explicit = ENV.fetch(ENV_LIBRARY, "")
        target = explicit.empty? ? SONAME : explicit
        @ffi_lib_flags = FFI::DynamicLibrary::RTLD_NOW | FFI::DynamicLibrary::RTLD_LOCAL |
                         FFI::DynamicLibrary::RTLD_NODELETE
        begin
          ffi_lib(target)
        rescue LoadError => e
          tried = explicit.empty? ? "#{ENV_LIBRARY} is not set, and the installed #{SONAME}" \
                                  : "#{ENV_LIBRARY}=#{explicit}"
          raise LibraryNotFound,
                "cannot load libsupervise: tried #{tried} (#{e.message.lines.first&.strip}). " \
                "Set #{ENV_LIBRARY} to the path of libsupervise.so of an uninstalled build, " \
                "or install libsupervise so that the loader finds #{SONAME}"
        end
        @path = target
      end
    end
  end
end
