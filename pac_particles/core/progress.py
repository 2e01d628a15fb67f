"""Progress reports of long work: a tqdm bar on a terminal, lines in logs.

Long computations (the tempering steps of :func:`~pac_particles.smc.posterior.run_smc`,
cross-validation folds and ``lam`` grids in :mod:`pac_particles.sklearn.selection`,
repeated runs of the studies in ``lab/``) report through one
:class:`Progress` object, whose behaviour is chosen by the ``verbose``
argument of the calling function:

* ``False`` (the default of library calls) or ``"off"``: nothing;
* ``True`` (the default of the command line and the scripts) or ``"auto"``:
  a tqdm bar on stderr when stderr is a terminal, otherwise one line per
  update (so logs, CI jobs and pipes never receive carriage-return bars);
* ``"bar"``: the tqdm bar even when stderr is not a terminal;
* ``"lines"``: one line per update, prefixed ``[pac_particles]``.

Everything goes to stderr, so that stdout keeps only results.

Example
-------
::

    from pac_particles.core.progress import Progress
    with Progress(True, total=5, desc="CV folds", unit="fold") as bar:
        for k in range(5):
            ...                                  # fit fold k
            bar.update(advance=1, text=f"fold {k + 1}/5 done")

References
----------
[tqdm] da Costa-Luis, C. et al. tqdm: a fast, extensible progress bar for
Python and CLI. https://github.com/tqdm/tqdm
"""

import sys
import time

from tqdm import tqdm

from pac_particles.core.checks import check_choice

__all__ = ["Progress", "PROGRESS_MODES", "progress_mode", "tracked"]

PROGRESS_MODES = ("off", "auto", "bar", "lines")


def progress_mode(verbose, stream=None):
    """The mode a ``verbose`` argument stands for: ``"off"``, ``"bar"`` or
    ``"lines"`` (``True``/``"auto"`` resolved by whether ``stream``, default
    stderr, is a terminal)."""
    if verbose is None or verbose is False:
        return "off"
    mode = "auto" if verbose is True else check_choice(verbose, "verbose",
                                                         PROGRESS_MODES)
    if mode == "auto":
        stream = sys.stderr if stream is None else stream
        isatty = getattr(stream, "isatty", None)
        return "bar" if isatty is not None and isatty() else "lines"
    return mode


class Progress:
    """A progress report: a tqdm bar, one stderr line per update, or nothing.

    Parameters
    ----------
    verbose : bool or str, see :data:`PROGRESS_MODES` and :func:`progress_mode`.
    total : float, the position at completion (1.0 for a tempering exponent,
        the number of folds, grid values or runs otherwise).
    desc : str, the label of the bar.
    unit : str, the unit of the bar.
    float_position : bool, show the position with 3 significant digits
        (a tempering exponent) instead of ``n/total``.
    """

    def __init__(self, verbose, total, desc="", unit="it", float_position=False):
        self.mode = progress_mode(verbose)
        self.total = total
        self.desc = desc
        self.start = time.perf_counter()
        self._bar = None
        if self.mode == "bar":
            # a tempering exponent does not grow linearly in time: no ETA
            counter = ("{n:.3g}/{total:g} [{elapsed}{postfix}]" if float_position
                       else "{n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]")
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                             leave=True, dynamic_ncols=True,
                             bar_format="{l_bar}{bar}| " + counter)

    @property
    def elapsed(self):
        """Seconds since the report started."""
        return time.perf_counter() - self.start

    def update(self, position=None, advance=None, text="", postfix=None):
        """Move to ``position`` (or by ``advance``) and report.

        ``text`` is the line written in ``"lines"`` mode (after the
        ``[pac_particles]`` prefix); ``postfix`` (a short string) is shown
        after the bar in ``"bar"`` mode.
        """
        if self.mode == "off":
            return
        if self.mode == "lines":
            if text:
                print(f"[pac_particles] {text}", file=sys.stderr, flush=True)
            return
        if position is not None:
            self._bar.n = min(position, self.total)
        elif advance is not None:
            self._bar.n = min(self._bar.n + advance, self.total)
        if postfix:
            self._bar.set_postfix_str(postfix, refresh=False)
        self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tracked(results, progress, label, start=0):
    """Yield ``results`` (an iterable, e.g. joblib's ``return_as="generator"``)
    and advance ``progress`` by one per item, with the line
    ``"{label} k/total done"`` (``k`` counted from ``start``), or, when
    ``label`` is a list of one label per item (jobs of different kinds,
    e.g. ``["refit", "fold 1/5", ...]``), ``"{label[k]} done"``."""
    for k, item in enumerate(results, start=start):
        name = (label[k] if not isinstance(label, str)
                else f"{label} {k + 1}/{progress.total}")
        progress.update(advance=1, text=f"{name} done "
                        f"({progress.elapsed:.1f} s)")
        yield item
