"""What an implementation is, and the generic machinery for kernels that speak the C ABI.

An Implementation has a procedural name (its identity everywhere: rows, files, filters), says which
contracts, shapes and architectures it supports, optionally asks the builder for an extension, and
prepares a launcher that writes into a caller-allocated output on the harness's stream.

`AbiKernel` covers every compiled kernel (lab ladder, mma_sync, CUTLASS, user kernels): a subclass only
declares what it supports and which sources define its entry; layouts under the contract's storage policy,
padding (timed, see AbiPrepared), workspace and the launch itself are handled here once.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from ..lazy import torch  # loads on first use: reading a spec needs no torch

from ..arch import arch_name
from ..build.request import BuildRequest
from ..contracts.precision import LAYOUTS, Epilogue, Math, Order, PrecisionContract, Scaling
from ..contracts.storage import OperandPlan, allocate, plan_operands
from ..device import DeviceInfo
from ..dtypes import DTYPE_INFO, DType
from ..problems import INT32_MAX, GemmProblem
# the inputs every implementation is handed, and the policy's C (re-exported: implementations import them here)
from .operands import Operands, policy_output, transposed  # noqa: F401


@dataclass(frozen=True)
class Ok:
    def __bool__(self):
        return True


@dataclass(frozen=True)
class Skip:
    reason: str

    def __bool__(self):
        return False


Support = Ok | Skip


def format_params(params: dict[str, Any]) -> str:
    """Canonical 'k=v,k=v' text of a parameter dict (sorted keys; tuples as AxBxC)."""

    def fmt(v):
        if isinstance(v, (list, tuple)):
            return "x".join(str(x) for x in v)
        return str(v)

    return ",".join(f"{k}={fmt(params[k])}" for k in sorted(params) if params[k] is not None)


class Prepared(abc.ABC):
    """One implementation ready to run one problem: buffers allocated, inputs laid out, workspace sized.

    launch() enqueues the GEMM on torch's current stream (the harness's) and must not synchronize; any copy
    into or out of buffers of the implementation's own is part of it (timed). output() returns the logical
    m x n result of the last launch, a view of the output buffer the storage policy gives (no copy).
    poison() fills the output with NaN before a checking launch.
    """

    executed_flops: int | None = None  # set when the implementation does more work than 2*m*n*k
    notes: str = ""
    storage_info: dict[str, Any] | None = None  # the storage policy and the lda/ldb/ldc it handed this row
    build_seconds: float | None = None  # compilation done in prepare (JIT, autotuning), for the row
    timing_fields: dict[str, Any] | None = None  # how its launches were timed, added to the row's timing
    kernels_per_launch: int = 1  # kernels one launch() enqueues: the timer fits batches to CUDA's launch queue

    @abc.abstractmethod
    def launch(self) -> None: ...

    @abc.abstractmethod
    def output(self) -> torch.Tensor: ...

    @abc.abstractmethod
    def poison(self) -> None: ...

    def reset_output(self) -> None:
        """Restore C to its initial value (only needed when beta != 0); called outside timed regions."""


class Implementation(abc.ABC):
    family: str = ""
    description: str = ""
    min_cc: int = 0  # lowest compute capability it runs on (e.g. 80)
    arch_specific: bool = False  # needs the 'a' target (sm_90a: wgmma, setmaxnreg) and that exact cc
    kernel_filter: str = ""  # regex matching its device functions' names in the ptxas report
    # the contracts (names) whose element types the spec derived it from; None: it is planned under every
    # contract of the experiment (see planned_under)
    derived_for: frozenset[str] | None = None
    # Whether it runs grouped problems (grouped.py: one GEMM per group, per-group M). A family that does not is
    # a SKIP with grouped_skip: its launch computes one matrix and would read the stacked rows as one GEMM.
    takes_grouped: bool = False
    grouped_skip = ("grouped problems are not supported: it launches one dense GEMM and knows no per-group M "
                    "offsets (library.torch_grouped_mm, library.cublas_loop and python entries with grouped: true "
                    "run them)")

    # Whether it has an FP8 path for grouped problems (per-group scales); a spec that pairs one without it with
    # grouped problems and an FP8 contract is an error (spec/load.py), grouped_fp8_note says why it has none.
    grouped_fp8: bool = False
    grouped_fp8_note: str = "it has no FP8 path for grouped problems"

    def __init__(self, variant: str, params: dict[str, Any] | None = None):
        self.variant = variant
        self.params = dict(params or {})

    def kernel_filter_for(self, contract) -> str:
        """The regex of the kernels a launch under `contract` runs: kernel_filter, unless the implementation
        instantiates one kernel per storage order (then the row's registers are its own instantiation's)."""
        return self.kernel_filter

    @property
    def name(self) -> str:
        base = f"{self.family}.{self.variant}" if self.variant else self.family
        return f"{base}[{format_params(self.params)}]" if self.params else base

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"

    def __eq__(self, other):
        return isinstance(other, Implementation) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    # -- what it supports --------------------------------------------------------------------------
    def planned_under(self, contract: PrecisionContract) -> bool:
        """Whether the plan has rows for it under `contract`. A configuration derived from another contract's
        element types has none there (not a SKIP: its sibling of this contract's types runs instead)."""
        return self.derived_for is None or contract.name in self.derived_for

    def supports_device(self, device: DeviceInfo | None) -> Support:
        if device is None or self.min_cc == 0:
            return Ok()
        if device.cc_int < self.min_cc:
            return Skip(f"needs compute capability {self.min_cc / 10:.1f}+, device {device.name} is {device.cc_int / 10:.1f}")
        if self.arch_specific and device.cc_int != self.min_cc:
            return Skip(f"built for {arch_name(self.min_cc, True)} only (arch-specific instructions); device is {device.arch}")
        return Ok()

    @abc.abstractmethod
    def supports(self, problem: GemmProblem, contract: PrecisionContract) -> Support:
        """Can it run this problem under this contract? Independent of the device (see supports_device)."""

    def admits(self, problem: GemmProblem, contract: PrecisionContract) -> Support:
        """supports(), after the rule every family shares for grouped problems (the plan and the run ask this)."""
        if problem.is_grouped:
            if not self.takes_grouped:
                return Skip(self.grouped_skip)
            s = grouped_contract_support(problem, contract)
            if not s:
                return s
        return self.supports(problem, contract)

    def check(self, problem: GemmProblem, contract: PrecisionContract, device: DeviceInfo | None) -> Support:
        s = self.supports_device(device)
        return s if not s else self.admits(problem, contract)

    def contracts_summary(self) -> str:
        return ""

    def constraints_summary(self) -> str:
        return ""

    def dynamic_smem_bytes(self) -> int | None:
        """Dynamic shared memory per block, when the implementation knows it (ptxas reports only the
        static part); added to the row's smem_bytes."""
        return None

    def required_arch(self) -> str:
        if self.min_cc == 0:
            return "any"
        return arch_name(self.min_cc, True) if self.arch_specific else f"{arch_name(self.min_cc)}+"

    # -- building and running ----------------------------------------------------------------------
    def build_request(self, target_arch: str) -> BuildRequest | None:
        """The extension this implementation needs, compiled for target_arch; None if it needs none."""
        return None

    def target_arch(self, device_cc: int) -> str:
        """The arch to compile for, given the device's (or --arch's) compute capability."""
        if self.arch_specific:
            return arch_name(self.min_cc, True)
        return arch_name(max(device_cc, self.min_cc))

    @abc.abstractmethod
    def prepare(self, problem: GemmProblem, contract: PrecisionContract, operands: Operands, extension) -> Prepared:
        """Allocate, lay out and size everything the launches need. `extension` is the loaded
        extension from build_request (or None)."""


def grouped_contract_support(problem, contract: PrecisionContract) -> Support:
    """The contracts a grouped problem runs under, whoever runs it. Its B is groups x N x K, K-major (a linear
    layer's weight, what every grouped kernel reads), and A's groups are row blocks of one stacked row-major
    matrix: the `tn` contracts (A row-major, B column-major) with a row-major C, under `tight` storage (one stacked allocation per operand; `aligned` padding per group is not
    defined) and no bias epilogue (no grouped row takes one)."""
    if (contract.order_a, contract.order_b, contract.order_c) != (Order.ROW, Order.COL, Order.ROW):
        return Skip(f"grouped problems run under TN contracts with a row-major C (A's groups are row blocks, B is "
                    f"groups x N x K, K-major); contract {contract.name} has layout {contract.layout}")
    if contract.storage.value != "tight":
        return Skip(f"grouped problems are stored tight (one stacked allocation per operand); contract "
                    f"{contract.name} asks for {contract.storage.value} storage")
    if contract.epilogue is not Epilogue.NONE:
        return Skip(f"grouped problems take no {contract.epilogue.value} epilogue (no grouped row applies one)")
    return Ok()


# ---------------------------------------------------------------------------------------------------
# Kernels behind the C ABI


@dataclass(frozen=True)
class Constraints:
    """Shape constraints a kernel declares. A problem that breaks one is a SKIP with the reason."""

    m_multiple_of: int = 1
    n_multiple_of: int = 1
    k_multiple_of: int = 1
    index_bits: int = 32  # element offsets must fit a signed integer of this width
    min_dims: tuple[int, int, int] = (1, 1, 1)
    max_dims: tuple[int, int, int] | None = None  # e.g. grid-size limits
    pad_to: tuple[int, int, int] | None = None  # runs the problem zero-padded to these multiples (AbiPrepared)
    ld_multiples: tuple[int, int, int] = (1, 1, 1)  # lda, ldb, ldc must be multiples of these (elements)
    packed: bool = False  # needs ld == the stored row's length (the capstone ABI)

    def check(self, problem: GemmProblem) -> Support:
        if problem.is_grouped:
            return self._check_grouped(problem)
        dims = {"m": problem.m, "n": problem.n, "k": problem.k}
        for (dim, value), mult in zip(dims.items(), (self.m_multiple_of, self.n_multiple_of, self.k_multiple_of)):
            if mult > 1 and self.pad_to is None and value % mult:
                return Skip(f"{dim}={value} is not a multiple of {mult}")
        for (dim, value), lo in zip(dims.items(), self.min_dims):
            if value < lo:
                return Skip(f"{dim}={value} is below the minimum {lo}")
        if self.max_dims:
            for (dim, value), hi in zip(dims.items(), self.max_dims):
                if value > hi:
                    return Skip(f"{dim}={value} exceeds the maximum {hi}")
        padded = self.padded(problem)
        limit = INT32_MAX if self.index_bits == 32 else 2**63 - 1
        if padded.max_element_offset() > limit:
            return Skip(
                f"element offsets up to {padded.max_element_offset():,} overflow the kernel's "
                f"{self.index_bits}-bit index type (max {limit:,})"
            )
        return Ok()

    def _check_grouped(self, problem) -> Support:
        """A grouped problem (never padded: a padded N or K would change every group's layout): M's constraints
        hold for each group's M (an empty group is legal whatever they say), N's and K's for the shared N and K."""
        if self.m_multiple_of > 1:
            bad = next((m for m in problem.ms if m % self.m_multiple_of), None)
            if bad is not None:
                return Skip(f"a group's M={bad} is not a multiple of {self.m_multiple_of} (grouped problems are not padded)")
        for i, (dim, value, mult) in enumerate((("n", problem.n, self.n_multiple_of), ("k", problem.k, self.k_multiple_of))):
            if mult > 1 and value % mult:
                return Skip(f"{dim}={value} is not a multiple of {mult} (grouped problems are not padded)")
            if value < self.min_dims[i + 1]:
                return Skip(f"{dim}={value} is below the minimum {self.min_dims[i + 1]}")
            if self.max_dims and value > self.max_dims[i + 1]:
                return Skip(f"{dim}={value} exceeds the maximum {self.max_dims[i + 1]}")
        if self.max_dims and max(problem.ms) > self.max_dims[0]:
            return Skip(f"a group's M={max(problem.ms)} exceeds the maximum {self.max_dims[0]}")
        limit = INT32_MAX if self.index_bits == 32 else 2**63 - 1
        if problem.max_element_offset() > limit:
            return Skip(f"element offsets up to {problem.max_element_offset():,} overflow the kernel's "
                        f"{self.index_bits}-bit index type (max {limit:,})")
        return Ok()

    def padded(self, problem: GemmProblem) -> GemmProblem:
        if not self.pad_to:
            return problem
        pm, pn, pk = self.pad_to
        up = lambda v, q: -(-v // q) * q  # noqa: E731
        return GemmProblem(up(problem.m, pm), up(problem.n, pn), up(problem.k, pk), problem.batch)

    def summary(self) -> str:
        parts = []
        for dim, mult in (("m", self.m_multiple_of), ("n", self.n_multiple_of), ("k", self.k_multiple_of)):
            if mult > 1:
                parts.append(f"{dim}%{mult}==0")
        if self.pad_to:
            parts.append("pads to multiples of " + "x".join(map(str, self.pad_to)))
        if self.ld_multiples != (1, 1, 1):
            parts.append("lda/ldb/ldc multiples of " + "/".join(map(str, self.ld_multiples)))
        if self.packed:
            parts.append("packed operands (ld = row length)")
        parts.append(f"{self.index_bits}-bit indices")
        return ", ".join(parts)


@dataclass(frozen=True)
class ContractSupport:
    """The contracts a kernel can honour, as sets. Empty `layouts` means all."""

    inputs: frozenset[DType]  # dtype of A and B (equal)
    outputs: frozenset[DType]
    accumulators: frozenset[DType] = frozenset({DType.F32})
    maths: frozenset[Math] = frozenset({Math.STRICT})
    layouts: frozenset[tuple[Order, Order, Order]] = frozenset()  # (order_a, order_b, order_c)
    alpha_beta: bool = False  # honours alpha != 1 and beta != 0
    epilogues: frozenset[Epilogue] = frozenset({Epilogue.NONE})
    # (input, output) combinations it is built for, when not every input with every output (empty: all)
    pairs: frozenset[tuple[DType, DType]] = frozenset()
    # FP8: the scale shapes it applies (NONE: it takes no FP8 contract), and whether it accumulates FP8 products
    # with fewer bits than FP32 (then only contracts that allow fast accumulation)
    scalings: frozenset[Scaling] = frozenset({Scaling.NONE})
    fast_accum: bool = False
    scaling_note: str = ""  # why other scale shapes are not taken (in the SKIP reason)

    def check(self, contract: PrecisionContract) -> Support:
        if contract.a != contract.b or contract.a not in self.inputs:
            return Skip(f"inputs {contract.a.value}/{contract.b.value} not supported (takes {_names(self.inputs)})")
        if contract.c not in self.outputs:
            return Skip(f"output {contract.c.value} not supported (writes {_names(self.outputs)})")
        if self.pairs and (contract.a, contract.c) not in self.pairs:
            return Skip(f"inputs {contract.a.value} with output {contract.c.value} not supported "
                        f"(in -> out: {self.pairs_text()})")
        if contract.acc not in self.accumulators:
            return Skip(f"accumulator {contract.acc.value} not supported (accumulates in {_names(self.accumulators)})")
        if contract.math not in self.maths:
            return Skip(f"math mode {contract.math.value} not supported ({', '.join(sorted(m.value for m in self.maths))})")
        key = (contract.order_a, contract.order_b, contract.order_c)
        if self.layouts and key not in self.layouts:
            return Skip(f"layout {contract.layout} not supported (supports {self.layout_names()})")
        if not self.alpha_beta and (contract.alpha != 1.0 or contract.beta != 0.0):
            return Skip("only alpha=1, beta=0 supported")
        if contract.epilogue not in self.epilogues:
            return Skip(f"epilogue {contract.epilogue.value} not supported")
        if contract.scaling not in self.scalings:
            return Skip(f"scaling {contract.scaling.value} not supported (applies {_names(self.scalings)} scales"
                        + (f": {self.scaling_note})" if self.scaling_note else ")"))
        if self.fast_accum and not contract.fast_accum:
            return Skip(f"it accumulates FP8 products with fast accumulation (the tensor cores' ~14-bit accumulator, "
                        f"no promotion to FP32); contract {contract.name} forbids it (its _fastacc twin allows it)")
        return Ok()

    def layout_names(self) -> str:
        if not self.layouts:
            return "all layouts"
        names = []
        for oa, ob, oc in sorted(self.layouts, key=lambda t: tuple(o.value for o in t)):
            names.append(oa.letter + ob.letter + ("" if oc is Order.ROW else "_ccol"))
        return "/".join(sorted(names))

    def pairs_text(self) -> str:
        return ", ".join(f"{a.value} -> {c.value}" for a, c in sorted(self.pairs, key=lambda p: (p[0].value, p[1].value)))

    def summary(self) -> str:
        acc = _names(self.accumulators)
        types = (f"in -> out {self.pairs_text()}" if self.pairs
                 else f"in {_names(self.inputs)} -> out {_names(self.outputs)}")
        return (
            f"{types}, acc {acc}, "
            f"math {'/'.join(sorted(m.value for m in self.maths))}, layouts {self.layout_names()}"
            + ("" if self.scalings == {Scaling.NONE} else
               f", scaling {_names(self.scalings)}, {'fast' if self.fast_accum else 'FP32-promoted'} accumulation")
        )


def _names(values) -> str:
    return "/".join(sorted(v.value for v in values))


def layouts(*names: str) -> frozenset[tuple[Order, Order, Order]]:
    """layouts('tn', 'tt') -> the (order_a, order_b, order_c) set, C row-major; add '_ccol' for column-major C."""
    out = set()
    for name in names:
        letters, _, ccol = name.partition("_")
        oa, ob = LAYOUTS[letters]
        out.add((oa, ob, Order.COL if ccol == "ccol" else Order.ROW))
    return frozenset(out)


class AbiKernel(Implementation):
    """A compiled kernel reached through the gemmcompare C ABI. Subclasses set the class attributes
    (or pass them to __init__) and implement `sources()`."""

    contract_support: ContractSupport
    constraints: Constraints = Constraints()
    build_group: str = ""  # implementations sharing a group share one extension (one binding)
    entry_symbol: str = ""
    has_workspace: bool = False
    cuda_flags: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    uses_cutlass: bool = False
    # Whether its entry reads gc_gemm_args' batch and batch strides (ABI version 3). The built-in hand-written
    # and CUTLASS kernels launch one matrix per call (their grids have no batch axis): batch > 1 is their SKIP.
    batched: bool = False
    batch_skip: str = ("batched problems are not supported: this kernel's grid has no batch axis (it reads one "
                       "matrix per launch, not gc_gemm_args' batch and batch strides)")
    # a batched kernel whose batch is a grid axis other than x takes at most that axis's 65535 matrices; one whose
    # batch offsets are 64-bit products checks its index width per matrix, not over the whole batch
    max_batch: int | None = None
    batch_offsets_64bit: bool = False

    def supports(self, problem, contract):
        s = self.contract_support.check(contract)
        if not s:
            return s
        if problem.is_grouped and problem.layout != "contiguous":
            return Skip(f"the C ABI's grouped form is the contiguous layout (GC_GROUPS_CONTIGUOUS: A's groups stacked "
                        f"rows); problem {problem.label} is {problem.layout}")
        if problem.batch != 1:
            if not self.batched:
                return Skip(self.batch_skip)
            if contract.is_fp8:  # one scale tensor per operand, not one per matrix of the batch
                return Skip("batched FP8 problems are not offered: the contract's scales describe one matrix")
            if self.max_batch is not None and problem.batch > self.max_batch:
                return Skip(f"batch {problem.batch} is over this kernel's {self.max_batch} (its batch is a grid axis "
                            "of at most that many blocks)")
            if self.batch_offsets_64bit:
                return self.constraints.check(dataclasses.replace(problem, batch=1))
        return self.constraints.check(problem)

    def contracts_summary(self):
        return self.contract_support.summary()

    def constraints_summary(self):
        return self.constraints.summary()

    @abc.abstractmethod
    def sources(self) -> tuple:
        """The KernelSource(s) that define entry_symbol (shared files may appear in several requests;
        the builder de-duplicates by filename)."""

    def build_request(self, target_arch: str) -> BuildRequest:
        return BuildRequest(
            group=self.build_group or self.family,
            sources=tuple(self.sources()),
            entry=self.entry_symbol,
            arch=target_arch,
            has_workspace=self.has_workspace,
            cuda_flags=tuple(self.cuda_flags),
            include_dirs=tuple(self.include_dirs),
            uses_cutlass=self.uses_cutlass,
        )

    def prepare(self, problem, contract, operands, extension):
        if problem.is_grouped:
            return AbiGroupedPrepared(self, problem, contract, operands, extension)
        return AbiPrepared(self, problem, contract, operands, extension)


def dispatch_entry(comment: str, symbol: str, targets: list[tuple[str, str]], refusal: str) -> str:
    """The C source of an extension entry `symbol` (and `symbol`_occupancy) that calls the first of `targets`,
    (C condition on `args`, symbol of a compiled instance), whose condition holds, else fails with `refusal`
    (a C string literal's text). `comment`: the file's first lines, each starting with //."""
    def each(line):
        return "".join(line(cond, sym) for cond, sym in targets)

    decls = each(lambda _, sym: f'extern "C" int {sym}(const gc_gemm_args* args, char* err, size_t err_len);\n')
    decls += each(lambda _, sym: f'extern "C" int {sym}_occupancy(const gc_gemm_args* args, gc_occupancy* out, '
                                 f'char* err, size_t err_len);\n')
    fail = f'  return gc_fail(err, err_len, "{refusal}");\n'
    return (
        f"{comment}"
        f'#include "gemmcompare/gemm_abi.h"\n'
        f"\n"
        f"{decls}"
        f"\n"
        f'extern "C" int {symbol}(const gc_gemm_args* args, char* err, size_t err_len) {{\n'
        f'  if (!args) return gc_fail(err, err_len, "null arguments");\n'
        f"{each(lambda cond, sym: f'  if ({cond}) return {sym}(args, err, err_len);' + chr(10))}"
        f"{fail}"
        f"}}\n"
        f"\n"
        f'extern "C" int {symbol}_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, '
        f'size_t err_len) {{\n'
        f'  if (!args) return gc_fail(err, err_len, "null arguments");\n'
        f"{each(lambda cond, sym: f'  if ({cond}) return {sym}_occupancy(args, out, err, err_len);' + chr(10))}"
        f"{fail}"
        f"}}\n"
    )


def abi_codes(contract: PrecisionContract) -> tuple[int, ...]:
    """The contract as the kernels' C ABI (gemm_abi.h) reads it: storage orders, dtypes, math, epilogue, and the
    shape of an FP8 contract's scales."""
    return (contract.order_a.abi_code, contract.order_b.abi_code, contract.order_c.abi_code,
            DTYPE_INFO[contract.a].abi_code, DTYPE_INFO[contract.b].abi_code, DTYPE_INFO[contract.c].abi_code,
            DTYPE_INFO[contract.acc].abi_code, contract.math.abi_code, contract.epilogue.abi_code,
            contract.scaling.abi_code)


class AbiPrepared(Prepared):
    """Lays out A, B and C for an AbiKernel under the contract's storage policy, and launches it.

    Each operand is the policy's buffer (A and B the very ones every implementation of the run gets) unless
    the kernel cannot run on it (contracts/storage.py `plan_operands`: a leading dimension it cannot take, a
    padded M, N or K the buffer does not hold). Then the kernel gets a buffer of its own, zero-filled here,
    and its launch copies the operand in before the kernel, and C back after it: inside the timed region.
    `steps` names what one launch does, in order. A batched problem's operands are batch x lines x extent
    (operands.py); the kernel gets the batch count and the batch strides of the tensors it runs on."""

    def __init__(self, impl: AbiKernel, problem: GemmProblem, contract: PrecisionContract, operands: Operands, extension):
        self.impl, self.problem, self.contract = impl, problem, contract
        self.operands = operands
        cons = impl.constraints
        padded = cons.padded(problem)
        self.padded = padded
        sizes = tuple(DTYPE_INFO[d].itemsize for d in (contract.a, contract.b, contract.c))
        orders = (contract.order_a, contract.order_b, contract.order_c)
        self.plan = plan_operands(problem.m, problem.n, problem.k, (padded.m, padded.n, padded.k), orders, sizes,
                                  contract.storage, cons.ld_multiples, cons.packed)
        device = operands.a.device
        steps: list[tuple[str, Callable[[], None]]] = []
        after: list[tuple[str, Callable[[], None]]] = []
        a_user, _ = operands.stored("a", contract.order_a)
        b_user, _ = operands.stored("b", contract.order_b)
        self._c_full, self.c_user = allocate(self.plan["c"].policy, DTYPE_INFO[contract.c].torch_dtype, device,
                                             batch=problem.batch)
        a = self._operand(self.plan["a"], a_user, steps, None)
        b = self._operand(self.plan["b"], b_user, steps, None)
        c = self._operand(self.plan["c"], self.c_user, steps if contract.beta != 0.0 else None, after)
        self.kernel_c = c
        if padded != problem:
            self.executed_flops = padded.flops
        self._entry = extension.entry(impl.entry_symbol)
        codes = list(abi_codes(contract))
        dims = [padded.m, padded.n, padded.k, a.stride(-2), b.stride(-2), c.stride(-2)]
        if problem.batch != 1:  # ABI 3: the batch count and batch strides (a 2-D problem's binding fills 1, 0)
            dims += [problem.batch, a.stride(0), b.stride(0), c.stride(0)]
        bias = self._bias(padded, steps)
        alpha, beta = contract.alpha, contract.beta
        sa, sb = self._scales()
        self.workspace = torch.empty(0, dtype=torch.uint8, device=device)
        if impl.has_workspace:
            nbytes = self._entry.workspace_bytes(a, b, c, dims, codes, alpha, beta, self.workspace, bias, sa, sb)
            self.workspace = torch.empty(max(int(nbytes), 0), dtype=torch.uint8, device=device)
        entry, ws = self._entry, self.workspace
        steps.append(("kernel", lambda: entry.launch(a, b, c, dims, codes, alpha, beta, ws, bias, sa, sb)))
        self.steps = steps + after
        fns = tuple(fn for _, fn in self.steps)
        if len(fns) == 1:
            self._launch: Callable[[], None] = fns[0]
        else:
            def run_steps():
                for fn in fns:
                    fn()
            self._launch = run_steps
        self.storage_info = self._storage_info()
        self.notes = self._describe()

    def _operand(self, plan: OperandPlan, user: torch.Tensor, copy_in: list | None, copy_out: list | None):
        """The tensor the kernel gets for one operand: the policy's buffer, widened in place to the padded
        extent it holds (zeros), or a buffer of its own with the launch's copies added."""
        k = plan.kernel
        if not plan.copy:  # batched: each matrix widened inside its own allocation (batch stride kept)
            if user.dim() == 3:
                return user.as_strided((user.shape[0], k.lines, k.extent), (user.stride(0), k.ld, 1))
            return user.as_strided((k.lines, k.extent), (k.ld, 1))
        batch = user.shape[0] if user.dim() == 3 else 1
        _, view = allocate(k, user.dtype, user.device, batch=batch)  # the view keeps the allocation alive
        inner = view[..., : user.shape[-2], : user.shape[-1]]
        if copy_in is not None:
            copy_in.append((f"copy {plan.which} in ({plan.why})", lambda: inner.copy_(user)))
        if copy_out is not None:
            copy_out.append((f"copy {plan.which} out ({plan.why})", lambda: user.copy_(inner)))
        return view

    def _bias(self, padded: GemmProblem, steps: list) -> torch.Tensor:
        """The epilogue's FP32 bias vector (zero-padded to the padded n: copied inside the launch), or an
        empty tensor."""
        bias = self.operands.bias
        if self.contract.epilogue is Epilogue.NONE or bias is None:
            return torch.empty(0, dtype=torch.float32, device=self.operands.a.device)
        if padded.n == bias.numel():
            return bias
        out = torch.zeros(padded.n, dtype=torch.float32, device=bias.device)
        inner = out[: bias.numel()]
        steps.append(("copy bias in (padded n)", lambda: inner.copy_(bias)))
        return out

    def _scales(self) -> tuple[torch.Tensor, torch.Tensor]:
        """An FP8 contract's scales, the very tensors every row gets (contiguous FP32 in the shapes of
        contracts/quantize.py: the kernel reads them inside its launch); empty tensors otherwise."""
        if not self.contract.is_fp8:
            empty = torch.empty(0, dtype=torch.float32, device=self.operands.a.device)
            return empty, empty
        sa, sb = self.operands.scale_a, self.operands.scale_b
        if sa is None or sb is None or not (sa.is_contiguous() and sb.is_contiguous()):
            raise ValueError(f"contract {self.contract.name}: an FP8 contract's operands need contiguous scales")
        return sa, sb

    def _storage_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"policy": self.contract.storage.value}
        for which in "abc":
            plan = self.plan[which]
            info[f"ld{which}"] = plan.policy.ld
            if plan.copy:
                info[f"kernel_ld{which}"] = plan.kernel.ld
        info["copies_in_timing"] = [name for name, _ in self.steps if name != "kernel"]
        return info

    def _describe(self) -> str:
        parts = []
        if self.padded != self.problem:
            parts.append(f"runs {self.problem.label} zero-padded to {self.padded.label} (executed FLOPs count it)")
        copied = [w for w in "abc" if self.plan[w].copy]
        if copied:
            parts.append(f"copies {', '.join(w.upper() for w in copied)} into its own buffers inside the timed "
                         f"region under {self.contract.storage.value} storage ("
                         + "; ".join(f"{w.upper()}: {self.plan[w].why}" for w in copied) + ")")
        elif self.padded != self.problem:
            parts.append(f"in place on the {self.contract.storage.value} buffers (their zero padding holds it)")
        return "; ".join(parts)

    def launch(self):
        self._launch()

    def poison(self):
        self._c_full.fill_(float("nan"))
        if self.plan["c"].copy:  # its own C too: a kernel that writes nothing must not pass on a stale copy
            self.kernel_c.fill_(float("nan"))
        self.reset_output()

    def reset_output(self):
        if self.contract.beta != 0.0 and self.operands.c0 is not None:
            self._logical_c().copy_(self.operands.c0)

    def _logical_c(self) -> torch.Tensor:
        return self.c_user if self.contract.order_c is Order.ROW else transposed(self.c_user)

    def output(self):
        return self._logical_c()


class AbiGroupedPrepared(AbiPrepared):
    """A grouped problem (grouped.py, contiguous layout) through gemm_abi.h's grouped form (ABI 4).

    The kernel runs on the operands every row gets, in place (tight storage, a TN contract: admits() saw to it):
    A [sum M, K] row-major, B [groups, N, K] K-major (`stride_b` elements between groups), C [sum M, N]; nothing
    is padded or copied, so a launch is the entry's call alone. The binding is handed 11 dims
    [m = sum M, n, k, lda, ldb, ldc, 1, 0, stride_b, 0, groups] and two tensors made here once, outside the timed
    launch, and kept alive by this object: the groups + 1 cumulative row offsets on the device (int64) and each
    group's M on the host (int64)."""

    def __init__(self, impl: AbiKernel, problem, contract: PrecisionContract, operands: Operands, extension):
        if problem.layout != "contiguous":
            raise ValueError(f"{impl.name}: the C ABI's grouped form is the contiguous layout (GC_GROUPS_CONTIGUOUS); "
                             f"problem {problem.label} is {problem.layout}")
        self.impl, self.problem, self.contract, self.operands = impl, problem, contract, operands
        self.padded, self.plan = problem, None
        device = operands.a.device
        a, lda = operands.stored("a", contract.order_a)  # sum M x K
        b, ldb = operands.stored("b", contract.order_b)  # groups x N x K
        self._c_full, self.c_user, ldc = policy_output(problem, contract, device)
        self.kernel_c = self.c_user
        stride_b = b.stride(0) if b.dim() == 3 else problem.n * ldb
        self.dims = [problem.m, problem.n, problem.k, lda, ldb, ldc, 1, 0, stride_b, 0, problem.groups]
        self.group_offsets = torch.tensor(problem.offsets, dtype=torch.int64, device=device)
        self.group_m_host = torch.tensor(problem.ms, dtype=torch.int64, device="cpu")
        self._entry = extension.entry(impl.entry_symbol)
        codes = list(abi_codes(contract))
        bias = torch.empty(0, dtype=torch.float32, device=device)  # grouped problems take no epilogue
        sa, sb = self._scales()
        alpha, beta, dims = contract.alpha, contract.beta, self.dims
        offsets, m_host = self.group_offsets, self.group_m_host
        self.workspace = torch.empty(0, dtype=torch.uint8, device=device)
        if impl.has_workspace:
            nbytes = self._entry.workspace_bytes(a, b, self._c_full, dims, codes, alpha, beta, self.workspace, bias,
                                                 sa, sb, offsets, m_host)
            self.workspace = torch.empty(max(int(nbytes), 0), dtype=torch.uint8, device=device)
        entry, ws, c = self._entry, self.workspace, self._c_full
        self.steps = [("kernel", lambda: entry.launch(a, b, c, dims, codes, alpha, beta, ws, bias, sa, sb, offsets,
                                                      m_host))]
        self._launch = self.steps[0][1]
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": ldc,
                             "stride_b": stride_b, "copies_in_timing": []}
        self.notes = ""

    def poison(self):
        self._c_full.fill_(float("nan"))
        self.reset_output()


@dataclass
class Param:
    """One parameter of a parametrized family, as a spec may write it.

    kind: 'int', 'choice' (one of `choices`), or 'shape' (a list of `length` positive ints, written
    [128, 128, 32]; a list of such lists is a sweep). `default` is used when the spec omits it.
    """

    name: str
    kind: str
    default: Any = None
    choices: tuple = ()
    length: int = 0
    help: str = ""
    validate: Callable[[Any], str | None] | None = field(default=None, repr=False)
