# frozen_string_literal: true

# enums_dump.rb: the Ruby binding's view of the C enums, one fact a line.
#
# Run by scripts/check_enums.py (ctest ruby.enums), which compares every
# line with the public headers. Lines are tab-separated:
#   error CODE C_NAME CLASS_NAME EXPLICIT TEXT  one exception class per code
#   enum  C_TYPE VALUE NAME                      Native::KINDS / STATES
#   const SV_NAME VALUE                          a constant the binding uses
#   lib   CODE NAME TEXT                         sv_err_name / sv_strerror
require "supervise"

Supervise::ERROR_CLASSES.each do |code, (klass, name, text)|
  cls = Supervise.const_get(klass)
  raise "#{klass}: CODE #{cls::CODE} != #{code}" unless cls::CODE == code

  explicit = Supervise::RUBY_ERROR_NAMES.key?(name) ? 1 : 0
  puts ["error", code, name, klass, explicit, text].join("\t")
end
{ "sv_kind" => Supervise::Native::KINDS, "sv_state" => Supervise::Native::STATES }.each do |ctype, map|
  map.each { |value, sym| puts ["enum", ctype, value, sym.to_s.upcase].join("\t") }
end
{ "SV_SERVER_ERR_MAX" => Supervise::Error::SERVER_MAX,
  "SV_WHOAMI_MAX_FRAMES" => Supervise::Native::WHOAMI_MAX_FRAMES,
  "SV_WHOAMI_TEXT_BYTES" => Supervise::Native::WHOAMI_TEXT_BYTES,
  "SV_LEASE_ANY_SLOT" => Supervise::Client::ANY_SLOT,
  "SV_TIMEOUT_INFINITE" => Supervise::Deadline::INFINITE_MS }.each do |name, value|
  puts ["const", name, value].join("\t")
end
Supervise::Native.load!
Supervise::ERROR_CLASSES.each_key do |code|
  puts ["lib", code, Supervise::Errors.name_of(code), Supervise::Errors.description_of(code)].join("\t")
end
