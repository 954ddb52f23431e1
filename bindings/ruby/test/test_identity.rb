# frozen_string_literal: true

# test_identity.rb: whoami in real workers (live and from the environment),
# a restart giving the next generation, NotAWorker outside a worker.
require_relative "helper"

class TestIdentity < Minitest::Test
  GROUPS = [
    { name: "rb", count: 3, purpose: "probe identities from Ruby", mode: "identity" },
    { name: "aux", count: 1, purpose: "restarted by a test", mode: "identity" }
  ].freeze

  def sup
    SvTest.shared(:identity, GROUPS)
  end

  def test_whoami_in_each_worker
    sid = sup.client(&:hello).supervisor_id
    results = (0..2).map { |i| sup.result("rb", i) }
    results.each_with_index do |r, i|
      live = r.fetch("live")
      assert_equal "rb", live["group"]
      assert_equal i, live["ordinal"]
      assert_includes 0..2, live["ordinal"]
      assert_equal 0, live["generation"]
      assert_equal "process", live["kind"]
      assert_equal r["pid"], live["pid"], "the worker's own pid"
      assert_equal "probe identities from Ruby", live["purpose"]
      assert_equal sid, live["supervisor_id"]
      assert_equal 3, live["group_size"]
      assert_equal [{ "kind" => "process", "ordinal" => i, "name" => "rb", "generation" => 0 }], live["context"]
      assert_nil live["parent"]
      assert_equal 1, r.dig("hello", "version")
      assert_equal true, r["copy_eq_handle"], "sv_client_whoami_copy reads what the handle's accessors read"
      assert_equal true, r["reused"], "an unchanged answer gives back the same frozen Identity"
    end
    assert_equal 3, results.map { |r| r["pid"] }.uniq.size
  end

  def test_from_env_equals_live
    (0..2).each do |i|
      r = sup.result("rb", i)
      live = r.fetch("live")
      env = r.fetch("env")
      %w[group ordinal generation kind purpose supervisor_id context parent].each do |k|
        live[k].nil? ? assert_nil(env[k], k) : assert_equal(live[k], env[k], "field #{k} of rb[#{i}]")
      end
      assert_nil env["pid"], "the environment does not carry the pid"
      assert_nil env["group_size"], "the environment does not carry the group size"
    end
  end

  def test_restart_gives_same_ordinal_next_generation
    first = sup.result("aux", 0, 0)
    sup.client { |c| assert_nil c.restart("aux", 0) }
    second = sup.result("aux", 0, 1)
    refute_equal first["pid"], second["pid"]
    assert_equal 0, second.dig("live", "ordinal")
    assert_equal 1, second.dig("live", "generation")
    assert_equal 1, second.dig("env", "generation")
    assert_equal second["pid"], second.dig("live", "pid")
    w = sup.client { |c| c.status("aux", 0) }
    assert_equal 1, w.generation
    assert_equal 1, w.restarts
  end

  def test_live_whoami_outside_a_worker_is_not_a_worker
    e = assert_raises(Supervise::NotAWorker) { sup.client(&:whoami) }
    assert_equal 10, e.code
    assert_equal "ENOTWORKER", e.name
    refute_empty e.detail, "the supervisor's message"
    assert_kind_of Supervise::Error, e
  end

  def test_module_whoami_without_url_is_not_a_worker
    saved = ENV.delete("SUPERVISE_URL")
    e = assert_raises(Supervise::NotAWorker) { Supervise.whoami }
    assert_match(/SUPERVISE_URL/, e.detail)
  ensure
    ENV["SUPERVISE_URL"] = saved if saved
  end

  def test_module_whoami_with_url_outside_a_worker
    saved = ENV.fetch("SUPERVISE_URL", nil)
    ENV["SUPERVISE_URL"] = sup.url
    Supervise.close_default_client
    assert_raises(Supervise::NotAWorker) { Supervise.whoami }
    assert_equal sup.url, Supervise.client.url
  ensure
    Supervise.close_default_client
    saved ? ENV["SUPERVISE_URL"] = saved : ENV.delete("SUPERVISE_URL")
  end

  def test_from_env_outside_a_worker
    assert_raises(Supervise::NotAWorker) { Supervise::Identity.from_env({}) }
    good = { "SUPERVISE_URL" => "ipc:///x", "SUPERVISE_GROUP" => "g", "SUPERVISE_ORDINAL" => "2",
             "SUPERVISE_GENERATION" => "7", "SUPERVISE_PURPOSE" => "p", "SUPERVISE_SUPERVISOR_ID" => "s" }
    id = Supervise::Identity.from_env(good)
    assert_equal ["s", "g", 2, 7], id.key
    assert_equal "process:g/2", id.context_s
    assert id.frozen?
    [["SUPERVISE_ORDINAL", "-1"], ["SUPERVISE_ORDINAL", "4294967296"], ["SUPERVISE_ORDINAL", "1x"],
     ["SUPERVISE_GENERATION", "18446744073709551616"], ["SUPERVISE_GROUP", "g" * 65],
     ["SUPERVISE_PURPOSE", ""], ["SUPERVISE_SUPERVISOR_ID", nil]].each do |var, val|
      e = assert_raises(Supervise::NotAWorker, "#{var}=#{val.inspect}") do
        Supervise::Identity.from_env(good.merge(var => val))
      end
      assert_match(/#{var}/, e.detail)
    end
  end
end
