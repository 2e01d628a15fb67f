"""The ``pac-particles`` command.

Sub-commands
------------
``demo``
    The main job: a built-in dataset (Pima by default) or a CSV
    (``--csv PATH``), stratified 75/25 split,
    :class:`~pac_particles.sklearn.estimator.PACBayesAUC` (waste-free
    adaptive-tempering SMC on the AUC Gibbs posterior) with ``lam = n_train``;
    prints train/test AUC of the Bayes point and of the posterior mean, the
    test AUC of logistic regression on the same split, the PAC-Bayes
    certificate (the tightest valid one, with its bound, prior and level,
    labelled when vacuous, read beside the test AUC; Corollary 19 beside it
    when it is not vacuous) and a held-out bound for the Bayes point, the
    log evidence, the number of tempering steps and the wall time; writes
    as PNGs the ROC curves (``roc.png``), the posterior of the normalised
    direction ``theta_k / ||theta||`` per feature (``marginals.png``) and,
    when the run tempered in more than one step, the tempering path, ``log
    Z`` against ``gamma`` with the cross-validation AUC when ``--lam cv``
    (``tempering_path.png``; a run of one importance-sampling step prints
    its ESS and Pareto ``k`` instead).
``fit DATA.csv``
    Fit :class:`~pac_particles.sklearn.estimator.PACBayesAUC` on a CSV with a
    held-out test split; prints a headline (AUCs, ``lam`` and the rule that
    chose it, the certificate in one sentence and why it differs from the
    test AUC) and writes ``summary.json`` (the method that ran, AUCs, lam,
    log evidence, certificate, timings, the coefficients keyed by the CSV's
    column names), ``coefficients.csv`` (coefficients with 95%
    posterior intervals, :meth:`PACBayesAUC.coefficient_intervals`),
    ``marginals.png``, ``roc.png`` (with a test split), ``cv_curve.png``
    (with ``--lam cv``) and, with ``--save-model FILE``, a model file
    (:mod:`pac_particles.sklearn.model_file`: JSON, loaded without running code).
``predict MODEL DATA.csv``
    Score the rows of a CSV with a saved model (of ``fit`` or
    ``classify``): writes the ``--id`` columns as read, the score (``fit``
    models), the predicted label and the probability of the positive label
    of each row to a CSV (``--out``); reports the AUC when the CSV holds
    the labels.
``classify DATA.csv``
    Fit :class:`~pac_particles.sklearn.classifier.PACBayesClassifier` (the Gibbs
    posterior of a 0-1, hinge, exponential or ramp risk, by SMC, VB or EP)
    on a CSV with a held-out test split; prints a headline as ``fit`` does
    and writes ``summary.json`` (train and test misclassification rates,
    that of logistic regression on the same split, lam, log evidence, the
    certificate, the coefficients of the posterior mean keyed by the CSV's
    column names, timings), with ``--lam cv`` ``cv_curve.png`` (validation
    accuracy against ``lam``) and, with ``--save-model FILE``, a model file
    for ``predict``. ``--pu-prior PI`` reads the labels as positive /
    unlabelled.
``cv DATA.csv``
    Cross-validation of ``lam`` along the tempering path, through the same
    estimator as ``fit --lam cv --method smc``; reports both rules, labelled:
    the ``lam`` of best mean validation AUC and the certified rule's
    (``fit``'s default, ``--cv-rule``); writes ``cv_curve.png`` (both
    marked), ``cv_curve.csv`` (mean, spread and per-fold AUC against
    ``gamma``) and ``summary.json``; prints the cross-validated AUC (mean
    and spread over the folds) at each rule's ``lam`` beside the logistic
    regression's on the same folds.

Options shared by several sub-commands come from parent parsers
(:func:`parent_parsers`, also used by the scripts): ``--seed``, ``--out``
(default ``results/COMMAND``), ``--progress`` (a tqdm bar on a terminal,
lines in logs; ``bar``, ``lines`` or ``off`` to force) and ``--quiet``
(``--progress off``); the sampler's ``--n-particles`` and ``--len-chain``;
the data file and how to read it (``--target``, ``--sep``, ``--no-header``,
``--features`` / ``--drop``, ``--positive-label``); the held-out
``--test-size``; ``--n-jobs``. Bad input (a missing file or column, a
missing or non-numeric value, one class, an out-of-range option, a class or
a ``--test-size`` that leaves a part of the held-out split without both
classes, an ``--out`` that cannot be written: these checked before any
fitting; a model file that is not one, or was changed) raises
:class:`~pac_particles.core.checks.InputError`, reported in one line with exit
code 2; warnings are one line each (``pac-particles: warning: ...``); any
other exception is a bug and keeps its traceback.

``--help`` and ``--version`` import nothing heavy: the parser
(:mod:`~pac_particles.apps.cli.parser`) is light, and each sub-command is a
module of this package, with numpy, scikit-learn, numba and particles,
imported when it runs (:data:`_LAZY`); so they answer at once.

Modules
-------
:mod:`~pac_particles.apps.cli.parser` (the options),
:mod:`~pac_particles.apps.cli.inputs` (the checks before a fit),
:mod:`~pac_particles.apps.cli.held_out` (the held-out split),
:mod:`~pac_particles.apps.cli.certificate_report` (the certificate as
reported), one module per sub-command
(:mod:`~pac_particles.apps.cli.demo_command`,
:mod:`~pac_particles.apps.cli.fit_command`,
:mod:`~pac_particles.apps.cli.predict_command`,
:mod:`~pac_particles.apps.cli.cv_command`,
:mod:`~pac_particles.apps.cli.classify_command`), each with the function
that prints its headline. Their public names are importable from here.

Example
-------
::

    pac-particles demo --dataset pima --out results/demo
    pac-particles fit data.csv --target y --method ep --lam cv --save-model model.json
    pac-particles predict model.json new.csv --id customer_id --out predictions.csv
    pac-particles cv data.csv --lam-max 5000 --folds 5
    pac-particles classify data.csv --method vb --loss hinge --save-model clf.json

References
----------
[RACL14] Ridgway, Alquier, Chopin & Liang (2014), PAC-Bayesian AUC
classification and scoring. The certificates are those of
:mod:`pac_particles.bounds`.
"""

