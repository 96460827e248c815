"""python -m schedsim compare|sweep|evaluate (schedsim/cli.py)."""
import sys

from .cli import main

sys.exit(main())
