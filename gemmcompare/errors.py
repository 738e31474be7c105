"""The errors gemmcompare raises on purpose. Each carries a message written for the user."""


class GemmCompareError(Exception):
    """Base class: an error whose message is meant to be printed as is, without a traceback."""

    exit_code = 1


class SpecError(GemmCompareError):
    """An experiment spec (or a file it names) is invalid. Carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class InputError(GemmCompareError):
    """A file, folder or argument given to a command is missing, unreadable, malformed or out of bounds. The
    message names it and says what is wrong; the command changes nothing on disk before raising it."""

    exit_code = 2


class NoDeviceError(GemmCompareError):
    """The job needs a CUDA device and there is none."""

    exit_code = 3


class BuildError(GemmCompareError):
    """A kernel failed to compile or link; the message holds the compiler's own words."""


class ToolchainError(GemmCompareError):
    """nvcc, the CUDA toolkit or the CUTLASS headers cannot be found."""


class UsageError(GemmCompareError):
    """A command-line value that cannot be used (--gpus 7 on a two-GPU host, --shard 3/2, ...)."""

    exit_code = 2
