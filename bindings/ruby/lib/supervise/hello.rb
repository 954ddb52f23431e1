# frozen_string_literal: true

# hello.rb: Supervise::Hello, the supervisor's answer to Hello: the protocol
# version it chose, its name, its instance id, its features and the URL of
# its event socket ("" from a v1.0 server). A frozen
# value copied out of the C sv_hello handle (see identity.rb for the rule).
module Supervise
  Hello = Struct.new(:version, :minor_version, :server_name, :supervisor_id, :features,
                     :events_url, keyword_init: true) do
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
          features: features.freeze, events_url: n.sv_hello_events_url(ptr).to_s).freeze
    end
  end
end