import importlib
import os
import sys
import time
import warnings
from typing import TYPE_CHECKING

# the choices --help shows, here too: a test checks them (cli._LOSSES, ...)
# against the library's
from pac_particles.apps.cli.parser import (_AUC_METHODS, _CLASSIFIER_METHODS,
                                           _CV_RULES, _DATASETS, _DEPLOYS,
                                           _LOSSES, _PROGRESS_MODES, _csv_args,
                                           build_parser, parent_parsers,
                                           progress_argument)

if TYPE_CHECKING:  # the names of _LAZY, spelled out for linters and IDEs
    from pac_particles.apps.cli.certificate_report import (
        certificate_fields, certificate_sentence, test_set_fields)
    from pac_particles.apps.cli.classify_command import (classify_csv,
                                                         logistic_classifier,
                                                         print_classify)
    from pac_particles.apps.cli.cv_command import cv_csv, print_cv
    from pac_particles.apps.cli.demo_command import demo, print_demo
    from pac_particles.apps.cli.fit_command import fit_csv, print_fit
    from pac_particles.apps.cli.predict_command import (predict_csv,
                                                        print_predict)
    from pac_particles.sklearn.classifier import PACBayesClassifier
    from pac_particles.sklearn.estimator import PACBayesAUC
    from pac_particles.sklearn.selection import cv_lambda

__all__ = ["main", "demo", "fit_csv", "predict_csv", "classify_csv", "cv_csv",
           "logistic_classifier", "parent_parsers", "progress_argument",
           "build_parser", "certificate_fields", "certificate_sentence",
           "test_set_fields", "print_demo", "print_fit", "print_predict",
           "print_cv", "print_classify"]

