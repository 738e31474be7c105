"""CUTLASS and CuTe GEMM configurations as data.

- config/: one frozen dataclass per kernel template (sm80: CUTLASS 2.x GemmUniversal, sm90: CUTLASS 3.x
  CollectiveBuilder, cute_sm80: a CuTe kernel of our own); fields map one to one to template parameters.
- tags.py: every enum -> C++ spelling, in one place.
- render.py: config -> C++ source text, from the templates in cutlass_configs/templates/.
- catalog.py: the named configurations in cutlass_configs/*.yaml.
- enumerate.py: proposes configurations from cutlass_library's own kernel generator.
- the commands `gemmcompare cutlass list|enumerate` live in cli/cutlass.py.

Nothing here imports the implementation registry or needs a GPU; implementations/cutlass.py wraps a
configuration into an Implementation.
"""
