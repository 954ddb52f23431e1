# frozen_string_literal: true

# errors.rb: one exception class per sv_err code, under Supervise::Error.
#
# Design:
#   - The classes are defined here, statically, so `rescue Supervise::NotFound`
#     works before the C library is loaded. Their codes mirror SV_ERR_MAP in
#     libsupervise/include/supervise/supervise.h, which is append-only and
#     never renumbered; the test suite checks every code against the loaded
#     library's sv_err_name(), in both directions.
#   - Each instance carries #code (Integer), #name (sv_err_name without the
#     SV_ prefix, e.g. "ENOTFOUND") and #detail (the supervisor's one-line
#     message for a typed error, or a local description). #message is
#     "<strerror> (<NAME>): <detail>".
#   - A code this file does not know (a newer library) maps to the base class
#     Supervise::Error itself, with the number kept in #code.
module Supervise
  # Base class of every error the supervisor or the C client reports.
  class Error < StandardError
    attr_reader :code, :name, :detail

    # code: an sv_err value; detail: the supervisor's message or a local
    # description (may be nil or ""); name and description default to the
    # C library's sv_err_name / sv_strerror when it is loaded.
    def initialize(detail = nil, code: nil, name: nil, description: nil)
      @code = code || self.class.const_get(:CODE)
      @name = name || Errors.name_of(@code)
      @detail = detail.to_s
      description ||= Errors.description_of(@code)
      super(@detail.empty? ? "#{description} (#{@name})" : "#{description} (#{@name}): #{@detail}")
    end

    CODE = nil

    # Largest code that is a refusal sent by the supervisor (protocol
    # ErrorCode values, SV_SERVER_ERR_MAX); larger codes are local failures.
    SERVER_MAX = 99

    # refusal? tells whether the supervisor refused the request (codes
    # 1..99, including ones this binding does not name), as opposed to a
    # local failure (timeout, connection, memory, arguments).
    def refusal?
      code.is_a?(Integer) && code.between?(1, SERVER_MAX)
    end
  end

  # Error codes 1..10 are sent by the supervisor; 100 and up are local.
  ERROR_CLASSES = {
    1 => ["BadRequest", "EBADREQ", "bad request"],
    2 => ["UnsupportedVersion", "EVERSION", "unsupported protocol version"],
    3 => ["UnknownMessage", "EUNKNOWNMSG", "unknown message"],
    4 => ["NotFound", "ENOTFOUND", "not found"],
    5 => ["PermissionDenied", "EPERM", "permission denied"],
    6 => ["Exhausted", "EEXHAUSTED", "resource exhausted"],
    7 => ["Busy", "EBUSY", "busy"],
    8 => ["TooLarge", "ETOOLARGE", "too large"],
    9 => ["InternalError", "EINTERNAL", "internal error"],
    10 => ["NotAWorker", "ENOTWORKER", "caller is not a supervised worker"],
    11 => ["Conflict", "ECONFLICT", "state changed (expected generation differs)"],
    12 => ["DeadlinePassed", "EDEADLINE", "deadline passed before it could be served"],
    100 => ["InvalidArgument", "EINVAL", "invalid argument"],
    101 => ["OutOfMemory", "ENOMEM", "out of memory"],
    102 => ["TimedOut", "ETIMEDOUT", "timed out"],
    103 => ["ConnectFailed", "ECONNECT", "cannot connect to supervisor"],
    104 => ["ConnectionClosed", "ECLOSED", "connection closed"],
    105 => ["ProtocolError", "EPROTO", "protocol error in reply"],
    106 => ["SystemError", "ESYSTEM", "system call failed"]
  }.freeze

  ERROR_CLASSES.each do |code, (klass, name, _)|
    cls = Class.new(Error)
    cls.const_set(:CODE, code)
    cls.const_set(:NAME, name.to_s)
    const_set(klass, cls)
  end

  # Helpers to map codes to classes, names and messages.
  module Errors
    module_function

    # class_for returns the exception class of code, or Supervise::Error for
    # a code this binding does not know.
    def class_for(code)
      entry = ERROR_CLASSES[code]
      entry ? Supervise.const_get(entry[0]) : Error
    end

    # from_code builds (does not raise) the exception for code with detail.
    def from_code(code, detail = nil)
      cls = class_for(code)
      cls == Error ? Error.new(detail, code: code) : cls.new(detail)
    end

    # name_of returns sv_err_name(code) from the library when it is loaded,
    # else this file's copy; "UNKNOWN" for a code outside both.
    def name_of(code)
      return Native.sv_err_name(code) if Native.loaded? && code.is_a?(Integer) && code.between?(-2**31, 2**31 - 1)

      ERROR_CLASSES.dig(code, 1)&.to_s || "UNKNOWN"
    end

    # description_of returns sv_strerror(code), or this file's copy.
    def description_of(code)
      return Native.sv_strerror(code) if Native.loaded? && code.is_a?(Integer) && code.between?(-2**31, 2**31 - 1)

      ERROR_CLASSES.dig(code, 2)&.to_s || "unknown error"
    end
  end
end
