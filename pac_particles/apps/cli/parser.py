"""The argument parser of ``pac-particles``: the sub-commands, their
options, and the option groups the scripts share (:func:`parent_parsers`).

Light on purpose: ``--help`` and ``--version`` import this module,
:mod:`argparse` and the loss table (:mod:`pac_particles.problem.losses`,
which imports no numpy) only -- no numpy, scikit-learn, numba or
particles -- so the other choices ``--help`` shows are spelled here; a test
checks them against the library's (``METHODS``, ``DATASETS``, ...).
"""

import argparse
import textwrap

from pac_particles import __version__
from pac_particles.problem.losses import LOSSES

__all__ = ["build_parser", "parent_parsers", "progress_argument"]

# The choices --help shows, spelled here so that it imports nothing; a test
# checks them against the library's (METHODS, LOSSES, DATASETS, ...).
_DATASETS = ("breast_cancer", "eeg", "liver", "pima", "sonar")
_AUC_METHODS = ("auto", "smc", "ep", "vb")
_CLASSIFIER_METHODS = ("smc", "vb", "ep")
# the table itself: a registered loss is a choice too
_LOSSES = LOSSES
_CV_RULES = ("certified", "best")
_DEPLOYS = ("all_rows", "certified")
_PROGRESS_MODES = ("off", "auto", "bar", "lines")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                     argparse.RawDescriptionHelpFormatter):
    """Defaults in ``--help`` (where there is one to show) and epilogs
    kept as written."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, False) or "default" in text \
                or action.default is argparse.SUPPRESS:
            return text
        return super()._get_help_string(action)


def _lam_argument(text):
    if text == "cv":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lam takes 'cv' or a number, got {text!r}")


def _sep_argument(text):
    """``--sep``: one character; ``\\t`` or ``tab`` for a tab."""
    if text in ("\\t", "tab", "TAB"):
        return "\t"
    if len(text) != 1:
        raise argparse.ArgumentTypeError(
            f"--sep takes one character (',' ';' '|', or '\\t' / tab), got "
            f"{text!r}")
    return text


def progress_argument(args):
    """The ``verbose`` value of parsed ``--progress`` / ``--quiet`` options
    (:mod:`pac_particles.core.progress`)."""
    return False if args.quiet else (True if args.progress == "auto"
                                       else args.progress)


def parent_parsers():
    """Options several sub-commands (and the scripts) share, one definition
    each, as argparse parent parsers keyed by topic: ``run`` (``--seed``,
    ``--out``, whose default ``None`` stands for ``results/NAME``),
    ``quiet`` (``--progress``, ``--quiet``: :func:`progress_argument`),
    ``sampler`` (``--n-particles``, ``--len-chain``), ``csv`` (how to read
    a CSV: ``--target``, ``--sep``, ``--no-header``, ``--features``,
    ``--drop``, ``--positive-label``), ``data`` (a CSV path and the ``csv``
    options), ``split`` (``--test-size``) and ``jobs`` (``--n-jobs``)."""
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--seed", type=int, default=0,
                     help="seed of the split, the folds and the sampler")
    run.add_argument("--out", default=None,
                     help="output folder (default: results/NAME, NAME the "
                          "command or script)")
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("--progress", default="auto",
                       choices=[m for m in _PROGRESS_MODES if m != "off"],
                       help="progress on stderr: a tqdm bar on a terminal and "
                            "one line per step in logs (auto), or force "
                            "'bar' or 'lines'")
    quiet.add_argument("--quiet", action="store_true",
                       help="no progress report")
    sampler = argparse.ArgumentParser(add_help=False)
    sampler.add_argument("--n-particles", type=int, default=200,
                         help="resampled particles M of the SMC sampler "
                              "(waste-free: M x len-chain held)")
    sampler.add_argument("--len-chain", type=int, default=10,
                         help="length of the MCMC chains (>= 2)")
    csv = argparse.ArgumentParser(add_help=False)
    csv.add_argument("--target", default=None, metavar="COLUMN",
                     help="label column, by name or 1-based position "
                          "(default: the last column)")
    csv.add_argument("--sep", type=_sep_argument, default=",",
                     help="field separator: ',' ';' '|' or '\\t'")
    csv.add_argument("--no-header", dest="header", action="store_false",
                     help="the first row is data: columns are named col1, "
                          "col2, ... (default: the first row names the "
                          "columns)")
    picks = csv.add_mutually_exclusive_group()
    picks.add_argument("--features", action="append", metavar="COLUMNS",
                       help="feature columns, comma-separated or repeated "
                            "(default: every column but the target)")
    picks.add_argument("--drop", action="append", metavar="COLUMNS",
                       help="columns to leave out (identifiers, text), "
                            "comma-separated or repeated")
    csv.add_argument("--positive-label", default=None, metavar="LABEL",
                     help="the label of the positive class (default: the "
                          "larger number, or for two strings the "
                          "lexicographically larger, e.g. 'yes' of no/yes)")
    data = argparse.ArgumentParser(add_help=False, parents=[csv])
    data.add_argument("data", help="CSV file: one row per example, numeric "
                                   "feature columns and a label column with "
                                   "two distinct values")
    split = argparse.ArgumentParser(add_help=False)
    split.add_argument("--test-size", type=float, default=0.25,
                       help="held-out fraction of a stratified split "
                            "(fit, classify: 0 fits on all rows, with no "
                            "test set)")
    jobs = argparse.ArgumentParser(add_help=False)
    jobs.add_argument("--n-jobs", type=int, default=1,
                      help="cross-validation folds run in parallel")
    return {"run": run, "quiet": quiet, "sampler": sampler, "csv": csv,
            "data": data, "split": split, "jobs": jobs}


def build_parser():
    """The argument parser of ``pac-particles``."""
    parents = parent_parsers()

    def using(*names):
        return [parents[name] for name in ("run", "quiet", "sampler") + names]
    parser = argparse.ArgumentParser(
        prog="pac-particles", formatter_class=_HelpFormatter,
        description="PAC-Bayesian AUC scoring with Sequential Monte Carlo:\n"
                    "fit a linear score that ranks positives above "
                    "negatives,\nwith a certificate on its AUC.",
        epilog="examples:\n"
               "  pac-particles demo\n"
               "  pac-particles fit data.csv --target y --save-model "
               "model.json\n"
               "  pac-particles predict model.json new.csv --out "
               "predictions.csv\n"
               "  pac-particles COMMAND --help   (the options of a command)")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="COMMAND")

    def command(name, help, parents=()):
        return sub.add_parser(name, parents=list(parents), help=help,
                              description=textwrap.fill(
                                  help[0].upper() + help[1:] + ".", 78),
                              formatter_class=_HelpFormatter)
    p = command("demo", "the main job on a built-in dataset or a CSV: fit, "
                        "test, certify and plot", using("split", "csv"))
    p.add_argument("--dataset", default="pima", choices=_DATASETS,
                   help="built-in dataset")
    p.add_argument("--csv", default=None, metavar="PATH",
                   help="a CSV file instead of --dataset (read with the "
                        "--target, --sep, ... options)")
    p.add_argument("--lam", type=_lam_argument, default=None,
                   help="inverse temperature, or 'cv' to choose it by "
                        "cross-validation (default: number of training rows)")
    f = command("fit", "fit PACBayesAUC on a CSV file: summary, "
                       "coefficients, plots and, with --save-model, a model "
                       "file for predict", using("data", "split", "jobs"))
    f.add_argument("--method", default="auto", choices=_AUC_METHODS,
                   help="auto: SMC up to 400 rows, VB above (EP for GP "
                        "kernels); smc: tempering SMC (the reference); ep: "
                        "Expectation Propagation; vb: Gaussian variational "
                        "Bayes")
    f.add_argument("--lam", type=_lam_argument, default="cv",
                   help="inverse temperature on the fraction of mis-ordered "
                        "pairs, or 'cv' to choose it")
    f.add_argument("--cv-rule", default="certified", choices=_CV_RULES,
                   help="with --lam cv and smc: 'certified' takes the "
                        "tightest certificate among the lam within one "
                        "standard error of the best mean CV AUC, 'best' the "
                        "best mean CV AUC (EP and VB: leave-one-out, best)")
    f.add_argument("--deploy", default="all_rows", choices=_DEPLOYS,
                   help="the score to deploy: all_rows, the posterior fitted "
                        "on "
                        "every row (its certificate derandomised, looser); "
                        "certified, the part-A logistic regression (its "
                        "certificate the test-set bound on the other half, "
                        "never looser than one on the same rows)")
    f.add_argument("--save-model", default=None, metavar="FILE",
                   help="write the fitted score to FILE (JSON with a "
                        "checksum; read by predict without running code)")
    r = command("predict", "score the rows of a CSV with a model file saved "
                           "by fit or classify --save-model")
    r.add_argument("model", help="model file (fit or classify --save-model)")
    r.add_argument("data", help="CSV file holding the model's feature "
                                "columns, by name (other columns are "
                                "ignored; the label column, when present, "
                                "gives an AUC)")
    r.add_argument("--out", default="results/predict/predictions.csv",
                   help="CSV to write: the --id columns, row, score (fit "
                        "models), label, probability of the positive "
                        "label; '-' for stdout")
    r.add_argument("--id", action="append", dest="ids", metavar="COLUMN",
                   help="a column to copy to the output as read (a key to "
                        "join the scores back on), by name; repeat or "
                        "comma-separate for several")
    r.add_argument("--sep", type=_sep_argument, default=None,
                   help="field separator (default: the training CSV's)")
    r.add_argument("--no-header", dest="header", action="store_const",
                   const=False, default=None,
                   help="the first row is data, columns col1, col2, ... "
                        "(default: as the training CSV)")
    k = command("classify", "fit a PAC-Bayesian classifier "
                            "(PACBayesClassifier) on a CSV file: summary, "
                            "plots and, with --save-model, a model file for "
                            "predict", using("data", "split", "jobs"))
    k.add_argument("--method", default="vb", choices=_CLASSIFIER_METHODS,
                   help="vb: Gaussian variational Bayes; smc: tempering "
                        "SMC; ep: Expectation Propagation (0-1 loss only)")
    k.add_argument("--loss", default="auto", choices=("auto", *_LOSSES),
                   help="classification loss of the Gibbs posterior (auto: "
                   "the hinge; the 0-1 loss for ep)")
    k.add_argument("--lam", type=_lam_argument, default="cv",
                   help="inverse temperature on the mean loss, or 'cv' to "
                        "choose it by K-fold accuracy")
    k.add_argument("--deploy", default="all_rows", choices=_DEPLOYS,
                   help="the rule to deploy: all_rows, the posterior fitted "
                        "on "
                        "every row (its certificate derandomised, looser); "
                        "certified, the part-A logistic regression (its "
                        "certificate the test-set bound on the other half, "
                        "never looser than one on the same rows)")
    k.add_argument("--save-model", default=None, metavar="FILE",
                   help="write the fitted classifier to FILE (JSON with a "
                        "checksum; read by predict without running code)")
    k.add_argument("--pu-prior", type=float, default=None,
                   help="positive-unlabelled labels: the fraction of "
                        "positives among the unlabelled rows (default: "
                        "ordinary labels)")
    c = command("cv", "cross-validate lam along the tempering path (SMC): "
                      "the best-mean and the certified lam, as fit chooses",
                using("data", "jobs"))
    c.add_argument("--lam-max", type=float, default=None,
                   help="end of the path (default: 5 x number of rows)")
    c.add_argument("--folds", type=int, default=5,
                   help="stratified cross-validation folds")
    return parser


def _csv_options(sep=",", header=True, features=None, drop=None,
                 positive_label=None):
    """How to read a CSV: the keyword arguments of
    :func:`pac_particles.apps.cli.inputs._read_csv`."""
    return dict(sep=sep, header=header, features=features, drop=drop,
                positive_label=positive_label)


def _csv_args(args):
    """The parsed CSV options as :func:`_csv_options`."""
    return _csv_options(sep=args.sep, header=args.header,
                        features=args.features, drop=args.drop,
                        positive_label=args.positive_label)
