import math
import random

import pytest

from dbdrift.analysis.noise import (Estimate, IntervalSample, RunSample, batch_means, between_campaign_sd, mean_interval,
                                    over_repeats, relative, relative_over_repeats, standard_error, t975, throughput, trimmed_mean, verdict,
                                    with_campaign_sd)


def series(values, steal=None, duration=1.0):
    return tuple(IntervalSample(v, duration, None if steal is None else steal[i]) for i, v in enumerate(values))


def rounds(values_per_round, start=0):
    return [RunSample(start + i, series(v)) for i, v in enumerate(values_per_round)]


def test_t_quantiles_match_the_table_and_approach_the_normal():
    assert t975(1) == 12.706 and t975(30) == 2.042
    assert t975(31) == pytest.approx(2.040, abs=0.002) and t975(1000) == pytest.approx(1.962, abs=0.001)


def test_a_clean_5_percent_step_is_a_regression():
    rng = random.Random(1)
    base = rounds([[20000 * (1 + rng.gauss(0, 0.005)) for _ in range(3)] for _ in range(8)])
    new = rounds([[19000 * (1 + rng.gauss(0, 0.005)) for _ in range(3)] for _ in range(8)])
    est = relative(new, base)
    assert est.method == "paired rounds"
    assert est.lower < 0.95 < est.upper and est.upper < 1
    assert verdict(est) == "regression"


def test_a_versus_a_is_no_significant_change():
    rng = random.Random(2)
    a = rounds([[20000 * (1 + rng.gauss(0, 0.01)) for _ in range(3)] for _ in range(8)])
    b = rounds([[20000 * (1 + rng.gauss(0, 0.01)) for _ in range(3)] for _ in range(8)])
    est = relative(b, a)
    assert est.lower < 1 < est.upper
    assert verdict(est) == "no significant change"


def test_one_stolen_interval_does_not_make_a_regression():
    base = [RunSample(i, series([20000, 20100, 19900], steal=[0, 0, 0])) for i in range(6)]
    new = [RunSample(i, series([20050, 19950, 20000], steal=[0, 0, 0])) for i in range(6)]
    # round 3 of the new target had a burst of steal that halved one interval
    new[3] = RunSample(3, series([20000, 10000, 20000], steal=[0, 35.0, 0]))
    est = relative(new, base)
    assert verdict(est) == "no significant change"
    assert throughput(new).dropped_intervals == 1


def test_drift_shared_by_both_targets_cancels_in_paired_rounds():
    drift = [1.0, 0.6, 1.1, 0.7, 0.9, 1.2]  # the host slows down and speeds up between rounds
    base = rounds([[20000 * d] for d in drift])
    new = rounds([[19200 * d] for d in drift])
    est = relative(new, base)
    assert est.value == pytest.approx(0.96)
    assert est.upper - est.lower < 1e-9
    assert verdict(est) == "regression"


def test_single_runs_fall_back_to_batch_means_and_an_unpaired_interval():
    rng = random.Random(3)
    base = [RunSample(0, series([100.0 * (1 + rng.gauss(0, 0.02)) for _ in range(50)]))]
    new = [RunSample(0, series([90.0 * (1 + rng.gauss(0, 0.02)) for _ in range(50)]))]
    a = throughput(base)
    assert a.method == "batch means" and a.n == 10 and a.lower < 100 < a.upper
    est = relative(new, base)
    assert est.method == "unpaired delta" and est.lower < 0.9 < est.upper and est.upper < 0.95


def test_a_throughput_interval_over_runs_far_apart_stays_above_zero_and_holds_the_mean():
    est = throughput(rounds([[100.0], [1000.0], [10000.0]]))
    assert est.method == "t over runs" and est.value == pytest.approx(3700.0)
    assert 0 < est.lower < est.value < est.upper  # a t interval on the raw values: [-9900, 17300]


def test_a_run_of_zero_throughput_leaves_the_estimate_without_an_interval():
    est = throughput(rounds([[0.0], [10.0], [12.0]]))
    assert est.value == pytest.approx(22 / 3) and est.lower is None and est.upper is None


