"""MiniMalloc's own test suite, as cases cpplan must agree with (data written for cpplan).

MiniMalloc (google/minimalloc, Apache-2.0) tests its solver, validator, buffers and CSV reader in
``tests/solver_test.cc``, ``tests/validator_test.cc``, ``tests/minimalloc_test.cc`` (the buffer
tests), ``tests/converter_test.cc`` and, for its Python package, ``python/tests/test_solver.py``,
``test_validator.py``, ``test_minimalloc.py``, ``test_converter.py`` and ``test_cli.py``. Each
case below restates one of those tests' inputs and expected verdict in MiniMalloc's CSV (the
format both tools read), with the files and test names it comes from in ``cites``. The problems
are MiniMalloc's; the expectations are MiniMalloc's verdicts; nothing here is its code.

Buffer ids are ``b0, b1, ...`` in MiniMalloc's order (its C++ tests leave ids empty and index
buffers by position). Cases whose buffers have MiniMalloc's ``gaps`` are marked ``gaps=True``:
cpplan refuses gaps until the engine issue (14) brings them, and those tests are expected to
fail until then (``xfail(strict=True)``: they flip to errors the day gaps land, to be unmarked).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SolverCase", "ValidatorCase", "OverlapCase", "ReadCase", "WriteCase", "SOLVER",
           "VALIDATOR", "OVERLAP", "READ", "WRITE", "CLI_INPUT", "all_cases"]

CPP_SOLVER = "tests/solver_test.cc"
PY_SOLVER = "python/tests/test_solver.py"
CPP_VALIDATOR = "tests/validator_test.cc"
PY_VALIDATOR = "python/tests/test_validator.py"
CPP_BUFFER = "tests/minimalloc_test.cc"
PY_BUFFER = "python/tests/test_minimalloc.py"
CPP_CONVERTER = "tests/converter_test.cc"
PY_CONVERTER = "python/tests/test_converter.py"
PY_CLI = "python/tests/test_cli.py"


def _csv(rows: list[tuple], columns: str = "id,lower,upper,size") -> str:
    """A MiniMalloc CSV: ids ``b0, b1, ...`` followed by the row's cells."""
    return columns + "\n" + "".join(
        ",".join([f"b{i}", *("" if c is None else str(c) for c in row)]) + "\n"
        for i, row in enumerate(rows))


# -- the solver: does the problem fit in the capacity? --------------------------------------------

@dataclass(frozen=True)
class SolverCase:
    name: str
    cites: tuple[str, ...]
    csv: str
    capacity: int
    fits: bool
    gaps: bool = False
    fixed: dict | None = None  # offsets the plan must keep (checked on top of the verdict)
    conflict: tuple[str, ...] | None = None  # MiniMalloc's irreducible infeasible subset


