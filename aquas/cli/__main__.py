"""``python -m aquas.cli``."""

from aquas.cli import main

main()
