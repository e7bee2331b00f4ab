"""mmlab stats: ratios between two kernels' boots with a confidence
interval, and verdicts that only the data decide.

A ratio of a candidate's samples (one per boot) to a baseline's is
estimated as exp(Hodges-Lehmann shift of the logs): the median of the
n x m pairwise log ratios. Its interval comes from the same pairwise
ratios, cut at the order statistics the Mann-Whitney rank test gives for
the confidence asked (exact null distribution, no normal approximation),
so it assumes nothing about the shape of the boot-to-boot noise, only
that the two kernels' boots differ by a factor. With 5 boots each the 95 %
interval runs from the 3rd to the 23rd of the 25 pairwise ratios; with 3
each no 95 % interval exists (the smallest two-sided p is 0.1).

A verdict against a threshold is PASS or FAIL only when the whole interval
lies on one side; otherwise INCONCLUSIVE, with how many boots of each
kernel would narrow the interval enough if the estimate held (the width
shrinks as 1/sqrt(boots)).
"""
import math

PASS, FAIL, INCONCLUSIVE = 'PASS', 'FAIL', 'INCONCLUSIVE'


def mann_whitney_counts(n, m):
    """counts[u]: how many of the C(n+m, n) orderings give U = u."""
    # f[i][j][u]: orderings of i x's and j y's with U = u (x before y pairs)
    prev = [[1] + [0] * (n * m) for _ in range(m + 1)]   # i = 0: U = 0
    for i in range(1, n + 1):
        cur = [[0] * (n * m + 1) for _ in range(m + 1)]
        for j in range(m + 1):
            for u in range(n * m + 1):
                # the last element is an x (it is after j y's: U gains j) or a y
                c = prev[j][u - j] if u >= j else 0
                if j:
                    c += cur[j - 1][u]
                cur[j][u] = c
        prev = cur
    return prev[m]


def rank_interval(n, m, confidence):
    """k: the interval is the k-th smallest to the k-th largest pairwise
    difference (1-based), for at least @confidence; None if even the
    widest (k = 1) does not reach it. Also the confidence it reaches."""
    counts = mann_whitney_counts(n, m)
    total = sum(counts)
    alpha = 1 - confidence
    k, below = None, 0
    for u in range(n * m // 2 + 1):
        # P(U <= u) two-sided: the interval [d_(u+1), d_(nm-u)] misses the
        # shift with probability 2 P(U <= u)
        below += counts[u]
        if 2 * below / total <= alpha:
            k = u + 1
        else:
            break
    if k is None:
        return None, 0.0
    reach = 1 - 2 * sum(counts[:k]) / total
    return k, reach


def ratio(candidate, baseline, confidence=0.95):
    """{'estimate', 'low', 'high', 'confidence', 'n', 'm'} for
    candidate/baseline; low and high None when the boots are too few for
    @confidence. Samples must be positive."""
    if not candidate or not baseline:
        raise ValueError('a ratio needs samples of both kernels')
    if min(candidate) <= 0 or min(baseline) <= 0:
        raise ValueError('samples must be positive')
    d = sorted(math.log(x) - math.log(y) for x in candidate for y in baseline)
    nd = len(d)
    mid = (d[(nd - 1) // 2] + d[nd // 2]) / 2
    k, reach = rank_interval(len(candidate), len(baseline), confidence)
    out = {'estimate': math.exp(mid), 'low': None, 'high': None, 'confidence': reach,
           'n': len(candidate), 'm': len(baseline)}
    if k:
        out['low'], out['high'] = math.exp(d[k - 1]), math.exp(d[nd - k])
    return out


def boots_to_decide(r, threshold):
    """Boots of each kernel after which the interval would clear
    @threshold if the estimate stayed where it is: None if the estimate is
    on the threshold (no number of boots decides it)."""
    est = math.log(r['estimate'])
    dist = abs(est - math.log(threshold))
    n = min(r['n'], r['m'])
    if r['low'] is None:
        return max(n + 2, 5)
    half = max(est - math.log(r['low']), math.log(r['high']) - est)
    if dist == 0:
        return None
    return max(n + 1, math.ceil(n * (half / dist) ** 2))


def verdict(r, threshold, at_least=True):
    """PASS, FAIL or INCONCLUSIVE for "ratio >= threshold" (at_least) or
    "ratio <= threshold", from the interval of ratio()."""
    lo, hi = r['low'], r['high']
    if lo is None:
        return INCONCLUSIVE
    if at_least:
        return PASS if lo >= threshold else FAIL if hi < threshold else INCONCLUSIVE
    return PASS if hi <= threshold else FAIL if lo > threshold else INCONCLUSIVE


def inverse(r):
    """The interval of 1/ratio (pages/s from ns/page)."""
    inv = lambda x: None if x is None else 1 / x
    return dict(r, estimate=1 / r['estimate'], low=inv(r['high']), high=inv(r['low']))
