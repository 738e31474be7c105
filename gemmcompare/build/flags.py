"""Which nvcc flags a spec may give a custom kernel, and how every flag reaches nvcc intact.

A kernel author tunes a kernel; the harness decides what is compiled, for which architecture, where the
output goes and which headers are seen. So a user flag must be on an allow-list (matched whole), and
everything else is refused at validation with the flag named. The list:

  -DNAME, -DNAME=VALUE, -UNAME    macros (VALUE: letters, digits and _ . + -)
  -O0 .. -O3, -lineinfo           optimisation level, line information for profilers
  --use_fast_math, --ftz= --prec-div= --prec-sqrt= --fmad= (true|false)
  -maxrregcount=N, --extra-device-vectorization, --restrict, -std=c++17|c++20,
  --expt-relaxed-constexpr, --extended-lambda, -w, -Wno-deprecated-gpu-targets,
  --diag-suppress=N[,N...], --resource-usage
  -Xptxas=OPT[,OPT...] / --ptxas-options=...   ptxas options that only tune or report: -v, -O0..3,
                                  -maxrregcount=N, -dlcm=, -dscm=, -warn-spills, -warn-lmem-usage, ...

torch.utils.cpp_extension writes flags into build.ninja joined by spaces, and ninja runs each command
through /bin/sh, so a flag like `-DX=1;rm -rf ~` would be two commands. `ninja_shell_arg` quotes each
flag for the shell and escapes `$` for ninja, so nvcc receives every flag as the one argument it was.
"""

from __future__ import annotations

import re
import shlex

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VALUE = r"[A-Za-z0-9_.+-]*"  # no quotes, spaces, commas (nvcc splits lists at commas) or shell characters
_BOOL = r"(true|false)"

_PTXAS_ALLOWED = re.compile("|".join([
    r"-v", r"--verbose", r"-O[0-3]", r"--opt-level=[0-3]", r"--?maxrregcount=\d{1,3}",
    r"-dlcm=(ca|cg|cs|lu|cv)", r"--def-load-cache=(ca|cg|cs|lu|cv)",
    r"-dscm=(wb|cg|cs|wt)", r"--def-store-cache=(wb|cg|cs|wt)",
    r"-warn-spills", r"--warn-on-spills", r"-warn-lmem-usage", r"--warn-on-local-memory-usage",
    r"-warn-double-usage", r"--warn-on-double-precision-use",
    r"-allow-expensive-optimizations", rf"--allow-expensive-optimizations={_BOOL}",
]))

_ALLOWED = re.compile("|".join([
    rf"-D{_NAME}(={_VALUE})?", rf"--define-macro={_NAME}(={_VALUE})?",
    rf"-U{_NAME}", rf"--undefine-macro={_NAME}",
    r"-O[0-3]", r"-lineinfo", r"--generate-line-info",
    r"--?use_fast_math", rf"--?(ftz|prec-div|prec-sqrt|fmad)={_BOOL}",
    r"--?maxrregcount=\d{1,3}", r"--?extra-device-vectorization", r"--?restrict",
    r"-std=c\+\+(17|20)", r"--std=c\+\+(17|20)",
    r"--?expt-relaxed-constexpr", r"--?expt-extended-lambda", r"--?extended-lambda",
    r"-w", r"--disable-warnings", r"-Wno-deprecated-gpu-targets", r"-Wno-deprecated-declarations",
    r"--?(diag-suppress|diag-warn|diag-error)=\d{1,5}(,\d{1,5})*",
    r"--?res-usage", r"--resource-usage",
]))

ALLOWED_SUMMARY = ("-DNAME[=VALUE], -UNAME, -O0..-O3, -lineinfo, --use_fast_math, --ftz/--prec-div/--prec-sqrt/"
                   "--fmad=true|false, -maxrregcount=N, --extra-device-vectorization, --restrict, "
                   "-std=c++17|c++20, --expt-relaxed-constexpr, --extended-lambda, -w, --diag-suppress=N, "
                   "--resource-usage, -Xptxas=OPT[,OPT] (-v, -O0..3, -maxrregcount=N, -dlcm=, -dscm=, "
                   "-warn-spills, -warn-lmem-usage, ...)")

