# frozen_string_literal: true

# identity.rb: who a worker is. Supervise::Identity and Supervise::Frame.
#
# Design:
#   - An Identity is an immutable value (a frozen Struct) copied out of the C
#     sv_identity handle, which is freed before the caller sees anything: no
#     Ruby object ever points into C memory.
#   - Two sources: Identity.live (one WhoAmI round trip through a Client, the
#     supervisor's answer from the kernel's credentials of the connection;
#     Client#whoami reads it with from_result out of the flat struct that
#     sv_client_whoami_copy fills in one foreign call, or with from_native
#     out of an sv_identity handle when the answer is too large for it)
#     and Identity.from_env (zero round trips, the SUPERVISE_* variables the
#     supervisor set when it spawned the worker; they are inherited by every
#     descendant, even one that outlived its worker). from_env calls the C
#     library's sv_identity_from_env, so every binding accepts and refuses
#     the same environments.
#   - The environment does not carry the worker's pid nor the group's current
#     size: from_env leaves #pid and #group_size nil. Everything else is equal
#     to the live answer for the worker itself; #key compares the part that
#     tells two processes apart (see docs/protocol.md section 7).
#   - A sub-worker (a thread, a forked child; subworker.rb) has two frames:
#     [process p, thread t] or [process p, process c]; #parent is the
#     first. Each frame carries the generation of its level (the process's
#     generation, or the sub-generation; 0 from a server before v1.4).
module Supervise
  # One level of a worker's context: kind (:process or :thread), the ordinal
  # at that level, a name (for a process frame, the group; for a thread, its
  # label) and the generation at that level.
  Frame = Struct.new(:kind, :ordinal, :name, :generation, keyword_init: true) do
    def to_s
      "#{kind}:#{name}/#{ordinal}"
    end
  end

  # The identity of a supervised worker.
  Identity = Struct.new(:group, :ordinal, :generation, :kind, :pid, :purpose,
                        :supervisor_id, :context, :parent, :group_size,
                        keyword_init: true) do
    # key is [supervisor_id, group, ordinal, generation]: unique in time for
    # one process; the ordinal alone is shared by a process and its
    # replacement while they overlap.
    def key
      [supervisor_id, group, ordinal, generation]
    end

    # context_s renders the context like the C example:
    # "process:web/1" (frames joined by " > ").
    def context_s
      context.map(&:to_s).join(" > ")
    end
  end

  class Identity
    # LiveResult is the memory Client#whoami reuses: a Native::WhoamiResult
    # (about 10 KB), views of its parts made once (an FFI struct's nested
    # members cost an object each time they are read) and the Identity
    # built from the answer it holds. Not thread-safe: a Client uses its
    # own under its lock.
    class LiveResult
      # The whole Native::WhoamiResult (passed to sv_client_whoami_copy),
      # and the views of its scalars and of its parent frame.
      attr_reader :struct, :fields, :parent

      def initialize
        @struct = Native::WhoamiResult.new
        @struct[:size] = Native::WhoamiResult.size
        base = @struct.pointer
        @fields = Native::IdentityFields.new(base + Native::WhoamiResult.offset_of(:fields))
        @parent = Native::FrameFields.new(base + Native::WhoamiResult.offset_of(:parent))
        @frames_at = base + Native::WhoamiResult.offset_of(:frames)
        @frames = []
      end

      # identity is the Identity of the answer the struct holds: the one
      # built last when sv_client_whoami_copy reported it unchanged (it is
      # frozen, and the values are equal), else a new one.
      def identity
        return @last if @last && !@struct[:unchanged].zero?

        @last = Identity.from_result(self)
      end

      # frame is the view of frames[i] (0 <= i < WHOAMI_MAX_FRAMES).
      def frame(i)
        @frames[i] ||= Native::FrameFields.new(@frames_at + (i * Native::FrameFields.size))
      end
    end

    # The variables supervised sets in every worker: SUPERVISE_URL names the
    # socket, the others the worker (what sv_identity_from_env reads).
    ENV_NAMES = %w[SUPERVISE_URL SUPERVISE_GROUP SUPERVISE_ORDINAL SUPERVISE_GENERATION
                   SUPERVISE_PURPOSE SUPERVISE_SUPERVISOR_ID].freeze

    class << self
      # from_env reads the identity from the SUPERVISE_* variables of env
      # with no round trip, through the C library's sv_identity_from_env
      # (client.h): one contract for C, Python, Ruby and Lua. env is ENV
      # (the default: the process environment, read by C itself) or a Hash
      # of the variables. Raises Supervise::NotAWorker when a variable is
      # absent (or empty, except SUPERVISE_PURPOSE): not started by a
      # supervisor; Supervise::InvalidArgument when one is malformed or over
      # its bound (or holds a NUL byte). The detail names the variable.
      # #pid and #group_size are nil: the environment does not carry them.
      # Loads the library (Supervise::LibraryNotFound without it).
      def from_env(env = ENV)
        n = Native.load!
        res = Native::WhoamiResult.new
        res[:size] = Native::WhoamiResult.size
        strings = env.equal?(ENV) ? nil : env_strings(env)
        envp = strings && env_array(strings)
        err = n.sv_identity_from_env(envp, res)
        raise Errors.from_code(err, res[:text].to_s) unless err.zero?

        env_identity(res)
      end

      # from_native copies a C sv_identity (a non-NULL FFI::Pointer) into a
      # frozen Identity. The caller still owns and frees the handle.
      def from_native(ptr)
        n = Native
        s = scratch
        f = s[:fields]
        f[:size] = Native::IdentityFields.size
        raise ProtocolError, "identity unreadable" unless n.sv_identity_get_fields(ptr, f).zero?

        kind, ord, name, gen = s.values_at(:kind, :ord, :name, :gen)
        frames = Array.new([f[:frame_count], 64].min) do |i|
          raise ProtocolError, "frame #{i} unreadable" unless n.sv_identity_frame(ptr, i, kind, ord, name).zero?

          frame_from(kind, ord, name, n.sv_identity_frame_generation(ptr, i, gen).zero? ? gen.read_uint64 : 0)
        end
        parent = (frame_parent(frames, kind, ord, name) if n.sv_identity_parent(ptr, kind, ord, name).zero?)
        new(group: f[:group], ordinal: f[:ordinal], generation: f[:generation],
            kind: Native::KINDS.fetch(f[:kind], :unspecified),
            pid: f[:pid], purpose: f[:purpose],
            supervisor_id: f[:supervisor_id], context: frames.freeze,
            parent: parent, group_size: f[:group_size]).freeze
      end

      # from_result copies a Native::WhoamiResult that sv_client_whoami_copy
      # filled into a frozen Identity: the same values as from_native,
      # read from caller memory (one foreign call for the whole answer).
      # res is a LiveResult.
      def from_result(res)
        s = res.struct
        f = res.fields
        frames = Array.new([s[:n_frames], 64].min) { |i| flat_frame(res.frame(i), nil) }.freeze
        parent = (flat_parent(frames, res.parent) unless s[:has_parent].zero?)
        new(group: f[:group], ordinal: f[:ordinal], generation: f[:generation],
            kind: Native::KINDS.fetch(f[:kind], :unspecified),
            pid: f[:pid], purpose: f[:purpose],
            supervisor_id: f[:supervisor_id], context: frames,
            parent: parent, group_size: f[:group_size]).freeze
      end

      # scratch is this thread's out-parameter memory for from_native
      # (allocated once per thread rather than per call; memory is copied
      # into a forked child, so it stays valid there).
      def scratch
        Thread.current.thread_variable_get(:supervise_identity_scratch) ||
          Thread.current.thread_variable_set(
            :supervise_identity_scratch,
            { fields: Native::IdentityFields.new, kind: FFI::MemoryPointer.new(:int),
              ord: FFI::MemoryPointer.new(:uint32), name: FFI::MemoryPointer.new(:pointer),
              gen: FFI::MemoryPointer.new(:uint64) }.freeze
          )
      end

      private

      def frame_from(kind, ord, name, generation)
        str = name.read_pointer
        Frame.new(kind: Native::KINDS.fetch(kind.read_int, :unspecified), ordinal: ord.read_uint32,
                  name: str.null? ? "" : str.read_string.freeze, generation: generation).freeze
      end

      # frame_parent is the parent frame sv_identity_parent read; it has no
      # generation accessor, so it takes the first frame's when it is that
      # frame (a sub-worker's parent is its process frame), else 0.
      def frame_parent(frames, kind, ord, name)
        f = frame_from(kind, ord, name, 0)
        first = frames.first
        return f unless first && [first.kind, first.ordinal, first.name] == [f.kind, f.ordinal, f.name]

        first
      end

      # flat_frame is a Frame from a Native::FrameFields; generation nil
      # takes the struct's own.
      def flat_frame(fr, generation)
        name = fr[:name]
        Frame.new(kind: Native::KINDS.fetch(fr[:kind], :unspecified), ordinal: fr[:ordinal],
                  name: name.nil? ? "" : name.freeze,
                  generation: generation.nil? ? fr[:generation] : generation).freeze
      end

      # flat_parent is the parent frame as frame_parent makes it: the first
      # frame when it is that frame, else a frame of generation 0.
      def flat_parent(frames, fr)
        f = flat_frame(fr, 0)
        first = frames.first
        return f unless first && [first.kind, first.ordinal, first.name] == [f.kind, f.ordinal, f.name]

        first
      end

      # env_strings is the "NAME=value" strings of env's SUPERVISE_*
      # entries (the only ones the C side reads). A NUL byte would cut the
      # string C sees: InvalidArgument rather than a different value.
      def env_strings(env)
        env.filter_map do |k, v|
          next unless k.to_s.start_with?("SUPERVISE_") && !v.nil?

          s = "#{k}=#{v}"
          raise InvalidArgument, "#{k} holds a NUL byte" if s.include?("\0")

          s
        end
      end

      # env_array is a NULL-terminated char *[] of strings; the returned
      # pointer keeps the strings' memory alive while it is referenced.
      def env_array(strings)
        mem = strings.map { |s| FFI::MemoryPointer.from_string(s) }
        arr = FFI::MemoryPointer.new(:pointer, mem.size + 1)
        arr.write_array_of_pointer(mem + [nil])
        arr.instance_variable_set(:@strings, mem)
        arr
      end

      # env_identity is the frozen Identity of a WhoamiResult that
      # sv_identity_from_env filled: its one frame, no parent, pid and
      # group_size unknown (nil).
      def env_identity(res)
        f = res[:fields]
        group = f[:group].to_s.freeze
        frame = flat_frame(res[:frames][0], nil)
        new(group: group, ordinal: f[:ordinal], generation: f[:generation],
            kind: Native::KINDS.fetch(f[:kind], :unspecified), pid: nil,
            purpose: f[:purpose].to_s.freeze, supervisor_id: f[:supervisor_id].to_s.freeze,
            context: [frame].freeze, parent: nil, group_size: nil).freeze
      end
    end
  end
end
