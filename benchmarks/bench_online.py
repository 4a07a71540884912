# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private online learning on Adult: accuracy against ε, and the time of one pass.

The Adult training rows (32,561, the ``load_adult`` encoding, 107 features) are one
stream, fed in their stored order in chunks of 1,000 rows through ``partial_fit`` — to
dpsk's :class:`~dpsk.linear_model.OnlineSGDClassifier` (continual release: the whole
stream one (ε, δ = 1e-5) release, ``max_samples`` = 32,561 public, default
hyper-parameters) and to scikit-learn's non-private ``SGDClassifier(loss="log_loss")``
on the same chunks. Columns: test accuracy after the pass (16,281 test rows); the
progressive ("prequential") accuracy, each chunk predicted by the model released before
it — the online learner's own measure, the one its regret bounds; and the seconds of the
pass (all ``partial_fit`` calls).

Measured (one run, 3 seeds, OPENBLAS_NUM_THREADS=1, 2 cores shared with other jobs: the
seconds are medians and noisy; dpsk's pass includes the release digest of integer seeds)::

    model                         eps   batch  test acc  online acc   pass s
    dpsk OnlineSGDClassifier      0.5       1    0.8148      0.7798     0.73
    dpsk OnlineSGDClassifier        1       1    0.8277      0.7906     0.74
    dpsk OnlineSGDClassifier        2       1    0.8316      0.8021     0.70
    dpsk OnlineSGDClassifier        4       1    0.8340      0.8105     0.70
    dpsk OnlineSGDClassifier      inf       1    0.8455      0.8386     0.58
    dpsk OnlineSGDClassifier        1      64    0.8226      0.7886     0.53
    sklearn SGDClassifier         inf       1    0.8183      0.7998     0.15

At ε = 1 the private stream is 0.018 below its own noise-free run (ε = inf) and above
scikit-learn's one pass of non-private SGD (0.8183, default learning-rate schedule);
the pass takes about 5× scikit-learn's.

Usage::

    python benchmarks/bench_online.py            # ε ∈ {0.5, 1, 2, 4, inf}, 3 seeds
    python benchmarks/bench_online.py --quick    # ε = 1, 1 seed
"""

import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import SGDClassifier as SkSGD

from dpsk.datasets import load_adult
from dpsk.linear_model import OnlineSGDClassifier

CHUNK = 1000


def _row(model, epsilon, batch, test, online, seconds):
    return {
        "model": model,
        "ε": epsilon,
        "batch": batch,
        "test acc": round(float(test), 4),
        "online acc": round(float(online), 4),
        "pass s": round(float(seconds), 2),
    }


def one_pass(model, X, y, Xt, yt, **first_call):
    """Feed the stream in chunks; returns (test accuracy, progressive accuracy, seconds in partial_fit)."""
    chunks = np.array_split(np.arange(X.shape[0]), max(1, X.shape[0] // CHUNK))
    correct, seen, seconds = 0, 0, 0.0
    for i, chunk in enumerate(chunks):
        if i > 0:  # predicted by the model released before the chunk
            correct += int((model.predict(X[chunk]) == y[chunk]).sum())
            seen += chunk.size
        t = time.perf_counter()
        model.partial_fit(X[chunk], y[chunk], **(first_call if i == 0 else {}))
        seconds += time.perf_counter() - t
    return model.score(Xt, yt), correct / max(seen, 1), seconds


def run(quick=False):
    """One row per (model, ε, batch size): mean accuracies and the median seconds of a pass."""
    warnings.simplefilter("ignore")
    X, y = load_adult(return_X_y=True)
    Xt, yt = load_adult(subset="test", return_X_y=True)
    X, Xt, y, yt = np.asarray(X, float), np.asarray(Xt, float), np.asarray(y), np.asarray(yt)
    if quick:
        X, y = X[:8000], y[:8000]
    n = X.shape[0]
    seeds = [0] if quick else [0, 1, 2]
    settings = [(1.0, 1)] if quick else [(e, 1) for e in (0.5, 1.0, 2.0, 4.0, float("inf"))] + [(1.0, 64)]
    rows = []
    for eps, batch in settings:
        results = [
            one_pass(
                OnlineSGDClassifier(epsilon=eps, max_samples=n, batch_size=batch, classes=[0, 1], random_state=s),
                X,
                y,
                Xt,
                yt,
            )
            for s in seeds
        ]
        test, online, seconds = zip(*results)
        rows.append(_row("dpsk OnlineSGDClassifier", eps, batch, np.mean(test), np.mean(online), np.median(seconds)))
    results = [one_pass(SkSGD(loss="log_loss", random_state=s), X, y, Xt, yt, classes=[0, 1]) for s in seeds]
    test, online, seconds = zip(*results)
    rows.append(_row("sklearn SGDClassifier", float("inf"), 1, np.mean(test), np.mean(online), np.median(seconds)))
    return rows


if __name__ == "__main__":
    print(f"{'model':<28}{'eps':>6}{'batch':>8}{'test acc':>10}{'online acc':>12}{'pass s':>9}")
    for r in run(quick="--quick" in sys.argv):
        accuracies = f"{r['test acc']:>10.4f}{r['online acc']:>12.4f}"
        print(f"{r['model']:<28}{r['ε']:>6g}{r['batch']:>8}{accuracies}{r['pass s']:>9.2f}")