def test_batch_means_are_contiguous_weighted_means():
    assert batch_means(list(series([1, 1, 3, 3])), batches=2) == [1.0, 3.0]


def test_no_interval_from_a_single_sample():
    est = relative([RunSample(0, series([10.0]))], [RunSample(0, series([11.0]))])
    assert est.value == pytest.approx(10 / 11) and verdict(est) == "no interval"


@pytest.mark.parametrize("value, lower, upper, expected", [
    (0.97, 0.96, 0.98, "regression"),
    (0.99, 0.985, 0.995, "no significant change"),  # real but smaller than the 2% minimum
    (1.03, 1.01, 1.05, "improvement"),
    (0.97, 0.94, 1.01, "no significant change"),  # interval holds 1
    (0.90, 0.80, 1.01, "too noisy"),
    (0.57, 0.43, 0.74, "regression"),  # wide, but entirely below 1: the direction is established
])
def test_verdict_rules(value, lower, upper, expected):
    assert verdict(Estimate(value, lower, upper, 8, "literal")) == expected


def test_noise_floor_is_the_larger_of_the_aa_offset_and_half_width():
    from dbdrift.analysis.floor import noise_floor
    from dbdrift.analysis.relative import Measurement, compare

    def runs(target, values):
        return [Measurement("point-query", "point", target, 1, v, round=i, intervals=series([v]))
                for i, v in enumerate(values)]

    aa = compare(runs("a", [100, 100, 100, 100]) + runs("a-aa", [101, 103, 102, 102]), ["a", "a-aa"], "a",
                 ["point-query"])
    est = aa.rows[0].cells["a-aa"].estimate
    floor = noise_floor(aa)["point-query"]
    assert floor == pytest.approx(max(abs(est.value - 1), est.half_width))
    assert 0.015 < floor < 0.04


def test_a_noise_floor_above_the_minimum_effect_turns_a_small_step_into_no_change():
    from dbdrift.analysis.relative import Measurement, compare

    def runs(target, value):
        return [Measurement("point-query", "point", target, 1, value * (1 + 0.001 * (i % 2)), round=i,
                            intervals=series([value * (1 + 0.001 * (i % 2))])) for i in range(6)]

    data = runs("a", 100.0) + runs("b", 97.0)
    assert compare(data, ["a", "b"], "a", ["point-query"]).rows[0].cells["b"].verdict == "regression"
    with_floor = compare(data, ["a", "b"], "a", ["point-query"], noise_floor={"point-query": 0.04})
    assert with_floor.rows[0].cells["b"].verdict == "no significant change"


# -- runs in turns: turns paired by round -------------------------------------------------------
def turns(values, steal=None, duration=0.01):
    """One run whose intervals are turns (round i = i-th value)."""
    return [RunSample(0, tuple(IntervalSample(v, duration, None if steal is None else steal[i], i)
                               for i, v in enumerate(values)))]


def hiccups(rng, n, rate=0.1):
    """Multiplicative turn noise of this host: mostly ±3%, sometimes a turn loses up to 60%."""
    return [(1 - rng.uniform(0.2, 0.6)) if rng.random() < rate else 1 + rng.gauss(0, 0.03) for _ in range(n)]


