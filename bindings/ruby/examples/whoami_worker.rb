#!/usr/bin/env ruby
# frozen_string_literal: true

# whoami_worker.rb: the smallest useful libsupervise worker, in Ruby.
#
# Started by supervised, it asks "which worker am I" over the control socket
# ($SUPERVISE_URL) with the Ruby binding and prints one line, in the format
# of examples/whoami_worker.c, then waits for SIGTERM and exits 0 ("finish
# what you hold, then exit").
#
#   usage: whoami_worker.rb
#   (with an uninstalled build: SUPERVISE_LIBRARY=build/libsupervise.so and
#    ruby -I bindings/ruby/lib)
require "supervise"

$stdout.sync = true
stop_r, stop_w = IO.pipe
%w[TERM INT].each { |sig| Signal.trap(sig) { stop_w.write_nonblock(".", exception: false) } }

begin
  id = Supervise.whoami(timeout: 5)
rescue Supervise::Error => e
  warn "[rb] whoami: #{e.message}"
  exit(e.is_a?(Supervise::ConnectFailed) ? 111 : 1)
end
puts "[rb] I am #{id.group}[#{id.ordinal}] generation #{id.generation} pid #{id.pid} of #{id.group_size}, " \
     "purpose #{id.purpose.inspect}, context #{id.context_s}, parent #{id.parent ? 'yes' : 'none'}"

stop_r.read(1) # until SIGTERM or SIGINT
puts "[rb] #{ENV.fetch('SUPERVISE_GROUP', '?')}[#{ENV.fetch('SUPERVISE_ORDINAL', '?')}] " \
     "got SIGTERM: finishing and exiting 0"
exit 0
