"""What every command line of the project shares: bad input is one line of the project's own on
stderr, naming the option and the constraint, and exit code 2 (argparse prints its usage too)."""

from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad option is one line and exit code 2 (argparse prints its usage too)."""

    def error(self, message):
        refuse(self.prog, message)


def refuse(prog: str, message: str) -> None:
    """One line `<prog>: <message>` on stderr, and exit code 2."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(2)


def fraction(text: str) -> float:
    """A number strictly between 0 and 1 (a relative threshold such as 0.02 for 2 %)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} must lie strictly between 0 and 1 (0.02 is 2 %)")
    return value


def positive(kind):
    """A type for argparse: `kind` (int or float), more than 0."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'a whole number' if kind is int else 'a number'}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be more than 0")
        return value

    parse.__name__ = kind.__name__
    return parse
