"""The risk of linear scores on an accelerator (JAX): the SMC hot loop on a GPU.

An SMC run on a Gibbs posterior of linear scores spends nearly all its time
in one place: the empirical risk ``r_n(X theta)`` of a batch of particles
(one O(n log n) sort per particle for the AUC). Particles, moves and
tempering are cheap and stay in numpy on the host; :class:`DeviceLinearRisk`
moves only the risk: the design matrix is put on the device once, each call
transfers the particles ``theta`` (N, d) once, computes the scores
``theta X'`` and their risks there in chunks of particles sized to the
device's memory, and returns the N risks as float64 numpy.

The AUC pair risk is computed as the numba kernel of
:mod:`pac_particles.problem.auc` does, with exact integer counts of
mis-ordered pairs (ties 1/2): one row of scores is sorted once, stably,
with the class of each entry as payload; the positives come first in the
input, so within a tie group they come before the negatives. A positive's
negatives before it are then those strictly below, and their sum over the
positives is ``B``, the pairs ``s_pos > s_neg``; a negative's positives
before it, less those before its tie group's start, are the positives
tied with it, and their sum is ``T``, the tied pairs. With ``P`` pairs,
twice the mis-ordered pairs are

    2 (P - B - T) + T = 2 P - 2 B - T,        R_n = 0.5 (2 P - 2 B - T) / P,

the integer of :func:`~pac_particles.problem.auc.merge_count`, brought
back to the host for the kernel's own float64 operations: given the same
scores the risks are equal bit for bit. Scores are sorted as unsigned
64-bit keys (a monotone map of the float64 bits, ``-0.0`` mapped to
``0.0`` so that the two tie as in the numba comparisons): a sort of
integer keys with a plain
comparison is what XLA hands to CUB's radix sort on a GPU, where JAX's
float sort (a NaN-aware comparator) runs XLA's own, slower, sort. The
scores themselves come from the device's matrix product, whose summation
order differs from the host's BLAS in the last bits; only an order flip
between two scores within an ulp of each other can then change a count.

The point risks of :class:`~pac_particles.problem.risks.ClassificationRisk`
(each loss's ``jax_point`` of :mod:`pac_particles.problem.losses`; PU
weights and offset) are the same weighted sums of the same losses, summed in the device's order: equal to
the numba kernel's to a few ulps, not bit for bit.

JAX computes in float32 unless its 64-bit mode is on. That mode is entered
only around this module's own calls (``jax.enable_x64``, or
``jax.experimental.enable_x64`` on older JAX), never switched on globally:
flipping ``jax_enable_x64`` for the process would turn the user's other JAX
code to float64 as well.

Example
-------
::

    import numpy as np
    from pac_particles.problem.risks import AUCRisk
    from pac_particles.problem.accelerated_risk import DeviceLinearRisk
    X = np.random.randn(1000, 5); y = X[:, 0] + np.random.randn(1000) > 0
    risk = AUCRisk(y)
    device = DeviceLinearRisk(risk, risk.ordered(X))
    theta = np.random.randn(64, 5)
    device.linear(theta)                # == risk.linear(theta, risk.ordered(X))

Models take it as ``backend="jax"``
(:class:`~pac_particles.smc.models.AUCGibbsModel`,
:class:`~pac_particles.smc.models.ClassificationGibbsModel`,
:class:`~pac_particles.smc.models.SpanAUCModel`); docs/gpu.md says how to
install a GPU build.
"""

import math

import numpy as np

from pac_particles.core.checks import InputError, check_choice, check_count
from pac_particles.problem.risks import AUCRisk, ClassificationRisk, SampledAUCRisk

__all__ = ["BACKENDS", "COUNT_METHODS", "DeviceLinearRisk", "check_backend",
           "import_jax"]

#: Where the risk of linear scores is computed: the numba kernels on the
#: host's cores, or JAX on its default device (a GPU when a CUDA build of
#: jaxlib is installed).
BACKENDS = ("numba", "jax")

