# frozen_string_literal: true

# activity_worker.rb: a worker for test_activity_status.rb. In mode "busy"
# it enters the activity "request" and inside it "db query" (the
# supervisor then shows "request: db query"), writes
# OUTDIR/<group>-<ordinal>-<generation>.json and stays inside both scopes
# until SIGTERM; in mode "idle" it writes the file and waits outside any.
#
#   usage: activity_worker.rb busy|idle OUTDIR
require "json"
require "supervise"

Signal.trap("TERM") { exit 0 }

def write_result(outdir, data)
  env = Supervise::Identity.from_env
  path = File.join(outdir, "#{env.group}-#{env.ordinal}-#{env.generation}.json")
  File.write("#{path}.tmp", JSON.generate(data))
  File.rename("#{path}.tmp", path)
end

mode, outdir = ARGV
abort("usage: activity_worker.rb busy|idle OUTDIR") unless %w[busy idle].include?(mode) && outdir
case mode
when "busy"
  Supervise.activity("request") do
    Supervise.activity("db query") do
      write_result(outdir, pid: Process.pid, depth: Supervise::Activity.depth)
      sleep
    end
  end
else
  write_result(outdir, pid: Process.pid, depth: Supervise::Activity.depth)
  sleep
end
