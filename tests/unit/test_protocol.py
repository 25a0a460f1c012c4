import pytest

from dbdrift.driver.protocol import (bucket_index, bucket_lower_ns, merge_buckets, parse_lines, percentile_us,
                                     totals)


def test_bucket_bounds_are_exact_below_32_ns_and_within_one_sixteenth_above():
    assert [bucket_lower_ns(i) for i in range(32)] == list(range(32))
    for value in (33, 1000, 48_123, 10**9 + 7):
        i = bucket_index(value)
        assert bucket_lower_ns(i) <= value < bucket_lower_ns(i + 1)
        assert (bucket_lower_ns(i + 1) - bucket_lower_ns(i)) / bucket_lower_ns(i) <= 1 / 16


def test_percentile_is_the_upper_bound_of_the_bucket_holding_the_rank():
    b = {bucket_index(10_000): 50, bucket_index(20_000): 49, bucket_index(1_000_000): 1}
    assert percentile_us(b, 0.5) == bucket_lower_ns(bucket_index(10_000) + 1) / 1000
    assert percentile_us(b, 0.99) == bucket_lower_ns(bucket_index(20_000) + 1) / 1000
    assert percentile_us(b, 1.0) == bucket_lower_ns(bucket_index(1_000_000) + 1) / 1000
    assert percentile_us({}, 0.5) is None


def test_a_percentile_in_the_bucket_of_the_max_is_the_max():
    # 36.19 ms lies in the bucket [35.65, 37.75) ms: the bucket's bound would read above the max
    b = {bucket_index(1_000_000): 50, bucket_index(36_190_000): 1}
    assert bucket_lower_ns(bucket_index(36_190_000) + 1) / 1000 == 37_748.736
    assert percentile_us(b, 0.99, max_us=36_190.0) == 36_190.0
    assert percentile_us(b, 0.5, max_us=36_190.0) == bucket_lower_ns(bucket_index(1_000_000) + 1) / 1000


def test_histograms_merge_by_adding_counts():
    assert merge_buckets([[[3, 1], [5, 2]], [[5, 1]]]) == {3: 1, 5: 3}


def test_totals_sum_intervals_and_divide_statements_by_measured_time():
    lines = "\n".join([
        '{"type":"interval","index":0,"start_s":0.0,"end_s":1.0,"events":10,"statements":160,"rows":10,'
        '"errors":{"deadlock":1},"latency_us":{"count":10,"min":5.0,"max":9.0,"buckets":[[200,10]]}}',
        '{"type":"interval","index":1,"start_s":1.0,"end_s":1.5,"events":5,"statements":80,"rows":5,'
        '"errors":{"deadlock":0},"latency_us":{"count":5,"min":4.0,"max":12.0,"buckets":[[201,5]]}}',
        'not json',
    ])
    out = parse_lines(lines)
    t = totals(out.intervals)
    assert (t.events, t.statements, t.measured_s) == (15, 240, 1.5)
    assert t.qps == pytest.approx(160.0) and t.tps == pytest.approx(10.0)
    assert t.errors == {"deadlock": 1} and t.latency["min"] == 4.0 and t.latency["max"] == 12.0
    assert out.unparsed == ["not json"]


def test_a_json_line_that_is_not_an_object_is_kept_as_unparsed():
    out = parse_lines('[1, 2]\n42\n{"type":"summary","events":0}')
    assert out.unparsed == ["[1, 2]", "42"] and out.summary == {"type": "summary", "events": 0}
