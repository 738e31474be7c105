"""library_noise.py: the line libkineto writes to fd 2 at the first profiler start on a thread is kept out of a
run's output, and nothing else is (CPU only: the profiler is a fake that writes what libkineto writes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# as the H200 printed it (experiments/studies/fp8/h200/hopper-fp8-fc56fed/pytest_fp8_hopper.log; every run.log there too)
NOISE = "ERROR: External init callback must run in same thread as registerClient (166033088 != -97517248)"


def _child(body: str) -> subprocess.CompletedProcess:
    code = f"import os, sys, threading\nNOISE = {NOISE!r}\n" + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    # decoded as they were written: text=True would read a progress bar's \r as a newline
    return subprocess.CompletedProcess(out.args, out.returncode, out.stdout.decode(), out.stderr.decode())


def test_the_noise_line_is_dropped_and_every_other_line_passes_in_order():
    out = _child("""
        from gemmcompare.library_noise import without_known_noise
        before = os.fstat(2)
        os.write(2, b"before\\n")
        with without_known_noise():
            os.write(2, (NOISE + "\\n").encode())
            os.write(2, b"ERROR: a real one\\n")
            print("python's own", file=sys.stderr)
            t = threading.Thread(target=lambda: os.write(2, b"another thread\\n")); t.start(); t.join()
            os.write(2, NOISE[:30].encode()); os.write(2, (NOISE[30:] + "\\n").encode())  # one line in two writes
            os.write(2, b"rows 50%\\r")  # a progress bar's line: no newline
            os.write(2, (NOISE + " and more\\n").encode())  # begins like it, is not it
            os.write(2, (NOISE.replace("166033088", "-1") + "\\n").encode())  # another pair of thread ids
        os.write(2, b"after\\n")
        after = os.fstat(2)
        print((before.st_dev, before.st_ino) == (after.st_dev, after.st_ino))  # fd 2 is the real one again
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"]
    assert out.stderr == ("before\nERROR: a real one\npython's own\nanother thread\nrows 50%\r"
                          f"{NOISE} and more\nafter\n")


def test_only_the_block_is_filtered():
    out = _child("""
        from gemmcompare.library_noise import without_known_noise
        with without_known_noise():
            pass
        os.write(2, (NOISE + "\\n").encode())
    """)
    assert out.returncode == 0 and out.stderr == NOISE + "\n"


def test_a_process_that_dies_inside_the_block_still_gets_its_last_lines_out():
    """The filter is a process of its own: it reads to the end of the pipe whatever became of its writer (an
    abort's message is the line a user needs most)."""
    out = _child("""
        from gemmcompare.library_noise import without_known_noise
        with without_known_noise():
            os.write(2, (NOISE + "\\n").encode())
            os.write(2, b"python: kernel.cu:12: launch: Assertion `n > 0' failed.\\n")
            os.write(2, b"no newline at the end")
            os._exit(134)
    """)
    assert out.returncode == 134
    assert out.stderr == "python: kernel.cu:12: launch: Assertion `n > 0' failed.\nno newline at the end"


def test_without_an_interpreter_for_the_filter_the_block_runs_unfiltered():
    out = _child("""
        from gemmcompare import library_noise
        sys.executable = ""
        with library_noise.without_known_noise():
            os.write(2, b"still here\\n")
        os.write(2, b"after\\n")
    """)
    assert out.returncode == 0 and out.stderr == "still here\nafter\n"


def test_a_workers_first_cupti_start_on_its_warm_up_thread_writes_no_library_line():
    """The worker's path (worker.CudaSession.prewarm -> timing_methods.warm_up_in_background): the first
    KernelClock start, on the warm-up thread, is where libkineto writes its line; a later start is left alone."""
    out = _child("""
        from gemmcompare.contracts import timing_methods as tm
        starts = []

        class FakeProfile:  # writes to fd 2 what libkineto writes at its set-up, and a line of its own
            def __enter__(self):
                starts.append(threading.current_thread().name)
                if len(starts) == 1:
                    os.write(2, (NOISE + "\\n").encode())
                os.write(2, f"start {len(starts)}\\n".encode())
                return self
            def __exit__(self, *exc):
                return False
            function_events = []

        tm._cupti_profiler = FakeProfile
        tm.warm_up_in_background()
        tm.finish_warm_up()
        clock = tm.KernelClock()
        assert clock.start(), clock.error
        clock.stop()
        print(*starts)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cupti-warm-up", "MainThread"]
    assert out.stderr == "start 1\nstart 2\n"


def test_a_first_start_on_the_main_thread_leaves_fd_2_alone():
    """libkineto's line needs another thread than torch's importer: `profile`'s timing process and an
    --in-process run start the profiler on the main thread, and no filter is started around it."""
    out = _child("""
        from gemmcompare.contracts import timing_methods as tm

        class FakeProfile:
            def __enter__(self):
                os.write(2, b"started\\n")
                return self
            def __exit__(self, *exc):
                return False
            function_events = []

        tm._cupti_profiler = FakeProfile
        for _ in range(2):
            clock = tm.KernelClock()
            assert clock.start(), clock.error
            clock.stop()
        print(tm._first_start["done"], "gemmcompare.library_noise" in sys.modules)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"] and out.stderr == "started\nstarted\n"


def test_a_process_started_inside_the_block_does_not_hold_it_up_and_its_lines_still_come():
    """A process started inside the block (inductor's compile workers, say) keeps its copy of the pipe: leaving
    the block does not wait for it past a second, and its lines go on through the filter."""
    out = _child("""
        import subprocess, time
        from gemmcompare.library_noise import without_known_noise
        t0 = time.monotonic()
        with without_known_noise():
            late = subprocess.Popen([sys.executable, "-c", "import os, time; time.sleep(5); "
                                     "os.write(2, b'late line\\\\n'); os.write(2, (%r + '\\\\n').encode())" % NOISE])
        print(f"{time.monotonic() - t0:.1f}")
        late.wait()
    """)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 4 and out.stderr == "late line\n"