# Why some well-known flags are refused (a refused flag not listed here gets the allow-list instead).
_REFUSED = (
    (("-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code"),
     "the architecture is set by gemmcompare (use the entry's `arch:`)"),
    (("-o", "--output-file", "-odir", "--output-directory", "--keep", "-keep", "--keep-dir", "-keep-dir",
      "--save-temps", "-save-temps"), "gemmcompare decides what is written and where"),
    (("-I", "-isystem", "--include-path", "--system-include", "-include", "--pre-include"),
     "include paths are gemmcompare's (headers beside your sources are found already)"),
    (("-ccbin", "--compiler-bindir", "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options",
      "-Xnvlink", "--nvlink-options", "-Xarchive", "--archive-options", "-l", "--library", "-L",
      "--library-path"), "the host compiler, the linker and their options are gemmcompare's"),
    (("-run", "--run", "--run-args", "-run-args", "--options-file", "-optf", "--dryrun", "-dryrun"),
     "nothing is run or read at build time but the sources"),
    (("-E", "-c", "-dc", "-dw", "-dlink", "-cubin", "-ptx", "-fatbin", "-lib", "-link", "-rdc",
      "--relocatable-device-code", "--compile", "--preprocess", "-M", "-MD", "-MF", "-MM", "-MMD"),
     "gemmcompare decides what is compiled and how it is linked"),
    (("-G", "--device-debug", "-g", "--debug"),
     "debug builds are not worth timing (-lineinfo maps machine code to source lines)"),
)


def _refusal(flag: str) -> str | None:
    for prefixes, why in _REFUSED:
        for prefix in prefixes:
            if flag == prefix or flag.startswith(prefix + "=") or (prefix in ("-I", "-L", "-l", "-o") and flag.startswith(prefix)):
                return why
    return None


def check_flag(flag) -> str | None:
    """Why a user flag is refused, or None if it may be passed to nvcc."""
    if not isinstance(flag, str) or not flag.startswith("-"):
        return f"flag {flag!r} must be one nvcc option starting with '-' (each flag a separate list item)"
    if any(ch.isspace() for ch in flag):
        return f"flag {flag!r} contains white space: give each option as its own list item"
    if _ALLOWED.fullmatch(flag):
        return None
    for prefix in ("-Xptxas=", "--ptxas-options="):
        if flag.startswith(prefix):
            bad = [opt for opt in flag[len(prefix):].split(",") if not _PTXAS_ALLOWED.fullmatch(opt)]
            if not bad:
                return None
            return (f"flag {flag!r}: ptxas option(s) {bad} not allowed; allowed: -v, -O0..3, -maxrregcount=N, "
                    f"-dlcm=, -dscm=, -warn-spills, -warn-lmem-usage, -warn-double-usage, "
                    f"--allow-expensive-optimizations")
    if flag in ("-Xptxas", "--ptxas-options"):
        return f"flag {flag!r}: write ptxas options as one item, -Xptxas=OPT[,OPT]"
    why = _refusal(flag)
    if why:
        return f"flag {flag!r} is not allowed: {why}"
    if flag.startswith(("-D", "-U", "--define-macro", "--undefine-macro")):
        return (f"flag {flag!r} is not allowed: a macro is -DNAME or -DNAME=VALUE, NAME a C identifier and VALUE "
                f"letters, digits and _ . + - only")
    return f"flag {flag!r} is not one a kernel may set; allowed: {ALLOWED_SUMMARY}"


def ninja_shell_arg(arg: str) -> str:
    """`arg` written so that ninja's variable expansion and then /bin/sh give it back as one argument."""
    return shlex.quote(arg).replace("$", "$$")


def ninja_safe_path(path: str) -> str | None:
    """Why a path cannot be written into build.ninja (torch does not escape these), or None."""
    for ch, name in (("$", "'$'"), ("\n", "a newline"), ("\r", "a carriage return"), (":", "':'")):
        if ch in path:
            return f"the path {path!r} contains {name}, which the build file (ninja) cannot carry; rename it"
    return None
