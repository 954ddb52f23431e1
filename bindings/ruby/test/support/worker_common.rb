# frozen_string_literal: true

# worker_common.rb: what the test workers in this directory share. Each is a
# separate Ruby process started by supervised; it loads this file with
# require_relative, reports one JSON file to the test and exits 0 on SIGTERM.

require "json"
require "supervise"

Signal.trap("TERM") { exit 0 }

# write_json writes data as JSON to path atomically (a temporary file, then
# a rename): the test sees the whole file or none.
def write_json(path, data)
  File.write("#{path}.tmp", JSON.generate(data))
  File.rename("#{path}.tmp", path)
end

# write_result writes data to OUTDIR/GROUP-ORDINAL-GENERATION.json, named
# after this worker's identity from the environment.
def write_result(outdir, data)
  env = Supervise::Identity.from_env
  write_json(File.join(outdir, "#{env.group}-#{env.ordinal}-#{env.generation}.json"), data)
end
