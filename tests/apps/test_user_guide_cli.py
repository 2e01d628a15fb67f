"""The user guide's command-line section agrees with ``--help``: every
option of every sub-command is documented there, and every option its
tables list exists, with the choices and the default argparse gives it."""

import argparse
import re
from pathlib import Path

import pytest

from pac_particles.apps.cli.parser import build_parser

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "user_guide.md"
         ).read_text()
CLI = GUIDE[GUIDE.index("## Command line"):]
CLI = CLI[:CLI.index("\n## ", 1)]

#: a table row of an option: its name, optional {choices}, its default
_ROW = re.compile(r"^\| `(--[\w-]+)(?: \{([\w,]+)\})?[^`]*` \| ([^|]*) \|",
                  re.M)


def _subparsers():
    """``{command: {option: action}}`` of the parser."""
    parser = build_parser()
    sub = next(a for a in parser._actions
               if isinstance(a, argparse._SubParsersAction))
    return {name: {opt: action for action in p._actions
                   for opt in action.option_strings
                   if opt.startswith("--") and opt != "--help"}
            for name, p in sub.choices.items()}


def _documented_rows():
    """``(section command or None, option, choices, default)`` of every
    option row of the section's tables; the command is that of the
    sub-section (``### `fit DATA.csv` ``), None for the shared tables."""
    rows = []
    parts = re.split(r"^### ", CLI, flags=re.M)
    for part in parts[1:]:
        title = part.splitlines()[0]
        match = re.match(r"`(\w+)[ `]", title)
        command = match.group(1) if match else None
        for option, choices, default in _ROW.findall(part):
            rows.append((command, option,
                         set(choices.split(",")) if choices else None,
                         default.strip().strip("`")))
    return rows


def _same_default(doc, value):
    """Whether the table's default ``doc`` says argparse's ``value`` (a
    description, for a default computed at run time, passes)."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, (int, float)):
        try:
            return float(doc) == value
        except ValueError:
            return False
    return doc == str(value)


def test_the_tables_find_the_options():
    rows = _documented_rows()
    assert len(rows) >= 20
    assert ("fit", "--method", {"auto", "smc", "ep", "vb"}, "auto") in rows


@pytest.mark.parametrize("row", _documented_rows(),
                         ids=lambda r: f"{r[0]} {r[1]}")
def test_each_documented_option_has_the_parsers_choices_and_default(row):
    command, option, choices, default = row
    parsers = _subparsers()
    # a shared table's row speaks for the commands whose own table does
    # not list the option again
    own = {(c, o) for c, o, _, _ in _documented_rows() if c is not None}
    actions = ([parsers[command][option]] if command is not None
               and option in parsers[command] else
               [p[option] for name, p in parsers.items()
                if option in p and (name, option) not in own])
    assert actions, f"the guide lists {option} for {command or 'all'}; " \
                    "--help has no such option"
    for action in actions:
        if choices is not None:
            assert choices == set(action.choices), (option, action.choices)
        assert _same_default(default, action.default), (
            f"{option}: the guide says {default!r}, --help "
            f"{action.default!r}")


def test_every_option_of_every_command_is_in_the_guide():
    missing = [f"{command} {option}"
               for command, options in _subparsers().items()
               for option in options if f"`{option}" not in CLI]
    assert not missing, missing
