"""The `autocat` command that `pip install .` puts on the environment's PATH.

It runs the command-line tool built and installed with this package
(autocat/bin/autocat), so `autocat train`, `autocat index` and `autocat serve`
work from a virtual environment as from the Debian package.
"""

import os
import pathlib
import sys


def main():
    binary = pathlib.Path(__file__).resolve().parent / "bin" / "autocat"
    if not os.access(binary, os.X_OK):
        sys.exit(f"autocat: {binary} is missing: this copy of the Python module was installed "
                 "without the command-line tool; install it with `pip install .` from the "
                 "source tree, or use the Debian package's /usr/bin/autocat")
    os.execv(binary, ["autocat", *sys.argv[1:]])


if __name__ == "__main__":
    main()
