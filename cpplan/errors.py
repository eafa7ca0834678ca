"""The errors cpplan raises on purpose.

Every user-facing error is a :class:`CpplanError`; the CLI turns it into one line on stderr and
exit code 2. Anything else escaping a public function is a bug in cpplan.
"""

from __future__ import annotations

from typing import Any


class CpplanError(Exception):
    """Base of every error cpplan raises on purpose."""


class ProblemError(CpplanError, ValueError):
    """Bad input: names where it is (buffer, pool, file line) and which field is wrong.

    The message reads ``<where>: <field>: <what is wrong>``, for example
    ``buffer 'conv1': size: must be >= 0, got -3`` or
    ``model.csv line 4: size: not an integer: 'x'``.
    """

    def __init__(
        self,
        message: str,
        *,
        buffer: str | None = None,
        pool: str | None = None,
        field: str | None = None,
        source: str | None = None,
        line: int | None = None,
    ) -> None:
        self.buffer = buffer
        self.pool = pool
        self.field = field
        self.source = source
        self.line = line
        self.reason = message
        super().__init__(self._render())

    def _render(self) -> str:
        where: list[str] = []
        if self.source is not None or self.line is not None:
            place = self.source or "input"
            if self.line is not None:
                place += f" line {self.line}"
            where.append(place)
        if self.buffer is not None:
            where.append(f"buffer {self.buffer!r}")
        if self.pool is not None:
            where.append(f"pool {self.pool!r}")
        head = ", ".join(where)
        parts = [p for p in (head, self.field, self.reason) if p]
        return ": ".join(parts)

    def located(self, *, source: str | None = None, line: int | None = None) -> ProblemError:
        """The same error with a file and line attached (used by the readers)."""
        return ProblemError(
            self.reason,
            buffer=self.buffer,
            pool=self.pool,
            field=self.field,
            source=source if source is not None else self.source,
            line=line if line is not None else self.line,
        )


class FormatError(ProblemError):
    """A file that cannot be read as the format it claims to be."""


def missing_extra(what: str, package: str, extra: str) -> CpplanError:
    """The error for a feature whose optional dependency is not installed, with the install
    command the README uses (from a clone) and the plain one."""
    return CpplanError(f"{what} needs the {package} package: pip install \".[{extra}]\" in "
                       f"cpplan's folder (or pip install {package})")


class CapacityError(CpplanError):
    """A planner could not place a buffer within the capacity of any of its candidate pools."""


class PlanError(CpplanError):
    """A plan that does not fit its problem (raised where a valid plan is required)."""

    def __init__(self, message: str, violations: list[Any] | None = None) -> None:
        self.violations = violations or []
        super().__init__(message)
