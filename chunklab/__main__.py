"""``python -m chunklab``: see :mod:`chunklab.cli`."""
import sys

from .cli import main

sys.exit(main())
