"""What every command shares: one line and exit 2 for every user error (:func:`user_errors`),
the click group :data:`main` that says usage errors in one line too, the checks of numeric
options, and ``--memory`` for the commands that read a problem.

The handler of Ctrl-C is installed here, before anything heavy is imported, so that a Ctrl-C at
start-up is one line too.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from types import FrameType

_interrupted = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: remember it (an interrupt inside a compiled module's import surfaces as an
    ImportError), then interrupt as Python does."""
    global _interrupted
    _interrupted = True
    signal.default_int_handler(signum, frame)


# Installed before anything heavy is imported, so that a Ctrl-C at start-up is one line too.
if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, _on_sigint)
try:
    import functools
    import os
    import time
    from collections.abc import Callable
    from typing import Any, NoReturn

    import click

    from ..errors import CpplanError
except KeyboardInterrupt:
    sys.stderr.write("cpplan: interrupted\n")
    sys.exit(130)

EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Say ``message`` in one line on stderr and exit with ``code``."""
    click.echo(f"cpplan: error: {message}", err=True)
    sys.exit(code)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn cpplan's errors (and unreadable/unwritable files) into one line and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CpplanError as e:
            fail(str(e))
        except BrokenPipeError:
            # The reader went away (`cpplan info X | head -1`): stop quietly, like Unix tools.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            fail(f"{where}{e.strerror or e}")
        except MemoryError:
            fail("out of memory")
        except RecursionError:
            fail("input nested too deeply")
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception:
            # Ctrl-C inside a compiled module's import surfaces as its ImportError.
            if _interrupted:
                fail("interrupted", 130)
            raise

    return wrapper


def seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A time limit: a finite number of seconds, at least 0."""
    from ..deadline import check_time_limit

    try:
        return check_time_limit(value, "")
    except CpplanError:
        raise click.BadParameter(f"must be a finite number of seconds >= 0, got {value}") \
            from None


def optional_seconds(ctx: click.Context, param: click.Parameter,
                     value: float | None) -> float | None:
    return None if value is None else seconds(ctx, param, value)


def at_least(low: int) -> Callable[[click.Context, click.Parameter, int], int]:
    def callback(ctx: click.Context, param: click.Parameter, value: int) -> int:
        if value is not None and value < low:
            raise click.BadParameter(f"must be at least {low}, got {value}")
        return value

    return callback


class _OneLineError(click.ClickException):
    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"cpplan: error: {self.format_message()}", err=True)


_started = time.perf_counter()
_from_process_start = False


def elapsed() -> float:
    """Seconds since the running command was invoked (a time limit counts from there): from
    the process's start for the ``cpplan`` command (:func:`count_from_process_start`)."""
    return time.perf_counter() - _started


def count_from_process_start() -> None:
    """Count this process's commands' time from the process's start, where the system says
    when that was: the interpreter's start-up and the imports before the command runs are
    part of what a user's clock measures against ``--time-limit``. (Not for commands invoked
    later in a long-lived process: a test's, a notebook's.)"""
    global _from_process_start
    _from_process_start = True


def _process_age() -> float:
    """Seconds since this process began: Linux's ``/proc/self/stat`` (its start, in clock ticks
    since boot) against ``/proc/uptime``; 0 where the system does not say."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:  # (its name may hold spaces)
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class _Group(click.Group):
    """click prints a usage error (missing argument, a directory given for a file, ...) as
    four lines; cpplan's rule is one line for every user error, so say it in one. It also
    starts the command's clock (:func:`elapsed`)."""

    def invoke(self, ctx: click.Context) -> Any:
        global _started
        _started = time.perf_counter() - (_process_age() if _from_process_start else 0.0)
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            message = " ".join(e.format_message().splitlines())
            raise _OneLineError(message + hint) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cpplan")
def main() -> None:
    """Plan the memory of programs with a fixed schedule, and prove how good the plan is."""


def memory_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--memory NAME[:CAPACITY[:TRAFFIC_COST]]`` (repeatable), for every command that reads a
    problem: its buffers may then go to any of the memories (cpplan.memories)."""
    return click.option(
        "--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
        help="A memory of the device, fastest first (repeatable): the problem's buffers may go "
             "to any of them, and what they move costs TRAFFIC_COST a byte (e.g. --memory "
             "sram:256KiB:1 --memory dram::4).")(fn)


def read_problem_with(path: str, memories: tuple[str, ...] = ()) -> Any:
    """The problem in ``path``, with ``memories`` (``--memory``) as its pools when given.

    A command owns its process, and a problem is tens of thousands of small objects made at
    once, holding no reference cycles: they are made with the cyclic garbage collector paused,
    then frozen out of its reach (:func:`gc.freeze`), so that no later collection walks them
    all again (while reading, and again while the plan is built and checked: a share of a
    short time limit on a large problem)."""
    from ..io import read_problem

    gc.disable()
    try:
        problem = read_problem(path)
        if memories:
            from ..memories import parse_memory, with_memories

            problem = with_memories(problem, [parse_memory(m) for m in memories])
    finally:
        gc.enable()
    gc.freeze()
    return problem


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 planner", "3 instances"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
