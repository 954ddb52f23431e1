# frozen_string_literal: true

# supervise.rb: the Ruby binding of libsupervise (the C client, client.h).
#
# A worker started by `supervised` asks "which worker am I?" and gets a
# durable, bounded identity: Supervise.whoami (live, one round trip) or
# Supervise::Identity.from_env (from the SUPERVISE_* variables, none).
# Supervise::Client wraps the rest of the protocol (hello, list, status,
# scale, stop, restart, reset, groups; ready, heartbeat and set_status for
# a worker about itself); Supervise::Events reads the event stream; every
# error is a Supervise::Error subclass.
#
# One file per concept under lib/supervise/: native (library loading),
# errors, deadline (timeouts), identity, hello, workers, groups, client,
# events, default_client, leases (Lease, Session; Supervise.lease with a
# block), drain (Drain, DrainReport; Supervise.draining?), activity
# (Supervise.activity with a block), subworker (Supervise.thread_identity,
# Supervise.subworker with a block, Supervise.child_identity).
require_relative "supervise/version"
require_relative "supervise/enums"
require_relative "supervise/native"
require_relative "supervise/errors"
require_relative "supervise/deadline"
require_relative "supervise/native_handle"
require_relative "supervise/block_open"
require_relative "supervise/identity"
require_relative "supervise/hello"
require_relative "supervise/workers"
require_relative "supervise/groups"
require_relative "supervise/client"
require_relative "supervise/events"
require_relative "supervise/default_client"
require_relative "supervise/leases"
require_relative "supervise/drain"
require_relative "supervise/activity"
require_relative "supervise/subworker"
