# frozen_string_literal: true

# native_handle.rb: Supervise::NativeHandle, the address of a C handle that
# a Ruby object owns, shared with that object's finalizer.
#
# Design:
#   - An object that owns a C handle (a Client's sv_client, an Events'
#     sv_events) keeps its address in a NativeHandle: the finalizer proc
#     holds the NativeHandle, never the owner, or the owner could never be
#     collected.
#   - #release closes the handle at most once (the address is forgotten
#     first) and only when #owned? says this process may. A subclass names
#     the C close function (#close_native) and may narrow #owned? (a
#     Client's handle belongs to the process that opened it).
module Supervise
  # The address of one C handle (nil once released).
  class NativeHandle
    attr_accessor :address

    # release closes the C handle if #owned?, and forgets it either way.
    def release
      addr = @address
      @address = nil
      close_native(FFI::Pointer.new(addr)) if addr && owned?
    end

    # owned? is true when #release may close the handle: always, unless a
    # subclass says otherwise.
    def owned?
      true
    end

    # finalizer returns the proc ObjectSpace runs when the owner is
    # collected (or at exit).
    def self.finalizer(handle)
      proc { handle.release }
    end
  end
end