#: How the device counts mis-ordered pairs: ``"merge"`` (the default)
#: sorts each score row once with the classes as payload and reads the
#: counts off prefix scans; ``"search"`` sorts positives and negatives
#: apart and binary-searches each positive among the negatives. Both give
#: the same integers; which is faster depends on the device's sort
#: (scripts/bench_accelerator.py times both; on the CPU "search" won with
#: jax 0.7 and "merge" with jax 0.12). On a GPU "merge" is one radix sort
#: and linear scans, against two sorts and log n gathers per positive.
COUNT_METHODS = ("merge", "search")

#: Device bytes per score entry (one particle x one row) that a chunk may
#: hold at once: the scores, their keys and payload, the sorted copies,
#: the radix sort's double buffer and the int32 scans, with room to spare.
BYTES_PER_SCORE = 96

#: Fraction of the device's memory pool a chunk of scores may take
#: (JAX holds 75% of a GPU's memory by default).
MEMORY_FRACTION = 0.25

#: Bytes a chunk may take where the device reports no memory (the CPU).
HOST_CHUNK_BYTES = 256 * 2 ** 20

#: Most particles in one chunk, and fewest in a padded one: calls are
#: padded to a power of two of particles (at most log2 of the chunk
#: compiled shapes, however N varies between calls).
MAX_CHUNK_PARTICLES = 4096
MIN_CHUNK_PARTICLES = 8


def import_jax():
    """The ``jax`` module, or InputError saying how to install it."""
    try:
        import jax
    except ImportError as err:
        raise InputError(
            "backend='jax' needs JAX: pip install pac_particles[jax] (add a "
            "CUDA build of jaxlib for a GPU, docs/gpu.md)") from err
    return jax


def check_backend(backend):
    """``backend`` if it is one of :data:`BACKENDS`, else InputError."""
    return check_choice(backend, "backend", BACKENDS)


