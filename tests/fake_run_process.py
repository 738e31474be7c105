"""A run on the fake GPU (fake_device.py) in a process of its own, for tests that need a run they can
interrupt with a signal, as a user's Ctrl-C would:

    python tests/fake_run_process.py FOLDER [RUN_ID_TO_RESUME]

Twelve groups of two rows (cuBLAS and torch.mm at six sizes), each group taking 0.3 s; the store is
FOLDER/g.db. Exits 130 when interrupted, 0 when complete.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

SPEC = """\
name: resume
problems:
  - sweep: {m: [256, 512, 1024, 2048, 4096, 8192], n: "=m", k: "=m"}
contracts: [f16_f32acc_tn]
implementations: [library.cublas, library.torch_matmul]
baseline: library.cublas
"""


def main(folder: Path, resume: str | None) -> int:
    import fake_device
    from gemmcompare.runner import parent
    from gemmcompare.runner.parent import Runner, RunOptions
    from gemmcompare.spec import parse_spec

    measure = fake_device.FakeExecutor.run

    def slowly(self, *args, **kwargs):  # time for the test to interrupt between groups
        time.sleep(0.3)
        return measure(self, *args, **kwargs)

    fake_device.FakeExecutor.run = slowly
    parent.build_for = lambda exp, device, opts: fake_device.fake_builds(exp)
    opts = RunOptions(store=folder / "g.db", runs_dir=folder / "runs", progress=False,
                      backend=fake_device.BACKEND, resume=resume)
    out = Runner(parse_spec(SPEC, str(folder / "resume.yaml")), opts, device=fake_device.DEVICE,
                 gpus=fake_device.GPUS[:1]).run()
    return 130 if out.status == "interrupted" else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
