"""CTAs per SM from a kernel's registers, shared memory and block size: the CUDA occupancy calculator.

This follows CUDA 13.0's cuda_occupancy.h (cudaOccMaxActiveBlocksPerMultiprocessor), the same rules the
runtime's cudaOccupancyMaxActiveBlocksPerMultiprocessor applies, so that the two can be checked against
each other for every kernel on a GPU:

- threads: warps per CTA = ceil(threads / 32); CTAs <= max warps per SM / warps per CTA.
- blocks:  CTAs <= the architecture's resident-block limit (32 on sm_80/sm_90, 24 on sm_89, 16 on sm_86).
- registers: allocated per warp, registers x 32 rounded up to 256; each of the 4 sub-partitions holds a
  quarter of the register file and a whole number of warps: CTAs <= 4*floor((65536/4) / per-warp) / warps
  per CTA. A CTA whose allocation (rounded up to 4 warps, as the hardware checks it) exceeds the per-block
  register file cannot launch at all.
- shared memory: static + dynamic + the driver's 1 KB per-CTA reservation (sm_80 and later), rounded up to
  128 bytes; CTAs <= the SM's configured shared memory / that. The SM's shared memory is the carveout
  preference (the maximum by default) rounded up to a size the SM supports; a CTA needing more than the
  per-block limit (opt-in maximum + reservation) cannot launch.
- barriers (sm_90 and later): named block barriers per SM = 2 x max blocks; with one barrier per CTA this
  never binds.
The limiting resources are every one whose limit equals the result, as the calculator reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .devices import ArchitectureLimits, DeviceSpec

UNLIMITED = 2**31 - 1  # the calculator's INT_MAX: a resource that imposes no limit
RESOURCES = ("registers", "shared_memory", "threads", "blocks", "barriers")


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


@dataclass(frozen=True)
class BlockResources:
    """What one CTA of a kernel uses (ptxas -v and the launch configuration).

    max_dynamic_shared_bytes is the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize: None means the
    launcher opted in to exactly what it launches with (gemmcompare's launchers do); cudaFuncGetAttributes
    reports 48 KB minus the static size when nothing was set, and a launch asking for more then fails.
    registers_per_thread None leaves the register limit out (unknown resources), saying so in the result.
    """

    threads: int
    registers_per_thread: int | None
    static_shared_bytes: int = 0
    dynamic_shared_bytes: int = 0
    max_dynamic_shared_bytes: int | None = None
    block_barriers: int = 1
    carveout_percent: int | None = None  # cudaFuncAttributePreferredSharedMemoryCarveout; None = no preference

    @property
    def shared_bytes(self) -> int:
        return self.static_shared_bytes + self.dynamic_shared_bytes


@dataclass(frozen=True)
class Occupancy:
    """Resident CTAs per SM and why."""

    ctas_per_sm: int
    limited_by: tuple[str, ...]  # every resource whose limit equals ctas_per_sm, in RESOURCES order
    limit_by_registers: int
    limit_by_shared_memory: int
    limit_by_threads: int
    limit_by_blocks: int
    limit_by_barriers: int
    warps_per_cta: int
    registers_per_warp: int  # allocated (rounded up to the allocation unit)
    registers_per_cta: int  # allocated
    shared_bytes_per_cta: int  # allocated: static + dynamic + reservation, rounded up
    shared_bytes_per_sm: int  # the SM's shared-memory configuration used for this kernel
    max_warps_per_sm: int
    notes: tuple[str, ...] = ()

    @property
    def active_warps(self) -> int:
        return self.ctas_per_sm * self.warps_per_cta

    @property
    def occupancy(self) -> float:
        """Theoretical occupancy: resident warps over the SM's warp slots."""
        return self.active_warps / self.max_warps_per_sm

    @property
    def limiting_resource(self) -> str:
        """The first limiting resource (registers, shared memory, threads, blocks, barriers order)."""
        return self.limited_by[0]


def shared_memory_config(required_bytes: int, limits: ArchitectureLimits) -> int | None:
    """The smallest shared-memory size the SM can be configured to that holds `required_bytes`
    (cudaOccAlignUpShmemSizeVoltaPlus), or None when none does."""
    for kib in limits.shared_memory_configs_kib:
        if required_bytes <= kib * 1024:
            return kib * 1024
    return None


def _register_limit(limits: ArchitectureLimits, regs: int | None, warps: int) -> tuple[int, int, int]:
    """(CTA limit, registers allocated per warp, per CTA) by cudaOccMaxBlocksPerSMRegsLimit."""
    if regs is None:
        return UNLIMITED, 0, 0
    per_warp = _round_up(regs * limits.warp_size, limits.register_allocation_unit)
    per_cta = per_warp * warps
    hardware_check = per_warp * _round_up(warps, limits.sub_partitions)
    # cuda_occupancy.h rejects numRegs above 256 on sm_70+ (ptxas never allocates more than 255)
    if limits.registers_per_block < hardware_check or limits.registers_per_block < per_cta or regs > 256:
        return 0, per_warp, per_cta
    if per_warp == 0:
        return UNLIMITED, 0, 0
    warps_per_partition = (limits.registers_per_sm // limits.sub_partitions) // per_warp
    return (warps_per_partition * limits.sub_partitions) // warps, per_warp, per_cta


def _shared_memory_limit(limits: ArchitectureLimits, block: BlockResources) -> tuple[int, int, int, str]:
    """(CTA limit, allocated bytes per CTA, SM configuration used, note) by cudaOccMaxBlocksPerSMSmemLimit."""
    static = block.static_shared_bytes + limits.reserved_shared_memory_per_block
    allocated = _round_up(static + block.dynamic_shared_bytes, limits.shared_memory_allocation_unit)
    max_dynamic = block.max_dynamic_shared_bytes
    if max_dynamic is None:  # opted in to what it launches with (never below the default budget)
        max_dynamic = max(block.dynamic_shared_bytes, limits.shared_memory_per_block - block.static_shared_bytes)
    if block.dynamic_shared_bytes > max_dynamic:
        return 0, allocated, 0, (f"{block.dynamic_shared_bytes} bytes of dynamic shared memory exceed the kernel's "
                                 f"maximum of {max_dynamic} (cudaFuncAttributeMaxDynamicSharedMemorySize)")
    per_block_limit = (limits.shared_memory_per_block_optin if static + max_dynamic > limits.shared_memory_per_block
                       else limits.shared_memory_per_block) + limits.reserved_shared_memory_per_block
    if allocated > per_block_limit:
        return 0, allocated, 0, (f"{allocated} bytes of shared memory per CTA (with the 1 KB reservation) exceed "
                                 f"the per-block limit of {per_block_limit}")
    if block.carveout_percent is None:
        preference = shared_memory_config(limits.shared_memory_per_sm, limits)
    else:
        if not 0 <= block.carveout_percent <= 100:
            raise ValueError("carveout_percent must be 0..100")
        preference = shared_memory_config(block.carveout_percent * limits.shared_memory_per_sm // 100, limits)
    if preference is not None and preference >= allocated:
        sm_bytes = preference
    else:  # a preference smaller than one CTA is raised to the configuration that fits one
        sm_bytes = shared_memory_config(allocated, limits) or 0
    return (sm_bytes // allocated if allocated else UNLIMITED), allocated, sm_bytes, ""


def occupancy(device: DeviceSpec | ArchitectureLimits, block: BlockResources) -> Occupancy:
    """Resident CTAs per SM of a kernel with `block`'s resources on `device` (a DeviceSpec, or the limits
    of a compute capability)."""
    limits = device.limits if isinstance(device, DeviceSpec) else device
    if block.threads < 1:
        raise ValueError("a block has at least one thread")
    warps = -(-block.threads // limits.warp_size)
    notes: list[str] = []

    by_threads = 0 if block.threads > limits.max_threads_per_block else limits.max_warps_per_sm // warps
    if by_threads == 0:
        notes.append(f"{block.threads} threads exceed the {limits.max_threads_per_block} a block may have")
    by_blocks = limits.max_blocks_per_sm
    by_registers, regs_warp, regs_cta = _register_limit(limits, block.registers_per_thread, warps)
    if block.registers_per_thread is None:
        notes.append("registers per thread unknown: the register limit is left out")
    elif by_registers == 0:
        notes.append(f"{block.registers_per_thread} registers x {block.threads} threads do not fit one CTA's "
                     f"{limits.registers_per_block}-register budget")
    by_smem, smem_cta, smem_sm, smem_note = _shared_memory_limit(limits, block)
    if smem_note:
        notes.append(smem_note)

    cta_limit = min(by_registers, by_smem, by_threads, by_blocks)
    by_barriers = UNLIMITED
    if limits.compute_capability[0] >= 9 and block.block_barriers > 0:
        by_barriers = limits.block_barrier_factor * by_blocks // block.block_barriers
        cta_limit = min(cta_limit, by_barriers)
    limits_by = {"registers": by_registers, "shared_memory": by_smem, "threads": by_threads, "blocks": by_blocks,
                 "barriers": by_barriers}
    limited_by = tuple(r for r in RESOURCES if limits_by[r] == cta_limit)
    return Occupancy(
        ctas_per_sm=cta_limit, limited_by=limited_by,
        limit_by_registers=by_registers, limit_by_shared_memory=by_smem, limit_by_threads=by_threads,
        limit_by_blocks=by_blocks, limit_by_barriers=by_barriers,
        warps_per_cta=warps, registers_per_warp=regs_warp, registers_per_cta=regs_cta,
        shared_bytes_per_cta=smem_cta, shared_bytes_per_sm=smem_sm, max_warps_per_sm=limits.max_warps_per_sm,
        notes=tuple(notes),
    )