def _x64(jax):
    """A context in which JAX computes in 64 bits (scoped, not global)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64
    return enable_x64()


class DeviceLinearRisk:
    """Risks of the linear scores ``X theta`` of batches of particles,
    computed by JAX on its default device (module docstring).

    Parameters
    ----------
    risk : :class:`~pac_particles.problem.risks.AUCRisk` or
        :class:`~pac_particles.problem.risks.ClassificationRisk` (the
        sampled-pair risk is not offered).
    X_ordered : (n, d) design in ``risk.order`` (``risk.ordered(X)``);
        put on the device at the first call, not copied on the host.
    chunk_particles : int, optional
        Particles per chunk; default from the device's memory
        (:data:`BYTES_PER_SCORE`, :data:`MEMORY_FRACTION`), rounded down
        to a power of two.
    count : one of :data:`COUNT_METHODS` (AUC only).

    Attributes
    ----------
    device : the JAX device; chunk_particles, count : as used.
    """

    def __init__(self, risk, X_ordered, chunk_particles=None, count="merge"):
        jax = import_jax()
        if isinstance(risk, SampledAUCRisk) or not isinstance(
                risk, (AUCRisk, ClassificationRisk)):
            raise InputError(
                f"the jax backend computes the AUC pair risk and the "
                f"classification point risks, not {type(risk).__name__}")
        if isinstance(risk, ClassificationRisk) \
                and risk.margin_loss.jax_point is None:
            raise InputError(f"the loss {risk.loss!r} declares no jax_point: "
                             "use backend='numba'")
        X = np.asarray(X_ordered)
        if X.ndim != 2 or X.shape[0] != risk.n:
            raise InputError(f"X_ordered must have shape ({risk.n}, d), got "
                             f"{X.shape}")
        self.risk = risk
        self._X = X
        self.device = jax.devices()[0]
        self.count = check_choice(count, "count", COUNT_METHODS)
        if chunk_particles is None:
            chunk_particles = self._memory_chunk()
        chunk = check_count(chunk_particles, "chunk_particles")
        # a power of two: the padded sizes of short calls divide it
        self.chunk_particles = 2 ** int(math.log2(chunk))
        self._device_arrays = None

    def _memory_chunk(self):
        """Particles whose scores fit :data:`MEMORY_FRACTION` of the
        device's memory pool (:data:`HOST_CHUNK_BYTES` where it reports
        none)."""
        try:
            stats = self.device.memory_stats() or {}
        except Exception:  # backends without memory statistics
            stats = {}
        budget = (MEMORY_FRACTION * stats["bytes_limit"]
                  if "bytes_limit" in stats else HOST_CHUNK_BYTES)
        fit = int(budget // (BYTES_PER_SCORE * max(self.risk.n, 1)))
        return min(MAX_CHUNK_PARTICLES, max(1, fit))

    def __getstate__(self):
        # device buffers do not travel (joblib workers put them again)
        state = self.__dict__.copy()
        state["_device_arrays"] = None
        state["device"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.device = import_jax().devices()[0]

    def _arrays(self, jax, design=True):
        """What the kernels read besides the scores, put on the device
        once: the design (``design``), the point risks' signs and
        weights."""
        if self._device_arrays is None:
            put = lambda a: jax.device_put(  # noqa: E731
                np.ascontiguousarray(a, dtype=np.float64), self.device)
            extra = ([put(self.risk.signs), put(self.risk.weights)]
                     if isinstance(self.risk, ClassificationRisk) else [])
            self._device_arrays = ([put(self._X)], extra)
        X, extra = self._device_arrays
        return (X if design else []) + extra

    def _static(self):
        """The kernel's name and static arguments."""
        if isinstance(self.risk, ClassificationRisk):
            return "points", (self.risk.margin_loss,)
        return "auc_" + self.count, (self.risk.n_pos,)

    def _padded_sizes(self, N):
        """Chunk sizes covering ``N`` particles: full chunks, then the rest
        padded to a power of two (at least :data:`MIN_CHUNK_PARTICLES`)."""
        C = self.chunk_particles
        full, rest = divmod(N, C)
        sizes = [C] * full
        if rest:
            sizes.append(min(C, max(MIN_CHUNK_PARTICLES,
                                    2 ** math.ceil(math.log2(rest)))))
        return sizes

    def _evaluate(self, batch, linear):
        """Risks of the rows of ``batch`` (particles when ``linear``, else
        score rows) in padded chunks: one transfer in, N risks out."""
        N = batch.shape[0]
        sizes = self._padded_sizes(N)
        padded = np.zeros((sum(sizes), batch.shape[1]))
        padded[:N] = batch
        jax = import_jax()
        name, static = self._static()
        kernel = _kernels()[("linear_" if linear else "scores_") + name]
        with _x64(jax):
            arrays = self._arrays(jax, design=linear)
            rows = jax.device_put(padded, self.device)
            risks, start = [], 0
            # dispatched asynchronously: chunk k + 1 is queued while k runs
            for size in sizes:
                risks.append(kernel(rows[start:start + size], *arrays,
                                    *static))
                start += size
            out = np.concatenate(jax.device_get(risks))[:N]
        if isinstance(self.risk, ClassificationRisk):
            return out + self.risk.offset
        # the float64 operations of auc._merged_risk, on the host: inside
        # XLA (which may rewrite a division by a constant) the last bit
        # differed
        return 0.5 * out / (self.risk.n_pos * self.risk.n_neg)

    def linear(self, theta):
        """Risks of particles ``theta`` ((N, d), or (d,) for one float):
        one transfer of ``theta`` to the device, N float64 risks back."""
        theta = np.asarray(theta, dtype=np.float64)
        if theta.ndim == 1:
            return float(self.linear(theta[None, :])[0])
        if theta.ndim != 2 or theta.shape[1] != self._X.shape[1]:
            raise InputError(f"theta must have shape (N, {self._X.shape[1]}),"
                             f" got {theta.shape}")
        return self._evaluate(theta, linear=True)

    def rows(self, scores):
        """Risks of score rows (N, n) already in ``risk.order``, counted
        on the device as :meth:`linear` counts (no matrix product): to
        compare with the numba kernel on the same scores."""
        scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
        if scores.ndim != 2 or scores.shape[1] != self.risk.n:
            raise InputError(f"scores must have shape (N, {self.risk.n}), "
                             f"got {scores.shape}")
        return self._evaluate(scores, linear=False)


