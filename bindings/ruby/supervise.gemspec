# frozen_string_literal: true

# supervise.gemspec: the Ruby binding of libsupervise. Pure Ruby over
# ruby-ffi; the C library (libsupervise.so.0) is installed separately (or
# named by $SUPERVISE_LIBRARY). The file list is taken from the directory, not
# from git, so an uncommitted tree builds the same gem.
require_relative "lib/supervise/version"

Gem::Specification.new do |spec|
  spec.name = "supervise"
  spec.version = Supervise::VERSION
  spec.summary = "Durable, bounded worker identity from a libsupervise supervisor"
  spec.description = "Ruby binding of libsupervise: a worker started by supervised asks which " \
                     "worker it is (group, ordinal 0..N-1, generation) and administers groups, " \
                     "through the C client over the supervise.v1 protocol."
  spec.authors = ["libsupervise developers"]
  spec.homepage = "https://example.invalid/libsupervise"
  spec.required_ruby_version = ">= 2.7"
  spec.files = Dir.chdir(__dir__) do
    Dir.glob(["lib/**/*.rb", "examples/*.rb", "README.md"]).sort
  end
  spec.require_paths = ["lib"]
  spec.add_dependency "ffi", "~> 1.15"
  spec.requirements << "libsupervise.so.0 (the libsupervise C client library)"
end
