"""`list` (implementations, contracts, and with --resources what each kernel uses) and `env` (the
receipt fields of this machine)."""

from __future__ import annotations

import json

from .options import add_build_options


def cmd_list(args) -> int:
    from ..contracts.precision import BUILTIN_CONTRACTS
    from ..implementations import FIXED, PARAMETRIZED, instantiate

    if args.contracts:
        for _, c in sorted(BUILTIN_CONTRACTS.items()):
            print(c.describe())
        return 0
    print(f"{'implementation':<28} {'family':<9} {'arch':<9} contracts / constraints")
    for name in sorted(FIXED):
        impl = FIXED[name]()
        print(f"{name:<28} {impl.family:<9} {impl.required_arch():<9} {impl.contracts_summary()}")
        cons = impl.constraints_summary()
        if cons:
            print(f"{'':<48} {cons}")
    for name, kind in sorted(PARAMETRIZED.items()):
        try:
            impl = instantiate(kind, {})
            print(f"{name + ' (params)':<28} {impl.family:<9} {impl.required_arch():<9} {impl.contracts_summary()}")
        except ValueError:  # required parameters (custom): describe it instead
            print(f"{name + ' (params)':<28} {name.split('.')[0]:<9} {'':<9} {kind.description}")
        for p in kind.params:
            extra = f" one of {list(p.choices)}" if p.choices else ""
            print(f"{'':<48} {p.name}: {p.kind}, default {p.default!r}{extra}{(' - ' + p.help) if p.help else ''}")
    if args.resources:
        return _list_resources(args)
    return 0


def _list_resources(args) -> int:
    from ..build.extension import BuildFailure, build_extensions, plan_extensions
    from ..device import parse_arch, probe_device
    from ..implementations import FIXED, PARAMETRIZED, instantiate

    dev = probe_device()
    cc = dev.cc_int if dev else parse_arch(args.arch or "sm_90")[0]
    impls = [f() for f in FIXED.values()]
    for kind in PARAMETRIZED.values():
        try:
            impls.append(instantiate(kind, {}))
        except ValueError:  # needs parameters (custom): nothing to show by default
            pass
    reqs = [(i, i.build_request(i.target_arch(cc))) for i in impls if i.min_cc <= cc]
    reqs = [(i, r) for i, r in reqs if r is not None]
    built = build_extensions(plan_extensions([r for _, r in reqs]), cache_dir=args.cache_dir, jobs=args.jobs,
                             progress=not args.no_progress)
    print(f"\n{'implementation':<48} {'arch':<8} {'regs':>5} {'smem B':>8} {'spill st/ld':>12}")
    for impl, req in reqs:
        ext = next((b for b in built.values() if b.plan.group == req.group and b.plan.arch == req.arch), None)
        if ext is None or isinstance(ext, BuildFailure):
            print(f"{impl.name[:48]:<48} {req.arch:<8} BUILD_ERROR")
            continue
        r = ext.resources_for(impl.kernel_filter)
        if r:
            print(f"{impl.name[:48]:<48} {req.arch:<8} {r['registers']:>5} {r['smem_bytes']:>8} "
                  f"{r['spill_stores']:>5}/{r['spill_loads']:<6}")
            for warning in r.get("perf_warnings", ()):
                print(f"{'':<48} ptxas performance loss: {warning}")
    return 0


def cmd_env(args) -> int:
    from ..device import probe_device
    from ..receipt import environment
    from ..telemetry import Telemetry

    dev = probe_device()
    tel = Telemetry(dev.index) if dev else None
    rec = environment(dev, tel.driver_version() if tel else None)
    if dev is None:
        rec["gpu"] = "none: no CUDA device visible to torch"
    if tel and tel.available:
        rec["telemetry_now"] = tel.sample()
    if args.json:
        print(json.dumps(rec, indent=2, default=str))
    else:
        for k, v in rec.items():
            print(f"{k:<20} {v}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("list", help="implementations with their contracts, constraints and architectures")
    p.add_argument("--contracts", action="store_true", help="list the built-in precision contracts")
    p.add_argument("--resources", action="store_true", help="build and show ptxas registers/smem/spills")
    add_build_options(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("env", help="the receipt fields of this machine")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_env)
