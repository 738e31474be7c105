"""`list` (implementations, contracts, and with --resources what each kernel uses) and `env` (the
receipt fields of this machine)."""

from __future__ import annotations

import json

from .options import add_build_options, add_json, exit_codes, parser_args, write_json


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
    import sys

    from ..build.extension import BuildFailure, build_extensions, plan_extensions
    from ..arch import parse_arch
    from ..device import probe_device
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
    plans = plan_extensions([r for _, r in reqs])
    # ptxas reports resources only for what it compiles: say so before a cold cache takes minutes
    print(f"\n--resources: building {len(plans)} extension(s) for sm_{cc} to read ptxas's registers, shared memory "
          f"and spills (cached builds load at once; a cold build takes minutes; cache: "
          f"{args.cache_dir or '$GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare'})", file=sys.stderr, flush=True)
    built = build_extensions(plans, cache_dir=args.cache_dir, jobs=args.jobs, progress=not args.no_progress)
    print(f"\n{'arch':<8} {'regs':>5} {'static smem B':>13} {'dynamic smem B':>14} {'spill st/ld':>11}  implementation")
    failed = 0
    for impl, req in reqs:
        ext = next((b for b in built.values() if b.plan.group == req.group and b.plan.arch == req.arch), None)
        if ext is None or isinstance(ext, BuildFailure):
            failed += 1
            print(f"{req.arch:<8} {'BUILD_ERROR':>35}{'':>13}  {impl.name}")
            continue
        r = ext.resources_for(impl.kernel_filter)
        if r:
            dynamic = impl.dynamic_smem_bytes()
            print(f"{req.arch:<8} {r['registers']:>5} {r['smem_bytes']:>13} {dynamic if dynamic else '-':>14} "
                  f"{r['spill_stores']:>5}/{r['spill_loads']:<5}  {impl.name}")
            for warning in r.get("perf_warnings", ()):
                print(f"{'':<8} ptxas performance loss: {warning}")
    print("static smem: ptxas's count; dynamic smem: what the kernel asks for at launch ('-': none or not known)")
    return 1 if failed else 0


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
    if args.json != "-":
        for k, v in rec.items():
            print(f"{k:<20} {v}")
    write_json(args.json, json.dumps(rec, indent=2, default=str))
    return 0


def register(sub) -> None:
    p = sub.add_parser("list", **parser_args(
        "implementations with their contracts, constraints and architectures",
        exit_codes(0, 1, 2, c1="--resources: an extension did not build")))
    p.add_argument("--contracts", action="store_true", help="list the built-in precision contracts")
    p.add_argument("--resources", action="store_true",
                   help="also BUILD every extension (minutes when the cache is cold) and show ptxas registers, static "
                        "and dynamic shared memory and spills, with full names")
    add_build_options(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("env", **parser_args("the receipt fields of this machine", exit_codes(0)))
    add_json(p)
    p.set_defaults(func=cmd_env)