SOLVER = (
    SolverCase("buffer too big", (f"{CPP_SOLVER} InfeasibleBufferTooBig",
                                  f"{PY_SOLVER} test_buffer_too_big"),
               _csv([(0, 2, 3)]), 2, False),
    SolverCase("trivial conflict", (f"{CPP_SOLVER} InfeasibleTrivial",
                                    f"{CPP_SOLVER} CountsBacktracks",
                                    f"{PY_SOLVER} test_trivial_conflict",
                                    f"{PY_SOLVER} test_counts_backtracks_correctly"),
               _csv([(0, 2, 2), (0, 2, 2)]), 3, False),
    SolverCase("tricky conflict", (f"{CPP_SOLVER} InfeasibleTricky",
                                   f"{PY_SOLVER} test_complex_conflict"),
               _csv([(0, 1, 3), (0, 3, 1), (4, 5, 3), (2, 5, 1), (1, 2, 2), (3, 4, 2),
                     (1, 4, 1)]), 4, False),
    SolverCase("fixed buffer conflict", (f"{PY_SOLVER} test_fixed_buffer_conflict",),
               _csv([(1, 2, 1, 0), (0, 2, 1, None), (2, 3, 2, None), (1, 3, 1, None),
                     (0, 1, 2, None)], "id,lower,upper,size,offset"), 3, False),
    SolverCase("empty problem", (f"{PY_SOLVER} test_empty_problem",), "id,lower,upper,size\n", 0,
               True),
    SolverCase("single buffer", (f"{CPP_SOLVER} SingleBuffer", f"{PY_SOLVER} test_single_buffer"),
               _csv([(0, 2, 2)]), 2, True),
    SolverCase("two buffers", (f"{CPP_SOLVER} TwoBuffers",
                               f"{PY_SOLVER} test_two_overlapping_buffers"),
               _csv([(0, 2, 2), (1, 3, 2)]), 4, True),
    SolverCase("five buffers", (f"{CPP_SOLVER} FiveBuffers",
                                f"{PY_SOLVER} test_five_buffers_tight_fit"),
               _csv([(1, 2, 1), (0, 2, 1), (2, 3, 2), (1, 3, 1), (0, 1, 2)]), 3, True),
    SolverCase("fixed buffer feasible", (f"{PY_SOLVER} test_fixed_buffer_feasible",),
               _csv([(1, 2, 1, None), (0, 2, 1, None), (2, 3, 2, 1), (1, 3, 1, None),
                     (0, 1, 2, None)], "id,lower,upper,size,offset"), 3, True,
               fixed={"b2": 1}),
    SolverCase("two partitions", (f"{CPP_SOLVER} TwoPartitions",
                                  f"{PY_SOLVER} test_two_partitions"),
               _csv([(0, 2, 2), (1, 3, 2), (3, 5, 2), (4, 6, 2)]), 4, True),
    SolverCase("even alignment", (f"{CPP_SOLVER} EvenAlignment",
                                  f"{PY_SOLVER} test_alignment_constraints"),
               _csv([(0, 2, 1, 2), (0, 2, 1, 2)], "id,lower,upper,size,alignment"), 4, True),
    SolverCase("reduces backtracks", (f"{CPP_SOLVER} ReducesBacktracks",
                                      f"{PY_SOLVER} test_optimization_reduces_backtracks"),
               _csv([(2, 3, 2), (0, 1, 2), (1, 2, 1), (0, 2, 1), (1, 3, 1)]), 3, True),
    SolverCase("irreducible infeasible subset",
               (f"{CPP_SOLVER} ComputeIrreducibleInfeasibleSubset",
                f"{PY_SOLVER} test_compute_iis"),
               _csv([(0, 2, 2), (0, 2, 2), (2, 5, 2), (3, 6, 2), (4, 7, 2)]), 4, False,
               conflict=("b2", "b3", "b4")),
    SolverCase("every offset fixed", (f"{CPP_BUFFER} ProblemTest.StripSolutionOk",
                                      f"{PY_BUFFER} test_problem_strip_solution_ok"),
               # MiniMalloc's test states capacity 5, which its strip_solution ignores; b1 ends
               # at 7, so its solver says "does not fit" at 5 and cpplan refuses that input
               # (README, MiniMalloc section). At 7 both keep exactly these offsets.
               _csv([(0, 1, 2, 3), (1, 2, 3, 4)], "id,lower,upper,size,offset"), 7, True,
               fixed={"b0": 3, "b1": 4}),
    SolverCase("buffers with gaps", (f"{CPP_SOLVER} BuffersWithGaps",
                                     f"{PY_SOLVER} test_simple_temporal_gap"),
               _csv([(0, 4, 2, "1-3"), (1, 3, 2, "")], "id,lower,upper,size,gaps"), 2, True,
               gaps=True),
    SolverCase("tetris", (f"{CPP_SOLVER} Tetris", f"{PY_SOLVER} test_tetris_spatial_gaps"),
               _csv([(0, 10, 2, "0-5@0:1"), (0, 10, 2, "5-10@1:2")], "id,lower,upper,size,gaps"),
               3, True, gaps=True),
    SolverCase("stairs", (f"{PY_SOLVER} test_complex_stairs_pattern",),
               _csv([(0, 108, 30, "36-72@10:30 72-108@20:30"),
                     (36, 144, 50, "36-72@20:30 72-108@10:40"),
                     (84, 144, 42, "114-129@0:28 129-144@0:14"),
                     (84, 129, 42, "99-114@14:42 114-129@28:42"),
                     (99, 144, 70, "99-114@28:42 114-129@14:56"),
                     (0, 144, 30, "72-108@0:20 108-144@0:10")], "id,lower,upper,size,gaps"),
               144, True, gaps=True),
)


