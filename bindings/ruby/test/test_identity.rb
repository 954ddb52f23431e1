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

  GOOD_ENV = { "SUPERVISE_URL" => "ipc:///x", "SUPERVISE_GROUP" => "g", "SUPERVISE_ORDINAL" => "2",
               "SUPERVISE_GENERATION" => "7", "SUPERVISE_PURPOSE" => "p",
               "SUPERVISE_SUPERVISOR_ID" => "s" }.freeze

  # from_env is sv_identity_from_env: the contract of client.h, shared by
  # every binding (absent: NotAWorker; malformed: InvalidArgument).
  def test_from_env_reads_every_variable
    id = Supervise::Identity.from_env(GOOD_ENV)
    assert_equal ["s", "g", 2, 7], id.key
    assert_equal "process:g/2", id.context_s
    assert_equal :process, id.kind
    assert_equal "p", id.purpose
    assert_equal [Supervise::Frame.new(kind: :process, ordinal: 2, name: "g", generation: 7)], id.context
    assert_nil id.parent
    assert_nil id.pid
    assert_nil id.group_size
    assert id.frozen?
  end

  def test_from_env_missing_variable_is_not_a_worker
    assert_raises(Supervise::NotAWorker) { Supervise::Identity.from_env({}) }
    (Supervise::Identity::ENV_NAMES - ["SUPERVISE_URL"]).each do |var|
      e = assert_raises(Supervise::NotAWorker, var) { Supervise::Identity.from_env(GOOD_ENV.merge(var => nil)) }
      assert_equal 10, e.code
      assert_match(/#{var}/, e.detail)
    end
    # an empty value is absent, except the purpose (set, may be empty)
    assert_raises(Supervise::NotAWorker) { Supervise::Identity.from_env(GOOD_ENV.merge("SUPERVISE_GROUP" => "")) }
    assert_equal "", Supervise::Identity.from_env(GOOD_ENV.merge("SUPERVISE_PURPOSE" => "")).purpose
    # the URL names the socket, not the worker: not read
    assert_equal "g", Supervise::Identity.from_env(GOOD_ENV.merge("SUPERVISE_URL" => nil)).group
  end

  def test_from_env_malformed_variable_is_invalid_argument
    [["SUPERVISE_ORDINAL", "-1"], ["SUPERVISE_ORDINAL", "4294967296"], ["SUPERVISE_ORDINAL", "1x"],
     ["SUPERVISE_ORDINAL", " 1"], ["SUPERVISE_GENERATION", "18446744073709551616"],
     ["SUPERVISE_GROUP", "g" * 65], ["SUPERVISE_GROUP", "a b"], ["SUPERVISE_PURPOSE", "p" * 1025],
     ["SUPERVISE_SUPERVISOR_ID", "s" * 1025], ["SUPERVISE_GROUP", "g\0h"]].each do |var, val|
      e = assert_raises(Supervise::InvalidArgument, "#{var}=#{val.inspect}") do
        Supervise::Identity.from_env(GOOD_ENV.merge(var => val))
      end
      assert_match(/#{var}/, e.detail)
    end
    big = GOOD_ENV.merge("SUPERVISE_ORDINAL" => "4294967295", "SUPERVISE_GENERATION" => "18446744073709551615",
                         "SUPERVISE_GROUP" => "g" * 64, "SUPERVISE_PURPOSE" => "p" * 1024)
    id = Supervise::Identity.from_env(big)
    assert_equal [2**32 - 1, 2**64 - 1, 64, 1024], [id.ordinal, id.generation, id.group.size, id.purpose.size]
  end

  def test_from_env_default_reads_the_process_environment
    saved = GOOD_ENV.keys.to_h { |k| [k, ENV.fetch(k, nil)] }
    GOOD_ENV.each { |k, v| ENV[k] = v }
    assert_equal Supervise::Identity.from_env(GOOD_ENV), Supervise::Identity.from_env
  ensure
    saved.each { |k, v| ENV[k] = v }
  end
end
