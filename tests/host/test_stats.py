#!/usr/bin/python3
"""mmlab.stats: ratios of two kernels' boots with a rank-test interval,
and the verdicts make bench draws from them.

The Mann-Whitney counts and the order statistics of the interval are
checked against the published critical values (n = m = 5: U <= 2, the
3rd to the 23rd of 25 pairwise ratios; n = m = 8: U <= 13), the estimate
and interval on samples worked by hand, and each verdict on intervals
that lie above, below and across a threshold.

usage: python3 -m unittest tests/host/test_stats.py
"""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
from mmlab import stats  # noqa: E402


class Stats(unittest.TestCase):
    def test_mann_whitney_counts(self):
        c = stats.mann_whitney_counts(5, 5)
        self.assertEqual(sum(c), math.comb(10, 5))
        self.assertEqual(c[:5], [1, 1, 2, 3, 5])
        self.assertEqual(c, c[::-1])

    def test_interval_order_statistics(self):
        self.assertEqual(stats.rank_interval(5, 5, 0.95)[0], 3)
        self.assertEqual(stats.rank_interval(8, 8, 0.95)[0], 14)
        self.assertEqual(stats.rank_interval(3, 3, 0.95), (None, 0.0))
        self.assertAlmostEqual(stats.rank_interval(5, 5, 0.95)[1], 1 - 8 / 252)

    def test_ratio_by_hand(self):
        # candidate = 2 x baseline, baseline boots 1..5: pairwise ratios
        # 2 i / j; of the 25 values of i / j the 3rd smallest is 1/3
        # (after 1/5, 1/4), the 3rd largest 3 (after 5, 4)
        base = [1, 2, 3, 4, 5]
        r = stats.ratio([2 * x for x in base], base)
        self.assertAlmostEqual(r['estimate'], 2.0)
        self.assertAlmostEqual(r['low'], 2 / 3)
        self.assertAlmostEqual(r['high'], 6.0)
        inv = stats.inverse(r)
        self.assertAlmostEqual(inv['estimate'], 0.5)
        self.assertAlmostEqual(inv['low'], 1 / 6)
        self.assertAlmostEqual(inv['high'], 1.5)

    def test_verdicts(self):
        r = {'estimate': 1.1, 'low': 1.05, 'high': 1.2, 'n': 5, 'm': 5}
        self.assertEqual(stats.verdict(r, 1.0), 'PASS')
        self.assertEqual(stats.verdict(r, 1.25), 'FAIL')
        self.assertEqual(stats.verdict(r, 1.1), 'INCONCLUSIVE')
        self.assertEqual(stats.verdict(r, 1.0, at_least=False), 'FAIL')
        self.assertEqual(stats.verdict(r, 1.2, at_least=False), 'PASS')
        self.assertEqual(stats.verdict(dict(r, low=None, high=None), 1.0), 'INCONCLUSIVE')

    def test_boots_to_decide(self):
        # half-width log(1.2/1.1) vs distance log(1.1/1.08): about 19 boots
        r = {'estimate': 1.1, 'low': 1.0, 'high': 1.2, 'n': 5, 'm': 5}
        need = stats.boots_to_decide(r, 1.08)
        self.assertEqual(need, math.ceil(5 * (math.log(1.1) / math.log(1.1 / 1.08)) ** 2))
        self.assertIsNone(stats.boots_to_decide(r, 1.1))

    def test_bad_samples(self):
        with self.assertRaises(ValueError):
            stats.ratio([], [1.0])
        with self.assertRaises(ValueError):
            stats.ratio([0.0], [1.0])


if __name__ == '__main__':
    unittest.main()