# -- the validator: is this solution a valid plan? ------------------------------------------------

@dataclass(frozen=True)
class ValidatorCase:
    """``offsets`` in buffer order (MiniMalloc's Solution), ``height`` the stated height.

    ``kind``: ``None`` when MiniMalloc says the solution is good, else the violation cpplan must
    report for MiniMalloc's verdict (BAD_SOLUTION: a buffer is missing; BAD_FIXED: fixed;
    BAD_OFFSET: a negative offset is no valid offset, one beyond the capacity breaks it;
    BAD_OVERLAP: overlap; BAD_ALIGNMENT: alignment; BAD_HEIGHT: height).
    """

    name: str
    cites: tuple[str, ...]
    csv: str
    capacity: int
    offsets: tuple[int, ...]
    height: int
    kind: str | None
    gaps: bool = False


_THREE = _csv([(0, 1, 2), (1, 2, 1), (1, 2, 1)])
_THREE_FIXED = _csv([(0, 1, 2, None), (1, 2, 1, None), (1, 2, 1, 0)], "id,lower,upper,size,offset")

VALIDATOR = (
    ValidatorCase("good solution", (f"{CPP_VALIDATOR} ValidatesGoodSolution",
                                    f"{PY_VALIDATOR} test_validates_good_solution"),
                  _csv([(0, 1, 2), (1, 3, 1), (2, 4, 1), (3, 5, 1)]), 2, (0, 0, 1, 0), 2, None),
    ValidatorCase("wrong number of offsets", (f"{CPP_VALIDATOR} InvalidatesBadSolution",
                                              f"{PY_VALIDATOR} test_invalidates_bad_solution"),
                  _THREE, 2, (0, 0), 2, "missing"),
    ValidatorCase("fixed buffer moved", (f"{CPP_VALIDATOR} InvalidatesFixedBuffer",
                                         f"{PY_VALIDATOR} test_invalidates_fixed_buffer"),
                  _THREE_FIXED, 2, (0, 0, 1), 2, "fixed"),
    ValidatorCase("negative offset", (f"{CPP_VALIDATOR} InvalidatesNegativeOffset",
                                      f"{PY_VALIDATOR} test_invalidates_negative_offset"),
                  _THREE, 2, (0, 0, -1), 2, "alignment"),
    ValidatorCase("offset beyond the capacity", (f"{CPP_VALIDATOR} InvalidatesOutOfRangeOffset",
                                                 f"{PY_VALIDATOR} "
                                                 "test_invalidates_out_of_range_offset"),
                  _THREE, 2, (0, 0, 2), 2, "capacity"),
    ValidatorCase("stated height too small", (f"{CPP_VALIDATOR} InvalidatesOutOfHeightRangeOffset",
                                              f"{PY_VALIDATOR} "
                                              "test_invalidates_out_of_height_range_offset"),
                  _THREE, 3, (0, 0, 2), 2, "height"),
    ValidatorCase("stated height too large", (f"{CPP_VALIDATOR} InvalidatesWithExtraHeight",
                                              f"{PY_VALIDATOR} test_invalidates_with_extra_height"),
                  _THREE, 4, (0, 0, 2), 4, "height"),
    ValidatorCase("overlap", (f"{CPP_VALIDATOR} InvalidatesOverlap",
                              f"{PY_VALIDATOR} test_invalidates_overlap"),
                  _THREE, 2, (0, 0, 0), 2, "overlap"),
    ValidatorCase("misalignment", (f"{CPP_VALIDATOR} InvalidatesMisalignment",
                                   f"{PY_VALIDATOR} test_invalidates_misalignment"),
                  _csv([(0, 1, 2, 1), (1, 2, 1, 2)], "id,lower,upper,size,alignment"), 2, (0, 1), 2,
                  "alignment"),
    ValidatorCase("good solution with gaps", (f"{CPP_VALIDATOR} ValidatesGoodSolutionWithGaps",
                                              f"{PY_VALIDATOR} "
                                              "test_validates_good_solution_with_gaps"),
                  _csv([(0, 10, 2, "1-9"), (5, 15, 2, "6-14")], "id,lower,upper,size,gaps"), 2,
                  (0, 0), 2, None, gaps=True),
    ValidatorCase("good solution with gaps, edge case",
                  (f"{CPP_VALIDATOR} ValidatesGoodSolutionWithGapsEdgeCase",
                   f"{PY_VALIDATOR} test_validates_good_solution_with_gaps_edge_case"),
                  _csv([(0, 10, 2, "1-8"), (5, 15, 2, "8-14")], "id,lower,upper,size,gaps"), 2,
                  (0, 0), 2, None, gaps=True),
    ValidatorCase("tetris", (f"{CPP_VALIDATOR} ValidatesTetris",
                             f"{PY_VALIDATOR} test_validates_tetris"),
                  _csv([(0, 10, 2, "0-5@0:1"), (0, 10, 2, "5-10@1:2")], "id,lower,upper,size,gaps"),
                  3, (0, 1), 3, None, gaps=True),
    ValidatorCase("stairs", (f"{PY_VALIDATOR} test_validates_stairs",), SOLVER[-1].csv, 144,
                  (30, 10, 60, 102, 74, 0), 144, None, gaps=True),
    ValidatorCase("gaps that overlap", (f"{CPP_VALIDATOR} InvalidatesGapOverlap",
                                        f"{PY_VALIDATOR} test_invalidates_gap_overlap"),
                  _csv([(0, 10, 2, "1-7"), (5, 15, 2, "8-14")], "id,lower,upper,size,gaps"), 2,
                  (0, 0), 2, "overlap", gaps=True),
)


