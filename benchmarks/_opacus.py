# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Opacus (PyTorch) DP-SGD on the same data and settings as dpsk's DP-SGD benchmarks.

Used by bench_dpsgd.py and bench_dpsgd_mlp.py for a side-by-side row; skipped cleanly
(``available()`` is False) when torch or opacus is not installed: neither is a dependency
of dpsk. Settings as issue 21's anchors: Poisson sampling with expected batch 256 (Opacus'
``poisson_sampling=True``), per-example clip 1.0, 15 epochs, δ = 1e-5, σ calibrated by
Opacus from (ε, δ) with its RDP accountant; BCE-with-logits loss on one output. The
optimiser is dpsk's default for the same model (SGD at dpsk's ``eta0`` for the linear
model, Adam at dpsk's ``learning_rate_`` for the MLP), so the two differ only in the
implementation. One thread (``torch.set_num_threads(1)``), as the dpsk and scikit-learn
fits under ``OMP_NUM_THREADS=1``.
"""

import time
import warnings


def available():
    """Whether torch and opacus import."""
    try:
        import opacus  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def fit_opacus(X, y, Xt, yt, *, epsilon, hidden=(), lr, optimizer="sgd", seed=0, epochs=15, batch_size=256):
    """Train with Opacus; returns (test accuracy, median seconds per epoch, σ used)."""
    import numpy as np
    import torch
    from opacus import PrivacyEngine
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    layers, width = [], X.shape[1]
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    model = nn.Sequential(*layers, nn.Linear(width, 1))
    data = torch.utils.data.TensorDataset(
        torch.as_tensor(np.asarray(X, dtype=np.float32)), torch.as_tensor(np.asarray(y, dtype=np.float32))
    )
    loader = torch.utils.data.DataLoader(data, batch_size=batch_size)
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(model.parameters(), lr=lr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = PrivacyEngine(accountant="rdp")
        model, opt, loader = engine.make_private_with_epsilon(
            module=model,
            optimizer=opt,
            data_loader=loader,
            target_epsilon=epsilon,
            target_delta=1e-5,
            epochs=epochs,
            max_grad_norm=1.0,
            poisson_sampling=True,
        )
    loss_fn = nn.BCEWithLogitsLoss()
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            opt.zero_grad()
            loss_fn(model(xb).squeeze(1), yb).backward()
            opt.step()
        times.append(time.perf_counter() - start)
    with torch.no_grad():
        scores = model(torch.as_tensor(np.asarray(Xt, dtype=np.float32))).squeeze(1).numpy()
    accuracy = float(np.mean((scores > 0).astype(int) == np.asarray(yt)))
    return accuracy, float(np.median(times)), float(opt.noise_multiplier)
