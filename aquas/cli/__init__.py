"""The ``aquas`` command line: the click group, its error boundary, and the commands.

Every command lives in a module of this package (``basic``: check, lower, opt, exec;
``synth``, ``match``, ``sim``, ``run``, ``model``).  The library rooms (``dialects/``, ``synth/``,
``egraph/``) never import this package; it imports them.

Every exception a command raises ends at :meth:`AquasGroup.invoke`: user errors print as
``file:line:col: error: ...`` and exit 2, internal errors exit 1 with a bug-report hint,
Ctrl-C exits 130; no traceback unless ``--debug`` is given.
"""

from __future__ import annotations

from typing import Any

import click

from aquas.cli.common import (  # re-exported: tests and tools import them from here
    err,
    is_debug,
    load_module,
    make_context,
    out,
    print_ir,
    report_exception,
    write_atomic,
)

__all__ = ["err", "load_module", "main", "make_context", "out", "print_ir", "write_atomic"]


class AquasGroup(click.Group):
    """A click group whose ``invoke`` is the CLI's one error boundary."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except SystemExit:
            raise
        except BaseException as e:  # xDSL raises some errors as BaseException subclasses
            ctx.exit(report_exception(e, is_debug()))


@click.group(cls=AquasGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.version_option(package_name="aquas")
def main(debug: bool) -> None:
    """aquas: RISC-V custom instruction (ISAX) co-design compiler.

    Exit status: 0 on success, 2 for errors in the input (printed as diagnostics),
    1 for internal errors (a bug: please report it), 130 when interrupted.
    """


def _register() -> None:
    from aquas.cli import basic, match, model, run, sim, synth

    for cmd in (
        basic.check,
        basic.lower,
        basic.opt,
        basic.exec_,
        sim.sim,
        synth.synth,
        match.match,
        run.run,
        model.model,
    ):
        main.add_command(cmd)


_register()
