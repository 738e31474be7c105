"""The rows of a group: the row each implementation starts from (base_row, with the contract's leading
dimensions), its build's resources copied onto it, and ContextLost, the error that ends a worker. The
executor, a tuned row's race (picking.py), the worker, its parent and `analyze` share them.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable

from ..contracts import correctness as corr
from ..contracts.precision import PrecisionContract
from ..dtypes import DTYPE_INFO
from ..errors import GemmCompareError
from ..implementations.base import Implementation
from ..problems import GemmProblem
from ..results import Result, Status
from ..spec import Experiment, ProblemEntry

Emit = Callable[[Result], None]  # where a final row goes
Stage = Callable[[str, str], None]  # (implementation, what it is doing now): the parent blames a hang on it


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


class ContextLost(GemmCompareError):
    """A kernel left the CUDA context unusable (illegal address, trap, hang): the process must go."""

    def __init__(self, message: str, implementation: str = "", status: Status = Status.CRASH):
        super().__init__(message)
        self.implementation, self.status = implementation, status


def base_row(run_id: str, exp: Experiment, entry: ProblemEntry, contract: PrecisionContract,
             impl_name: str, family: str, params: dict) -> Result:
    p = entry.problem
    lds = storage_lds(p, contract)
    return Result(
        run_id=run_id, problem=p.label, m=p.m, n=p.n, k=p.k, batch=p.batch, contract=contract.name,
        implementation=impl_name, family=family, params=dict(params), status=Status.SKIP,
        is_baseline=impl_name == exp.baseline_for(contract.name), flops=p.flops, started_at=now(),
        unique_bytes=p.unique_bytes(DTYPE_INFO[contract.a].itemsize, DTYPE_INFO[contract.b].itemsize,
                                    DTYPE_INFO[contract.c].itemsize),
        tolerance=corr.describe_tolerance(exp.correctness, contract, p.k),
        storage=contract.storage.value, lda=lds[0], ldb=lds[1], ldc=lds[2],
        grouped=p.as_dict() if p.is_grouped else {},
    )


def copy_build_resources(row: Result, res: dict, impl: Implementation) -> None:
    """ptxas's resources of the row's kernel onto the row (a run's and `analyze`'s rows alike)."""
    row.registers, row.smem_bytes = res.get("registers"), res.get("smem_bytes")
    row.spill_stores, row.spill_loads = res.get("spill_stores"), res.get("spill_loads")
    row.stack_bytes = res.get("stack_bytes")
    for warning in res.get("perf_warnings", ()):  # e.g. a serialized wgmma pipeline
        row.add_note(f"ptxas performance loss ({warning})")
    dynamic = impl.dynamic_smem_bytes()
    if dynamic:  # ptxas sees only static shared memory
        row.smem_bytes = (row.smem_bytes or 0) + dynamic


def storage_lds(p: GemmProblem, contract: PrecisionContract) -> tuple[int, int, int]:
    """lda, ldb, ldc the contract's storage policy hands every implementation of this problem. A grouped problem
    runs under tight TN contracts only (implementations/base.py): A and C are stacked rows (ld K and N), B is
    groups x N x K (ld K)."""
    from ..contracts.storage import operand_shape, policy_geometry

    if p.is_grouped:
        return p.k, p.k, p.n
    out = []
    for which, order, dtype in zip("abc", (contract.order_a, contract.order_b, contract.order_c),
                                   (contract.a, contract.b, contract.c)):
        lines, extent = operand_shape(which, p.m, p.n, p.k, order)
        out.append(policy_geometry(lines, extent, DTYPE_INFO[dtype].itemsize, contract.storage).ld)
    return out[0], out[1], out[2]


def row_problem(row: Result) -> GemmProblem:
    if row.grouped:
        from ..grouped import GroupedProblem

        return GroupedProblem.from_dict(row.grouped)
    return GemmProblem(row.m, row.n, row.k, row.batch)