# -- buffers: when do two buffers compete for bytes? ----------------------------------------------

@dataclass(frozen=True)
class OverlapCase:
    """MiniMalloc's ``a.effective_size(b)``: ``None`` when the two never compete for bytes (both
    may sit at offset 0), else how far above ``a`` buffer ``b`` must start if it sits above."""

    name: str
    cites: tuple[str, ...]
    csv: str  # buffers a (b0) and b (b1)
    effective_size: int | None
    gaps: bool = False


OVERLAP = (
    OverlapCase("with overlap", (f"{CPP_BUFFER} BufferTest.EffectiveSizeWithOverlap",
                                 f"{PY_BUFFER} test_buffer_effective_size_with_overlap"),
                _csv([(0, 2, 4), (1, 3, 5)]), 4),
    OverlapCase("without overlap", (f"{CPP_BUFFER} BufferTest.EffectiveSizeWithoutOverlap",
                                    f"{PY_BUFFER} test_buffer_effective_size_without_overlap"),
                _csv([(0, 2, 4), (3, 5, 5)]), None),
    OverlapCase("without overlap, edge case",
                (f"{CPP_BUFFER} BufferTest.EffectiveSizeWithoutOverlapEdgeCase",
                 f"{PY_BUFFER} test_buffer_effective_size_without_overlap_edge_case"),
                _csv([(0, 2, 4), (2, 4, 5)]), None),
    OverlapCase("gaps with overlap", (f"{CPP_BUFFER} BufferTest.EffectiveSizeGapsWithOverlap",
                                      f"{PY_BUFFER} test_buffer_effective_size_gaps_with_overlap"),
                _csv([(0, 10, 4, "1-4 6-9"), (5, 15, 5, "6-9 11-14")], "id,lower,upper,size,gaps"),
                4, gaps=True),
    OverlapCase("gaps without overlap",
                (f"{CPP_BUFFER} BufferTest.EffectiveSizeGapsWithoutOverlap",
                 f"{PY_BUFFER} test_buffer_effective_size_gaps_without_overlap"),
                _csv([(0, 10, 4, "1-9"), (5, 15, 5, "6-14")], "id,lower,upper,size,gaps"), None,
                gaps=True),
    OverlapCase("gaps without overlap, edge case first",
                (f"{CPP_BUFFER} BufferTest.EffectiveSizeGapsWithoutOverlapEdgeCaseFirst",
                 f"{PY_BUFFER} test_buffer_effective_size_gaps_without_overlap_edge_case_first"),
                _csv([(0, 10, 4, ""), (5, 15, 5, "5-10")], "id,lower,upper,size,gaps"), None,
                gaps=True),
    OverlapCase("gaps without overlap, edge case second",
                (f"{CPP_BUFFER} BufferTest.EffectiveSizeGapsWithoutOverlapEdgeCaseSecond",
                 f"{PY_BUFFER} test_buffer_effective_size_gaps_without_overlap_edge_case_second"),
                _csv([(0, 10, 4, "5-10"), (5, 15, 5, "")], "id,lower,upper,size,gaps"), None,
                gaps=True),
    OverlapCase("tetris", (f"{PY_BUFFER} test_buffer_effective_size_tetris",),
                _csv([(0, 10, 2, "0-5@0:1"), (0, 10, 2, "5-10@1:2")], "id,lower,upper,size,gaps"),
                1, gaps=True),
    OverlapCase("stairs", (f"{PY_BUFFER} test_buffer_effective_size_stairs",),
                _csv([(0, 15, 3, "0-5@0:1 5-10@0:2"), (0, 15, 3, "5-10@1:3 10-15@2:3")],
                     "id,lower,upper,size,gaps"), 1, gaps=True),
)


