"""`python -m gemmcompare ...`: the same command line as the `gemmcompare` script."""

import sys

from .cli import main

sys.exit(main())
