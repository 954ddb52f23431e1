# frozen_string_literal: true

# sv_client_adapter.rb — the conformance testee adapter of the Ruby binding.
#
# Design: glue only. It reads one JSON command per line on stdin, makes that
# call with bindings/ruby's Supervise::Client against the control URL given
# as its only argument, and prints one JSON result line (the harness
# protocol of conformance/README.md, "Writing a client adapter"). Its first
# line is the banner naming the calls it can make. Run it with
# `ruby -I bindings/ruby/lib` and SUPERVISE_LIBRARY naming libsupervise.so.
require "json"
require "supervise"

OPS = %w[hello whoami list status restart ready].freeze
# Capabilities beyond the calls: hello's result carries durability.
EXTRAS = %w[hello.durability].freeze

def worker(w)
  { group: w.group, ordinal: w.ordinal, generation: w.generation, pid: w.pid,
    state: w.state.to_s, state_number: w.state_number, ready: w.ready ? true : false,
    purpose: w.purpose }
end

def call(client, cmd)
  t = cmd.fetch("deadline_ms", 5000) / 1000.0
  case cmd["op"]
  when "hello"
    h = client.hello(timeout: t)
    { version: h.version, minor_version: h.minor_version, server_name: h.server_name,
      supervisor_id: h.supervisor_id, features: h.features.to_a, events_url: h.events_url.to_s,
      durability: h.durability.to_h }
  when "whoami"
    i = client.whoami(timeout: t)
    { group: i.group, ordinal: i.ordinal, generation: i.generation, pid: i.pid,
      purpose: i.purpose, supervisor_id: i.supervisor_id, group_size: i.group_size }
  when "list"
    { workers: client.list(cmd["group"], timeout: t).map { |w| worker(w) } }
  when "status"
    worker(client.status(cmd["group"], cmd["ordinal"], timeout: t))
  when "restart"
    client.restart(cmd["group"], cmd["ordinal"], expected_generation: cmd["expected_generation"],
                                                 timeout: t)
    {}
  when "ready"
    client.ready(cmd["status"], timeout: t)
    {}
  else
    raise ArgumentError, "unknown op #{cmd['op']}"
  end
end

client = Supervise::Client.new(ARGV.fetch(0), timeout: 5, connect: false)
$stdout.sync = true
puts JSON.generate({ adapter: "ruby", features: OPS + EXTRAS })
$stdin.each_line do |line|
  cmd = JSON.parse(line)
  out = begin
    { ok: true, result: call(client, cmd) }
  rescue Supervise::Error => e
    { ok: false, error: e.name, code: e.code, message: e.detail,
      generic: e.instance_of?(Supervise::Error) }
  end
  puts JSON.generate(out)
end
client.close