# -- reading CSV ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReadCase:
    """``buffers``: (id, start, end, size, alignment, fixed offset, hint) per buffer as MiniMalloc
    reads the text, or ``None`` when MiniMalloc refuses it (then ``field`` is the field cpplan's
    error must name). ``plan``: the text is read as a solution (every buffer needs an offset)."""

    name: str
    cites: tuple[str, ...]
    text: str
    buffers: tuple[tuple, ...] | None
    field: str | None = None
    gaps: bool = False
    plan: bool = False


_TWO = (("1", 6, 12, 18, 1, None, None), ("0", 5, 10, 15, 1, None, None))
_TWO_ALIGNED = (("1", 6, 12, 18, 2, None, None), ("0", 5, 10, 15, 1, None, None))

READ = (
    ReadCase("problem only", (f"{CPP_CONVERTER} FromCsvProblemOnly",
                              f"{PY_CONVERTER} test_from_csv_problem_only"),
             "lower,size,id,upper\n6,18,1,12\n5,15,0,10\n", _TWO),
    ReadCase("inclusive end column", (f"{CPP_CONVERTER} FromCsvProblemOnly (an earlier version: "
                                      "start,size,buffer,end)",),
             "start,size,buffer,end\n6,18,1,11\n5,15,0,9\n", _TWO),
    ReadCase("alignment", (f"{CPP_CONVERTER} FromCsvWithAlignment",
                           f"{PY_CONVERTER} test_from_csv_with_alignment"),
             "begin,size,buffer,upper,alignment\n6,18,1,12,2\n5,15,0,10,1\n", _TWO_ALIGNED),
    ReadCase("hints", (f"{PY_CONVERTER} test_from_csv_with_hints",),
             "begin,size,buffer,upper,alignment,hint\n6,18,1,12,2,0\n5,15,0,10,1,-1\n",
             (("1", 6, 12, 18, 2, None, 0), ("0", 5, 10, 15, 1, None, None))),
    ReadCase("empty gaps", (f"{CPP_CONVERTER} FromCsvWithEmptyGaps",
                            f"{PY_CONVERTER} test_from_csv_with_empty_gaps"),
             "start,size,buffer_id,upper,alignment,gaps\n6,18,1,12,2,\n5,15,0,10,1,\n",
             _TWO_ALIGNED),
    ReadCase("solution offsets", (f"{CPP_CONVERTER} FromCsvWithSolution",
                                  f"{PY_CONVERTER} test_from_csv_with_solution"),
             "start,size,offset,buffer,upper\n6,18,21,1,12\n5,15,1,0,10\n",
             (("1", 6, 12, 18, 1, 21, None), ("0", 5, 10, 15, 1, 1, None))),
    ReadCase("buffer_id column", (f"{CPP_CONVERTER} FromCsvBufferId",
                                  f"{PY_CONVERTER} test_from_csv_buffer_id"),
             "start,size,buffer_id,upper\n6,18,1,12\n5,15,0,10\n", _TWO),
    ReadCase("weird ids", (f"{CPP_CONVERTER} FromCsvWeirdIDs",
                           f"{PY_CONVERTER} test_from_csv_weird_ids"),
             "start,size,buffer,upper\n6,18,20,12\n5,15,10,10\n",
             (("20", 6, 12, 18, 1, None, None), ("10", 5, 10, 15, 1, None, None))),
    ReadCase("string ids", (f"{CPP_CONVERTER} FromCsvStringIDs",
                            f"{PY_CONVERTER} test_from_csv_string_ids"),
             "start,size,buffer,upper\n6,18,Big,12\n5,15,Little,10\n",
             (("Big", 6, 12, 18, 1, None, None), ("Little", 5, 10, 15, 1, None, None))),
    ReadCase("bogus inputs", (f"{CPP_CONVERTER} BogusInputs",
                              f"{PY_CONVERTER} test_from_csv_bogus_inputs"),
             "start,size,buffer,upper\na,b,c,d\ne,f,g,h\n", None, "lower"),
    ReadCase("bogus offsets", (f"{CPP_CONVERTER} BogusOffsets",
                               f"{PY_CONVERTER} test_from_csv_bogus_offsets"),
             "start,size,offset,buffer,upper\n6,18,a,1,12\n5,15,b,0,10\n", None, "offset"),
    ReadCase("bogus gaps", (f"{CPP_CONVERTER} BogusGaps",
                            f"{PY_CONVERTER} test_from_csv_bogus_gaps"),
             "start,size,buffer,upper,gaps\n6,18,1,12,1-2-3\n5,15,0,10,\n", None, "gaps"),
    ReadCase("more bogus gaps", (f"{CPP_CONVERTER} MoreBogusGaps",
                                 f"{PY_CONVERTER} test_from_csv_more_bogus_gaps"),
             "start,size,buffer,upper,gaps\n6,18,1,12,A-B\n5,15,0,10,\n", None, "gaps"),
    ReadCase("missing column", (f"{CPP_CONVERTER} MissingColumn",
                                f"{PY_CONVERTER} test_from_csv_missing_column"),
             "start,size,upper\n6,18,1,12\n5,15,10\n", None, "header"),
    ReadCase("duplicate column", (f"{CPP_CONVERTER} DuplicateColumn",
                                  f"{PY_CONVERTER} test_from_csv_duplicate_column"),
             "start,size,offset,buffer,upper,upper\n6,18,21,1,12\n5,15,1,0,10\n", None, "header"),
    ReadCase("extra fields", (f"{CPP_CONVERTER} ExtraFields",
                              f"{PY_CONVERTER} test_from_csv_extra_fields"),
             "start,size,offset,buffer,upper\n6,18,21,1,12\n5,15,1,0,10,100\n", None, "fields"),
    ReadCase("gaps", (f"{CPP_CONVERTER} FromCsvWithGaps",
                      f"{PY_CONVERTER} test_from_csv_with_gaps"),
             "start,size,buffer,upper,alignment,gaps\n6,18,1,12,2,7-9 \n5,15,0,10,1,9-11 12-14\n",
             _TWO_ALIGNED, gaps=True),
    ReadCase("gaps with an end column", (f"{CPP_CONVERTER} FromCsvWithEndColumn",
                                         f"{PY_CONVERTER} test_from_csv_with_end_column"),
             "start,size,buffer,end,alignment,gaps\n6,18,1,11,2,7-8 \n5,15,0,9,1,9-10 12-13\n",
             _TWO_ALIGNED, gaps=True),
    ReadCase("a solution with an offset missing",
             (f"{CPP_BUFFER} ProblemTest.StripSolutionNotFound",
              f"{PY_BUFFER} test_problem_strip_solution_not_found"),
             "id,lower,upper,size,offset\nb0,0,1,2,3\nb1,1,2,3,\n", None, "offset", plan=True),
)