_KERNELS = {}


def _kernels():
    """The jitted chunk kernels, built at the first use (JAX is imported
    only when the backend is asked for)."""
    if _KERNELS:
        return _KERNELS
    jax = import_jax()
    import jax.numpy as jnp
    from jax import lax

    def sort_keys(scores):
        """Unsigned 64-bit keys in the order of the float64 scores, equal
        for equal scores (``-0.0`` as ``0.0``)."""
        bits = lax.bitcast_convert_type(scores, jnp.uint64)
        top = jnp.uint64(1 << 63)
        # -0.0 (the sign bit alone) as 0.0, on the integers: a float select
        # of 0.0 where the score is 0 may be simplified away
        bits = jnp.where(bits == top, jnp.uint64(0), bits)
        return jnp.where(bits >= top, ~bits, bits | top)

    def auc_merge(scores, n_pos):
        n = scores.shape[1]
        keys = sort_keys(scores)
        classes = jnp.broadcast_to(
            (jnp.arange(n) >= n_pos).astype(jnp.uint16), keys.shape)
        # stable: the positives, first in the input, come first in each tie
        # group, so a positive's negatives before it are those strictly
        # below (a radix sort, as on a GPU, is stable at no cost)
        keys, is_neg = lax.sort((keys, classes), dimension=1, num_keys=1,
                                is_stable=True)
        is_neg = is_neg.astype(jnp.int32)
        neg_before = jnp.cumsum(is_neg, axis=1, dtype=jnp.int32) - is_neg
        pos_before = lax.broadcasted_iota(jnp.int32, keys.shape, 1) \
            - neg_before
        starts = jnp.concatenate(
            [jnp.ones((keys.shape[0], 1), bool), keys[:, 1:] != keys[:, :-1]],
            axis=1)
        # the prefix maximum of a non-decreasing count reads it at the tie
        # group's start: a negative's positives strictly below
        pos_lt = lax.cummax(jnp.where(starts, pos_before, 0), axis=1)
        below = jnp.sum(jnp.where(is_neg == 1, 0, neg_before), axis=1,
                        dtype=jnp.int64)
        tied = jnp.sum(jnp.where(is_neg == 1, pos_before - pos_lt, 0),
                       axis=1, dtype=jnp.int64)
        return 2 * n_pos * (n - n_pos) - 2 * below - tied

    def auc_search(scores, n_pos):
        keys = sort_keys(scores)
        pos = jnp.sort(keys[:, :n_pos], axis=1)
        neg = jnp.sort(keys[:, n_pos:], axis=1)
        n_neg = neg.shape[1]
        below = jax.vmap(lambda a, v: jnp.searchsorted(a, v, side="left"))
        at_or_below = jax.vmap(lambda a, v: jnp.searchsorted(a, v,
                                                             side="right"))
        # a positive's twice-bad count: 2 per negative above, 1 per tie
        twice_bad = jnp.sum(2 * n_neg - below(neg, pos).astype(jnp.int64)
                            - at_or_below(neg, pos).astype(jnp.int64), axis=1)
        return twice_bad

    def points(scores, signs, weights, loss):
        # loss: the MarginLoss of the table (static: one trace per loss)
        values = loss.jax_point(jnp, signs * scores)
        return jnp.sum(weights * values, axis=1)

    def linear(count):
        """``count`` of the scores ``theta X'`` (the product on the device)."""
        return lambda theta, X, *args: count(theta @ X.T, *args)

    for name, count, n_static in (("auc_merge", auc_merge, 1),
                                  ("auc_search", auc_search, 1),
                                  ("points", points, 3)):
        _KERNELS["scores_" + name] = jax.jit(count, static_argnums=n_static)
        _KERNELS["linear_" + name] = jax.jit(linear(count),
                                             static_argnums=n_static + 1)
    return _KERNELS
