# frozen_string_literal: true

# test_errors.rb: the exception classes against the loaded library's error
# table (sv_err_name / sv_strerror), and the mapping of unknown codes.
require_relative "helper"

class TestErrors < Minitest::Test
  def setup
    Supervise::Native.load!
  end

  def test_every_class_matches_the_library
    Supervise::ERROR_CLASSES.each do |code, (klass, name, _)|
      cls = Supervise.const_get(klass)
      assert_operator cls, :<, Supervise::Error
      assert_equal code, cls::CODE
      lib_name = Supervise::Native.sv_err_name(code)
      # a class may run ahead of an older library, never disagree with it
      assert_includes [name, "UNKNOWN"], lib_name, "code #{code}"
      assert_equal name, cls::NAME
      assert_same cls, Supervise::Errors.class_for(code)
      e = Supervise::Errors.from_code(code, "detail #{code}")
      assert_instance_of cls, e
      assert_equal code, e.code
      assert_equal name, e.name
      assert_equal "detail #{code}", e.detail
      assert_includes e.message, Supervise::Native.sv_strerror(code)
      assert_equal code < 100, e.refusal?
      assert_includes e.message, "detail #{code}"
    end
  end

  def test_every_library_code_has_a_class
    known = (1..1000).reject { |c| Supervise::Native.sv_err_name(c) == "UNKNOWN" }
    assert_includes known, 4
    assert_empty known - Supervise::ERROR_CLASSES.keys, "codes of the library without a Ruby class"
  end

  def test_unknown_code_maps_to_base_class_with_number
    e = Supervise::Errors.from_code(77, "from the future")
    assert_instance_of Supervise::Error, e
    assert_equal 77, e.code
    assert_equal "UNKNOWN", e.name
    assert_equal "from the future", e.detail
    assert_match(/unknown error/, e.message)
    assert e.refusal?, "an unnamed code below 100 is still the supervisor's refusal"
    refute Supervise::Errors.from_code(177).refusal?
    assert_same Supervise::Error, Supervise::Errors.class_for(-3)
  end

  def test_hierarchy
    assert_operator Supervise::Error, :<, StandardError
    assert_operator Supervise::NotAWorker, :<, Supervise::Error
    assert_operator Supervise::LibraryNotFound, :<, LoadError
    begin
      raise Supervise::Errors.from_code(4, "x")
    rescue Supervise::Error => e
      assert_kind_of Supervise::NotFound, e
    end
  end
end