_COMMANDS = "pac_particles.apps.cli."
#: names imported on first use (PEP 562): the sub-commands and what they
#: print, whose modules import numpy, scikit-learn, numba and particles, so
#: that ``--help`` and ``--version`` start in a fraction of a second
_LAZY = {
    "demo": (_COMMANDS + "demo_command", "demo"),
    "print_demo": (_COMMANDS + "demo_command", "print_demo"),
    "fit_csv": (_COMMANDS + "fit_command", "fit_csv"),
    "print_fit": (_COMMANDS + "fit_command", "print_fit"),
    "predict_csv": (_COMMANDS + "predict_command", "predict_csv"),
    "print_predict": (_COMMANDS + "predict_command", "print_predict"),
    "cv_csv": (_COMMANDS + "cv_command", "cv_csv"),
    "print_cv": (_COMMANDS + "cv_command", "print_cv"),
    "classify_csv": (_COMMANDS + "classify_command", "classify_csv"),
    "print_classify": (_COMMANDS + "classify_command", "print_classify"),
    "logistic_classifier": (_COMMANDS + "classify_command",
                            "logistic_classifier"),
    "certificate_fields": (_COMMANDS + "certificate_report",
                           "certificate_fields"),
    "certificate_sentence": (_COMMANDS + "certificate_report",
                             "certificate_sentence"),
    "test_set_fields": (_COMMANDS + "certificate_report", "test_set_fields"),
    # the estimators: the commands look them up here when they run, so that
    # cli.PACBayesAUC is the one name to replace them by (tests record fits)
    "PACBayesAUC": ("pac_particles.sklearn.estimator", "PACBayesAUC"),
    "PACBayesClassifier": ("pac_particles.sklearn.classifier",
                           "PACBayesClassifier"),
    # not used by the commands since cv runs the estimator; kept as
    # cli.cv_lambda
    "cv_lambda": ("pac_particles.sklearn.selection", "cv_lambda"),
}


def __getattr__(name):
    """``cli.demo``, ``cli.PACBayesAUC`` and the other names of
    :data:`_LAZY`, imported on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def _run(args):
    # the commands as the package holds them now: imported on first use,
    # or replaced beforehand (tests replace demo, print_demo, ...)
    cli = sys.modules[__name__]
    if args.command == "predict":
        summary = cli.predict_csv(args.model, args.data, out=args.out,
                                  sep=args.sep, header=args.header,
                                  ids=args.ids)
        cli.print_predict(summary,
                          sys.stderr if args.out == "-" else sys.stdout)
        return
    shared = dict(n_particles=args.n_particles, len_chain=args.len_chain,
                  seed=args.seed, out=args.out or f"results/{args.command}",
                  verbose=progress_argument(args))
    if args.command == "demo":
        start = time.perf_counter()
        cli.print_demo(cli.demo(dataset=args.dataset, lam=args.lam,
                                test_size=args.test_size, csv=args.csv,
                                target=args.target,
                                csv_options=_csv_args(args), **shared))
        print(f"  total {time.perf_counter() - start:.1f} s")
    elif args.command == "fit":
        cli.print_fit(cli.fit_csv(args.data, target=args.target,
                                  method=args.method, lam=args.lam,
                                  test_size=args.test_size,
                                  n_jobs=args.n_jobs, cv_rule=args.cv_rule,
                                  deploy=args.deploy,
                                  save_model_to=args.save_model,
                                  csv_options=_csv_args(args), **shared))
    elif args.command == "classify":
        cli.print_classify(cli.classify_csv(
            args.data, target=args.target, method=args.method,
            loss=args.loss, lam=args.lam, test_size=args.test_size,
            pu_prior=args.pu_prior, n_jobs=args.n_jobs, deploy=args.deploy,
            save_model_to=args.save_model, csv_options=_csv_args(args),
            **shared))
    else:
        cli.print_cv(cli.cv_csv(args.data, target=args.target,
                                lam_max=args.lam_max, folds=args.folds,
                                n_jobs=args.n_jobs,
                                csv_options=_csv_args(args), **shared))


def _one_line_warning(message, category, filename, lineno, file=None,
                      line=None):
    """Warnings of the command: one line on stderr, without the source
    location (which means nothing to a user)."""
    text = " ".join(str(message).split())
    print(f"pac-particles: warning: {text}", file=sys.stderr, flush=True)


def main(argv=None):
    """Run ``pac-particles`` with the arguments ``argv`` (default: the
    command line); returns 0, or exits with code 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # here, not at the top: core.checks imports numpy, which --help and
    # --version (parse_args exits on them) must not wait for
    from pac_particles.core.checks import InputError
    try:
        with warnings.catch_warnings():
            # constant columns etc. are reported once, on one line
            warnings.simplefilter("once")
            warnings.showwarning = _one_line_warning
            _run(args)
    except InputError as err:
        # bad input is the user's to fix: one line, no traceback; anything
        # else is a bug and propagates with its traceback
        message = " ".join(str(err).split())
        parser.exit(2, f"pac-particles: error: {message}\n")
    except BrokenPipeError:
        # "predict --out - | head": the reader stopped reading, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
