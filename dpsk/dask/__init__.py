# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""dpsk on Dask collections: the same estimators and statistics, data beyond one machine.

Pass a ``dask.array.Array`` or a ``dask.dataframe.DataFrame`` (``y`` and
``sample_weight`` likewise) to ``fit`` of :class:`~dpsk.preprocessing.StandardScaler`,
:class:`~dpsk.preprocessing.MinMaxScaler`, :class:`~dpsk.naive_bayes.GaussianNB`,
:class:`~dpsk.linear_model.LinearRegression`, :class:`~dpsk.linear_model.Ridge`,
:class:`~dpsk.cluster.KMeans`, :class:`~dpsk.decomposition.PCA`,
:class:`~dpsk.naive_bayes.BernoulliNB`, :class:`~dpsk.naive_bayes.CategoricalNB`,
:class:`~dpsk.naive_bayes.MultinomialNB`, :class:`~dpsk.tree.DecisionTreeClassifier`,
:class:`~dpsk.ensemble.RandomForestClassifier`,
:class:`~dpsk.tree.DecisionTreeRegressor`, :class:`~dpsk.ensemble.RandomForestRegressor`,
:class:`~dpsk.ensemble.HistGradientBoostingClassifier`,
:class:`~dpsk.ensemble.HistGradientBoostingRegressor` (``dpsk.dask._boosting``: each
round's exact integer histograms per chunk, the rows and raw predictions kept on the
cluster), or to
:func:`dpsk.stats.count`, :func:`~dpsk.stats.sum`, :func:`~dpsk.stats.mean`,
:func:`~dpsk.stats.var`, :func:`~dpsk.stats.std`, :func:`~dpsk.stats.histogram`,
:func:`~dpsk.stats.histogramdd`, :func:`~dpsk.stats.quantile`,
:func:`~dpsk.stats.percentile` and :func:`~dpsk.stats.median` (the quantiles: counts
per block of bins, then per bin near the target ranks). Each chunk's exact sufficient
statistics are computed where the chunk lives, by the in-memory kernels; the integer
statistics are summed exactly by a tree reduction, so they do not depend on the
chunking; the noise is drawn once, on the client. ``predict``/``transform`` on Dask input
are lazy. :class:`~dpsk.linear_model.LogisticRegression` and :class:`~dpsk.svm.LinearSVC`
minimise their perturbed objective by a distributed Newton method (``dpsk.dask._newton``).
User-level ``groups=`` (LinearRegression, Ridge, stats count/sum/mean/var/std) counts the
rows per user by a group-by on the cluster (``dpsk.dask._groups``).

Requires the optional extra ``dpsk[dask]``; Dask is imported only when a Dask collection
is passed. See the user guide (doc/user_guide/scaling.rst).
"""

from dpsk.dask._data import is_dask

__all__ = ["is_dask"]
