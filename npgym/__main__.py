"""``python -m npgym`` runs the command line, like the ``npgym`` script."""

from npgym.cli import main

main()
