"""The messages between the parent process of a run and its measuring worker, as typed records.

Parent -> worker: the pickled WorkerSetup (once; a worker may be started before it is known, see
worker.py), MeasureJob (one problem under one contract, some implementations), StopWorker.
Worker -> parent: WorkerReady (with the receipt of the GPU it measures on), RowDone (a finished Result), StageChanged (which implementation is doing
what, so a silent worker can be blamed precisely), JobDone, ContextLostReport (a kernel broke the CUDA
context: the worker exits after sending it), WorkerFailed (an unexpected error, with its traceback).
Everything crosses a multiprocessing pipe, so every field is picklable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from ..build.extension import BuildFailure, ExtensionPlan
from ..results import Result
from ..spec import Experiment


@dataclass(frozen=True)
class BuiltExtensionRef:
    """Where a finished build lives, so the worker loads the same binary the parent built."""

    plan: ExtensionPlan
    folder: Path


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs before its first job: the experiment, the run, the GPU, the builds."""

    experiment: Experiment
    run_id: str
    device_index: int  # CUDA's index; 0 in a worker started with CUDA_VISIBLE_DEVICES naming one GPU
    builds: dict[str, Union[BuiltExtensionRef, BuildFailure]] = field(default_factory=dict)
    # "module:Class" of the worker's device session (worker.CudaSession); the tests' fake device differs
    backend: str = "gemmcompare.runner.worker:CudaSession"


@dataclass(frozen=True)
class MeasureJob:
    """Parent -> worker: measure one group (a problem under a contract) for these implementations."""

    problem_index: int
    contract: str
    implementations: tuple[str, ...]


@dataclass(frozen=True)
class StopWorker:
    """Parent -> worker: finish and exit."""


@dataclass(frozen=True)
class WorkerReady:
    """Worker -> parent: CUDA is up and the builds are loaded; the GPU it measures on."""

    gpu: dict = field(default_factory=dict)  # gpus.gpu_receipt(): uuid, index, name, clocks, host...
    startup: dict = field(default_factory=dict)  # seconds of each start-up step (phases.WORKER names them)


@dataclass(frozen=True)
class RowDone:
    """Worker -> parent: a finished row, to be stored now."""

    row: Result


@dataclass(frozen=True)
class StageChanged:
    """Worker -> parent: which implementation is doing what (so a silent worker is blamed precisely)."""

    implementation: str
    what: str


@dataclass(frozen=True)
class JobDone:
    """Worker -> parent: the group is done (implementations without a row are reported as such)."""

    phases: dict = field(default_factory=dict)  # seconds of the group's phases (phases.GROUPS)


@dataclass(frozen=True)
class ContextLostReport:
    """Worker -> parent: a kernel broke the CUDA context; the worker exits after sending this."""

    implementation: str
    status: str  # CRASH or TIMEOUT
    text: str


@dataclass(frozen=True)
class WorkerFailed:
    """Worker -> parent: an unexpected error, with its traceback."""

    traceback: str


WorkerMessage = Union[WorkerReady, RowDone, StageChanged, JobDone, ContextLostReport, WorkerFailed]
