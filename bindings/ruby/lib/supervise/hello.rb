# frozen_string_literal: true

# hello.rb: Supervise::Hello, the supervisor's answer to Hello: the protocol
# version it chose, its name, its instance id, its features, the URL of
# its event socket ("" from a v1.0 server) and the durability of its
# journal (Supervise::Durability, docs/durability.md). A frozen
# value copied out of the C sv_hello handle (see identity.rb for the rule).
module Supervise
  # Durability tells whether the supervisor's journal follows its state.
  # known is false from a server without the feature "durable.status"
  # (before v1.5): the others then read false, "", 0, "". ok is true while
  # every change is journaled, false while durability is lost (a full,
  # read-only or failing state directory): reason is then the system
  # error's name ("ENOSPC", "EROFS", "EIO", "EWOULDBLOCK", ...; "" when ok)
  # and message says what failed, one line for people. since_ms is when the
  # current condition began, wall-clock milliseconds since the Unix epoch
  # (#since: the same as a Time).
  Durability = Struct.new(:known, :ok, :reason, :since_ms, :message, keyword_init: true) do
    # known? is #known.
    def known?
      known
    end

    # ok? is #ok.
    def ok?
      ok
    end

    # since is #since_ms as a Time (nil when unknown).
    def since
      known ? Time.at(Rational(since_ms, 1000)) : nil
    end
  end

  class Durability
    # UNKNOWN is what a server before v1.5 says: nothing.
    UNKNOWN = new(known: false, ok: false, reason: "", since_ms: 0, message: "").freeze

    # from_native copies the durability of a C sv_hello (non-NULL pointer,
    # still owned by the caller) into a frozen Durability.
    def self.from_native(ptr)
      n = Native
      new(known: n.sv_hello_durability_known(ptr) != 0, ok: n.sv_hello_durability_ok(ptr) != 0,
          reason: n.sv_hello_durability_reason(ptr).to_s.freeze,
          since_ms: n.sv_hello_durability_since_ms(ptr),
          message: n.sv_hello_durability_message(ptr).to_s.freeze).freeze
    end
  end

  Hello = Struct.new(:version, :minor_version, :server_name, :supervisor_id, :features,
                     :events_url, :durability, keyword_init: true) do
    # feature? tells whether the supervisor announced feature name.
    def feature?(name)
      features.include?(name.to_s)
    end
  end

  class Hello
    # from_native copies a C sv_hello (non-NULL pointer, still owned by the
    # caller) into a frozen Hello.
    def self.from_native(ptr)
      n = Native
      features = Array.new(n.sv_hello_feature_count(ptr)) { |i| n.sv_hello_feature(ptr, i).to_s.freeze }
      new(version: n.sv_hello_version(ptr), minor_version: n.sv_hello_minor_version(ptr),
          server_name: n.sv_hello_server_name(ptr), supervisor_id: n.sv_hello_supervisor_id(ptr),
          features: features.freeze, events_url: n.sv_hello_events_url(ptr).to_s,
          durability: Durability.from_native(ptr)).freeze
    end
  end
end
