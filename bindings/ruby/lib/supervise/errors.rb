# frozen_string_literal: true

# errors.rb: one exception class per sv_err code, under Supervise::Error.
#
# Design:
#   - The classes are defined here, statically, so `rescue Supervise::NotFound`
#     works before the C library is loaded. Their codes, names and texts are
#     Enums::ERRORS (enums.rb), generated from SV_ERR_MAP in
#     libsupervise/include/supervise/supervise.h by scripts/gen_enums.py;
#     this file only names the Ruby classes. ruby.enums and the test suite
#     check every code against the header and the loaded library.
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
    SERVER_MAX = Enums::SERVER_ERR_MAX

    # refusal? tells whether the supervisor refused the request (codes
    # 1..99, including ones this binding does not name), as opposed to a
    # local failure (timeout, connection, memory, arguments).
    def refusal?
      code.is_a?(Integer) && code.between?(1, SERVER_MAX)
    end
  end

  # The Ruby class name of each sv_err, by its C name. The codes, C names
  # and texts come from Enums::ERRORS, generated from SV_ERR_MAP
  # (scripts/gen_enums.py); only the Ruby names are chosen here. A code
  # appended to SV_ERR_MAP without a row here still gets a class, named
  # after its C name, and ruby.enums fails until it has a row.
  RUBY_ERROR_NAMES = {
    "EBADREQ" => "BadRequest",
    "EVERSION" => "UnsupportedVersion",
    "EUNKNOWNMSG" => "UnknownMessage",
    "ENOTFOUND" => "NotFound",
    "EPERM" => "PermissionDenied",
    "EEXHAUSTED" => "Exhausted",
    "EBUSY" => "Busy",
    "ETOOLARGE" => "TooLarge",
    "EINTERNAL" => "InternalError",
    "ENOTWORKER" => "NotAWorker",
    "ECONFLICT" => "Conflict",
    "EDEADLINE" => "DeadlinePassed",
    "EINVAL" => "InvalidArgument",
    "ENOMEM" => "OutOfMemory",
    "ETIMEDOUT" => "TimedOut",
    "ECONNECT" => "ConnectFailed",
    "ECLOSED" => "ConnectionClosed",
    "EPROTO" => "ProtocolError",
    "ESYSTEM" => "SystemError"
  }.freeze

  # code => [Ruby class name, C name, sv_strerror text]. Codes 1..99 are
  # sent by the supervisor; 100 and up are local.
  ERROR_CLASSES = Enums::ERRORS.to_h do |code, name, text|
    [code, [RUBY_ERROR_NAMES.fetch(name, name), name, text].freeze]
  end.freeze

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
