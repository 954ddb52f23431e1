# frozen_string_literal: true

# activity_worker.rb: a worker for test_activity_status.rb. In mode "busy"
# it enters the activity "request" and inside it "db query" (the
# supervisor then shows "request: db query"), writes
# OUTDIR/<group>-<ordinal>-<generation>.json and stays inside both scopes
# until SIGTERM; in mode "idle" it writes the file and waits outside any.
#
#   usage: activity_worker.rb busy|idle OUTDIR
require_relative "worker_common"

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
