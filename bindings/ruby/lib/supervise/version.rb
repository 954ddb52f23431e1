# frozen_string_literal: true

# version.rb: the gem's version, which follows the C library it wraps.
module Supervise
  # Version of this gem (and of the libsupervise API it was written for).
  VERSION = "0.1.0"
end
