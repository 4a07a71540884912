"""
=====================================
Private online learning over a stream
=====================================

The Adult census rows arrive as a stream, in chunks of 1,000. A private online learner,
:class:`dpsk.linear_model.OnlineSGDClassifier`, sees each row once and its model after
every chunk may be published: the whole stream is one (ε, δ) release, charged to the
accountant at the first ``partial_fit`` (Jain, Kothari & Thakurta 2012: the running
gradient sum released by binary-tree aggregation). We plot the progressive accuracy —
each chunk predicted by the model released before it — at several ε, next to
scikit-learn's non-private ``SGDClassifier`` fed the same chunks.
"""

# %%
# The stream and what is public
# -----------------------------
#
# The horizon ``max_samples`` (the most rows the stream will see) and the classes are
# public; so are ``clip_norm`` and ``radius`` (the defaults). Nothing else is needed:
# each row's gradient is clipped.

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier as SkSGDClassifier

from dpsk import BudgetAccountant
from dpsk.datasets import load_adult
from dpsk.linear_model import OnlineSGDClassifier

X, y = load_adult(return_X_y=True)
chunks = np.array_split(np.arange(X.shape[0]), X.shape[0] // 1000)
print(f"a stream of {X.shape[0]} rows in {len(chunks)} chunks")


def progressive_accuracy(model, **first_call):
    """Accuracy of the model released before each chunk, on that chunk (cumulative)."""
    correct, seen, curve = 0, 0, []
    for i, chunk in enumerate(chunks):
        if i > 0:
            correct += int((model.predict(X[chunk]) == y[chunk]).sum())
            seen += chunk.size
            curve.append(correct / seen)
        model.partial_fit(X[chunk], y[chunk], **(first_call if i == 0 else {}))
    return np.array(curve)


# %%
# One release per stream
# ----------------------
#
# Each stream charges the accountant once, at its first call, whatever the number of
# chunks: three streams are three spends.

accountant = BudgetAccountant()
curves = {}
for epsilon in (0.5, 1.0, 4.0):
    model = OnlineSGDClassifier(
        epsilon=epsilon, max_samples=X.shape[0], classes=[0, 1], accountant=accountant, random_state=0
    )
    curves[f"private, ε = {epsilon:g}"] = progressive_accuracy(model)
    print(f"ε = {epsilon:g}: progressive accuracy {curves[f'private, ε = {epsilon:g}'][-1]:.3f}")
curves["scikit-learn SGD (not private)"] = progressive_accuracy(
    SkSGDClassifier(loss="log_loss", random_state=0), classes=[0, 1]
)
print(f"{accountant!r}: {len(accountant.spent_budget)} spends")

# %%
# The curves
# ----------
#
# The private learners start at the majority class and improve as the stream goes on:
# their average regret per row shrinks like 1/√T. Stronger privacy (smaller ε) means
# more noise in the released sums and a slower start. The seeds are fixed so that the
# figure reproduces.

fig, ax = plt.subplots(figsize=(7, 4.5))
seen = np.cumsum([c.size for c in chunks[1:]])
for name, curve in curves.items():
    ax.plot(seen, curve, label=name, linestyle="--" if "not private" in name else "-")
ax.set_xlabel("rows seen")
ax.set_ylabel("progressive accuracy")
ax.set_title("Adult as a stream: private online learning")
ax.legend()
fig.tight_layout()

output = Path(os.environ.get("DPSK_EXAMPLES_OUTPUT", "figures"))
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "online_learning.png", dpi=120)
plt.show()