def test_turns_a_versus_a_with_heavy_tailed_hiccups_holds_one_and_is_narrow():
    rng = random.Random(3)
    drift = [1 + 0.3 * ((i // 150) % 2) for i in range(3000)]  # the host's speed changes every 1.5 s
    a = turns([20000 * d * h for d, h in zip(drift, hiccups(rng, 3000))])
    b = turns([20000 * d * h for d, h in zip(drift, hiccups(rng, 3000))])
    est = relative(b, a)
    assert est.method == "paired turns, batch ratios" and est.n == 20
    assert est.lower < 1 < est.upper and est.half_width < 0.01
    assert verdict(est) == "no significant change"


def test_turns_a_clean_4_percent_step_under_the_same_noise_is_a_regression():
    rng = random.Random(4)
    a = turns([20000 * h for h in hiccups(rng, 3000)])
    b = turns([19200 * h for h in hiccups(rng, 3000)])
    est = relative(b, a)
    assert est.value == pytest.approx(0.96, abs=0.005)
    assert est.upper < 0.97
    assert verdict(est) == "regression"


def test_turns_in_a_second_of_heavy_steal_are_left_out():
    a_values, b_values = [20000.0] * 400, [20000.0] * 400
    steal = [0.0] * 400
    for i in range(100, 200):  # one second of heavy steal, in which the new target looked 30% slower
        b_values[i], steal[i] = 14000.0, 40.0
    est = relative(turns(b_values, steal), turns(a_values, steal))
    assert est.value == pytest.approx(1.0) and est.dropped_intervals == 100
    assert verdict(est) == "no significant change"


def test_turns_without_events_and_unmatched_rounds_are_not_paired():
    a = turns([20000.0, 20000.0, 20000.0, 20000.0, 20000.0])
    b = [RunSample(0, (IntervalSample(0.0, 0.0, None, 0),) +
                   tuple(IntervalSample(19000.0, 0.01, None, i) for i in (1, 2, 3)))]
    est = relative(b, a)
    assert est.n == 3 and est.value == pytest.approx(0.95)


def test_trimmed_mean_cuts_the_same_share_from_each_end():
    assert trimmed_mean([1, 2, 3, 4, 100], 0.2) == 3
    assert trimmed_mean([5.0], 0.2) == 5.0


# -- runs in turns on several starts of the servers: repeats are the replicates ------------
def repeated_turns(per_repeat_values):
    """One run per repeat (its own start of the servers), each of turns paired by round."""
    return [RunSample(r, tuple(IntervalSample(v, 0.01, None, i) for i, v in enumerate(values)))
            for r, values in enumerate(per_repeat_values)]


def test_an_offset_drawn_per_start_is_inside_the_interval_over_repeats_not_inside_one_start():
    rng = random.Random(5)
    offsets = [1.025, 0.985, 1.01, 0.99, 1.0]  # what each start of the second server drew (A/A)
    a = [[20000 * h for h in hiccups(rng, 2000)] for _ in offsets]
    b = [[20000 * o * h for h in hiccups(rng, 2000)] for o in offsets]
    one_start = relative(repeated_turns(b[:1]), repeated_turns(a[:1]))
    assert one_start.method == "paired turns, batch ratios"
    assert one_start.lower > 1.0 and verdict(one_start) == "improvement"  # 2.5% from the start alone
    est = relative(repeated_turns(b), repeated_turns(a))
    assert est.method == "paired turns, crossover over repeats" and est.n == 5 and est.df == 3
    # each target's throughput weighs its even and its odd repeats half each: the offsets' arms
    assert est.value == pytest.approx(((1.025 + 1.01 + 1.0) / 3 + (0.985 + 0.99) / 2) / 2, abs=0.003)
    assert est.lower < 1.0 < est.upper and 0.01 < est.half_width < 0.03
    assert verdict(est) == "no significant change"
    three = relative(repeated_turns(b[:3]), repeated_turns(a[:3]))  # one odd repeat: no crossover
    assert three.method == "paired turns, t over repeats" and three.df is None and three.lower < 1.0 < three.upper


def test_the_estimate_over_repeats_is_the_ratio_of_the_targets_throughputs_as_the_absolute_table_shows():
    rng = random.Random(9)
    a = [[20000 * h for h in hiccups(rng, 1000)] for _ in range(5)]
    b = [[19000 * (1.01 if r % 2 else 0.99) * h for h in hiccups(rng, 1000)] for r in range(5)]
    new, base = repeated_turns(b), repeated_turns(a)
    est = relative(new, base)
    assert est.value == pytest.approx(throughput(new).value / throughput(base).value, rel=1e-12)
    assert est.lower < est.value < est.upper


def lns(*ratios):
    """Per-repeat ln rQPS."""
    return [math.log(r) for r in ratios]


def test_servers_that_swap_placement_at_every_restart_still_show_a_3_percent_cost():
    # each restart swaps the two servers' page frames: +4% in even repeats, -4% in odd ones
    swing = [0.97 * (1.04 if r % 2 == 0 else 0.96) * (1 + 0.002 * ((r * 7) % 3 - 1)) for r in range(5)]
    est = over_repeats(lns(*swing))
    assert est.method == "paired turns, crossover over repeats" and est.df == 3
    assert est.value == pytest.approx(0.97, abs=0.002) and est.upper < 0.975
    assert verdict(est) == "regression"
    # the plain mean over repeats weighs the +4% arm 3:2 and counts the swing as noise
    m, lo, hi = mean_interval([math.log(r) for r in swing])
    assert math.exp(m) > 0.975 and math.exp(hi) > 1.0


def test_a_placement_swing_in_turns_is_taken_out_of_both_targets_throughputs_alike():
    # the new server is 3% slower, and the placement swings it +4% / -4% at every restart
    rng = random.Random(8)
    a = [[20000 * h for h in hiccups(rng, 1000)] for _ in range(5)]
    b = [[19400 * (1.04 if r % 2 == 0 else 0.96) * h for h in hiccups(rng, 1000)] for r in range(5)]
    est = relative(repeated_turns(b), repeated_turns(a))
    assert est.method == "paired turns, crossover over repeats"
    assert est.value == pytest.approx(0.97, abs=0.005) and est.lower < 0.97 < est.upper


def test_the_arms_are_the_repeat_numbers_parity_not_list_positions():
    # repeat 1 failed: 0, 2, 4 are one arm, 3 and 5 the other
    est = over_repeats(lns(1.04, 1.04, 0.96, 1.04, 0.96), repeats=[0, 2, 3, 4, 5])
    assert est.method == "paired turns, crossover over repeats" and est.value == pytest.approx((1.04 * 0.96) ** 0.5)
    assert est.upper - est.lower < 1e-9  # nothing varies within an arm
    by_position = over_repeats(lns(1.04, 1.04, 0.96, 1.04, 0.96))
    assert by_position.upper - by_position.lower > 0.05
    one_odd = over_repeats(lns(1.04, 1.04, 0.96, 1.04), repeats=[0, 2, 3, 4])
    assert one_odd.method == "paired turns, t over repeats" and one_odd.n == 4


def test_a_crossover_interval_is_widened_by_a_calibration_with_its_own_degrees_of_freedom():
    est = over_repeats(lns(1.01, 0.99, 1.005, 0.995, 1.0))
    se, df = standard_error(est)
    assert df == 3 and se == pytest.approx((math.log(est.upper) - math.log(est.lower)) / 2 / t975(3))
    wide = with_campaign_sd(est, 0.005, 4)
    assert wide.method == est.method and wide.campaign_sd == 0.005 and wide.lower < est.lower


def test_a_5_percent_cost_is_a_regression_over_repeats_whatever_each_start_drew():
    rng = random.Random(6)
    offsets = [1.02, 0.985, 1.01, 0.99, 1.005]
    a = [[20000 * h for h in hiccups(rng, 2000)] for _ in offsets]
    b = [[19000 * o * h for h in hiccups(rng, 2000)] for o in offsets]
    est = relative(repeated_turns(b), repeated_turns(a))
    assert est.value == pytest.approx(0.952, abs=0.005) and est.upper < 0.98
    assert verdict(est) == "regression"


def test_each_repeat_weighs_the_same_and_two_repeats_stay_with_the_pooled_batches():
    short = [[20000.0] * 10, [20000.0] * 1000, [20000.0] * 1000]
    long = [[19000.0] * 10, [21000.0] * 1000, [20000.0] * 1000]
    est = relative(repeated_turns(long), repeated_turns(short))
    # each repeat's throughput counts once, however many turns it had: (19000 + 21000 + 20000) / 3
    assert est.value == pytest.approx(1.0)
    assert est.method == "paired turns, t over repeats" and est.lower < 0.95 and est.upper > 1.05
    assert relative(repeated_turns(long[1:]), repeated_turns(short[1:])).method == "paired turns, batch ratios"


def test_a_repeat_wholly_under_steal_stays_a_repeat_and_steal_is_left_out_inside_the_others():
    def run(r, values, steal):
        return RunSample(r, tuple(IntervalSample(v, 0.01, s, i) for i, (v, s) in enumerate(zip(values, steal))))
    calm, stolen = [0.0] * 100, [40.0] * 100
    patchy = [40.0 if i < 10 else 0.0 for i in range(100)]
    base = [run(0, [20000.0] * 100, calm), run(1, [20000.0] * 100, stolen), run(2, [20000.0] * 100, patchy)]
    # repeat 1 sat in one stolen second (a short run); repeat 2 had ten stolen turns at 30% off
    new = [run(0, [20200.0] * 100, calm), run(1, [19800.0] * 100, stolen),
           run(2, [14000.0] * 10 + [20000.0] * 90, patchy)]
    est = relative(new, base)
    assert est.method == "paired turns, t over repeats" and est.n == 3
    assert est.value == pytest.approx((20200 + 19800 + 20000) / 3 / 20000)
    assert est.dropped_intervals == 10  # the stolen turns of repeat 2, not the whole of repeat 1


# -- stalls: a target that loses some turns to a lock or a checkpoint is slower by that time --
def stalled(values, every, stall_s, duration=0.01):
    """Turns of `duration` at `values`, except every `every`-th turn, which a lock held for
    `stall_s`: one event in the whole stretched turn."""
    return [RunSample(0, tuple(IntervalSample(1 / stall_s if i % every == every - 1 else v,
                                              stall_s if i % every == every - 1 else duration, None, i)
                               for i, v in enumerate(values)))]


def test_a_stall_in_a_few_turns_is_a_regression_of_the_time_it_costs_not_trimmed_away():
    rng = random.Random(10)
    n = 3000
    a = turns([20000 * h for h in hiccups(rng, n, rate=0.02)])
    # a 300 ms lock every 3 s of the new target's time: 1 turn in 150 stretched to 300 ms
    b = stalled([20000 * h for h in hiccups(rng, n, rate=0.02)], every=150, stall_s=0.3)
    est = relative(b, a)
    costs = (n * 0.01) / (n * 0.01 - n / 150 * 0.01 + n / 150 * 0.3)  # its time without stalls over all its time
    assert est.value == pytest.approx(costs, abs=0.01) and est.value < 0.95
    assert est.upper < 1.0 and verdict(est) == "regression"
    # the typical turn does not see it, and says so: the cell is flagged as a burst
    assert est.typical == pytest.approx(1.0, abs=0.01) and est.bursty


def test_an_even_cost_in_every_turn_is_not_flagged_as_bursts():
    rng = random.Random(11)
    a = turns([20000 * h for h in hiccups(rng, 3000)])
    b = turns([19000 * h for h in hiccups(rng, 3000)])
    est = relative(b, a)
    assert est.typical == pytest.approx(0.95, abs=0.01) and not est.bursty


def test_two_repeats_of_one_value_each_give_no_interval_only_the_ratio_of_their_means():
    est = relative_over_repeats([(0, 110.0, 60.0), (1, 90.0, 60.0)], [(0, 100.0, 60.0), (1, 100.0, 60.0)])
    assert est.value == pytest.approx(1.0) and est.lower is None and verdict(est) == "no interval"
    three = relative_over_repeats([(0, 110.0, 60.0), (1, 90.0, 60.0), (2, 100.0, 60.0)],
                                  [(0, 100.0, 60.0), (1, 100.0, 60.0), (2, 101.0, 60.0)])
    assert three.method == "paired rounds" and three.lower < three.value < three.upper


# -- what a whole campaign draws: measured on A/A calibration, added to the intervals ---------
def aa_cell(value, half_log, n=5, method="paired turns, t over repeats"):
    """An A/A estimate with a symmetric interval of ±half_log in ln rQPS from n samples."""
    return Estimate(value, value * math.exp(-half_log), value * math.exp(half_log), n, method)


def test_between_campaign_sd_is_what_the_offsets_spread_beyond_their_own_intervals():
    half = t975(4) * 0.003  # se 0.3% each
    # offsets of ±0.5% around 1 over two campaigns: sd_b^2 = 0.005^2 - 0.003^2 = 0.004^2
    campaigns = [[aa_cell(math.exp(0.005), half), aa_cell(math.exp(-0.005), half)],
                 [aa_cell(math.exp(-0.005), half), aa_cell(math.exp(0.005), half)]]
    sd, n = between_campaign_sd(campaigns)["paired turns, t over repeats"]
    assert sd == pytest.approx(0.004, rel=1e-6) and n == 2
    # offsets no larger than their own intervals explain: nothing to add
    calm = [[aa_cell(math.exp(s * 0.001), half) for s in (1, -1, 1, -1)]]
    assert between_campaign_sd(calm)["paired turns, t over repeats"] == (0.0, 1)


def test_between_campaign_sd_solves_paule_mandel_so_tight_cells_weigh_more():
    # m1^2 / (se1^2 + 0.01^2) + m2^2 / (se2^2 + 0.01^2) = 1 + 1 = 2 cells: sd_b = 1%
    tight = aa_cell(math.exp(math.sqrt(0.003 ** 2 + 0.01 ** 2)), t975(4) * 0.003)
    loose = aa_cell(math.exp(-math.sqrt(2) * 0.01), t975(4) * 0.01)
    sd, n = between_campaign_sd([[tight], [loose]])["paired turns, t over repeats"]
    assert sd == pytest.approx(0.01, rel=1e-6) and n == 2


def test_calibration_is_kept_apart_by_interval_method_and_cells_without_interval_are_left_out():
    campaigns = [[aa_cell(1.01, 0.004), aa_cell(0.99, 0.004)],
                 [aa_cell(1.02, 0.002, n=20, method="paired turns, batch ratios"),
                  Estimate(1.03, None, None, 1, "paired turns, t over repeats")]]
    by = between_campaign_sd(campaigns)
    assert set(by) == {"paired turns, t over repeats", "paired turns, batch ratios"}
    assert by["paired turns, t over repeats"][1] == 1 and by["paired turns, batch ratios"][1] == 1


def test_a_campaign_sd_widens_the_interval_around_the_same_estimate():
    est = aa_cell(0.99, t975(4) * 0.003)  # 0.990 [0.982, 0.998]: misses 1.0 on its own
    assert est.upper < 1.0
    wide = with_campaign_sd(est, 0.005, 8)  # sd measured on 8 A/A campaigns
    assert wide.value == est.value and wide.campaign_sd == 0.005 and wide.method == est.method
    var = 0.003 ** 2 + 0.005 ** 2
    nu = var ** 2 / (0.003 ** 4 / 4 + 0.005 ** 4 / 8)  # Welch-Satterthwaite: 11.8 -> 11
    assert math.log(wide.upper / wide.value) == pytest.approx(t975(int(nu)) * math.sqrt(var))
    assert wide.lower < 0.98 and wide.upper > 1.0 and verdict(wide) == "no significant change"
    assert with_campaign_sd(est, 0.0, 8) is est
    assert with_campaign_sd(Estimate(1.0, None, None, 1, "paired turns"), 0.005, 8).lower is None


def test_a_real_5_percent_cost_stays_a_regression_with_the_campaign_sd_added():
    est = aa_cell(0.95, t975(4) * 0.004)
    wide = with_campaign_sd(est, 0.005, 8)
    assert wide.upper < 0.97 and verdict(wide) == "regression"


def test_one_repeat_with_pairs_gives_a_value_without_an_interval_and_claims_no_t():
    est = over_repeats([math.log(1.02)], repeats=[0])  # the other repeat kept no pair
    assert est.value == pytest.approx(1.02) and est.lower is None and est.n == 1
    assert est.method == "paired turns over repeats"