# -- writing CSV ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class WriteCase:
    """The problem (or, with an ``offset`` column, the plan) in ``text``, written back by cpplan,
    must be ``text`` again (MiniMalloc's ToCsv)."""

    name: str
    cites: tuple[str, ...]
    text: str
    gaps: bool = False


WRITE = (
    WriteCase("without gaps", (f"{PY_CONVERTER} test_to_csv_without_gaps",),
              "id,lower,upper,size,alignment,hint\n0,5,10,15,1,0\n1,6,12,18,2,-1\n"),
    WriteCase("with gaps", (f"{CPP_CONVERTER} ToCsv",),
              "id,lower,upper,size,alignment,gaps\n0,5,10,15,1,\n1,6,12,18,2,7-8 9-10\n",
              gaps=True),
    WriteCase("with hints, gaps and windows", (f"{PY_CONVERTER} test_to_csv",),
              "id,lower,upper,size,alignment,hint,gaps\n0,5,10,15,1,0,\n"
              "1,6,12,18,2,-1,7-8 9-10@1:17\n", gaps=True),
    WriteCase("without alignment", (f"{CPP_CONVERTER} ToCsvWithoutAlignment",
                                    f"{PY_CONVERTER} test_to_csv_without_alignment"),
              "id,lower,upper,size,hint,gaps\n0,5,10,15,0,\n1,6,12,18,-1,7-8 9-10\n", gaps=True),
    WriteCase("without hint", (f"{PY_CONVERTER} test_to_csv_without_hint",),
              "id,lower,upper,size,alignment,gaps\n0,5,10,15,1,\n1,6,12,18,2,7-8 9-10@1:17\n",
              gaps=True),
    WriteCase("weird ids", (f"{CPP_CONVERTER} ToCsvWeirdIDs",
                            f"{PY_CONVERTER} test_to_csv_weird_ids"),
              "id,lower,upper,size,alignment,gaps\n10,5,10,15,1,\n20,6,12,18,2,7-8 9-10\n",
              gaps=True),
    WriteCase("string ids", (f"{CPP_CONVERTER} ToCsvStringIDs",
                             f"{PY_CONVERTER} test_to_csv_string_ids"),
              "id,lower,upper,size,alignment,gaps\nLittle,5,10,15,1,\nBig,6,12,18,2,7-8 9-10\n",
              gaps=True),
    WriteCase("with a solution", (f"{CPP_CONVERTER} ToCsvWithSolution",
                                  f"{PY_CONVERTER} test_to_csv_with_solution"),
              "id,lower,upper,size,alignment,gaps,offset\n0,5,10,15,1,,1\n"
              "1,6,12,18,2,7-8 9-10,21\n", gaps=True),
)


# -- the command line -----------------------------------------------------------------------------

CLI_INPUT = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n"
"""The input of python/tests/test_cli.py (its ``input_csv_example`` fixture); the max-load is 12."""


def all_cases() -> list:
    """Every case above (the ported suite: its agreement count is ``len`` of this)."""
    return [*SOLVER, *VALIDATOR, *OVERLAP, *READ, *WRITE]
