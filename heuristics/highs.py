"""HiGHS models that say nothing: npgym's commands write datasets to standard output.

highspy (1.16) prints its banner to the C library's standard output when a process makes its
first ``Highs`` object, before any option can turn output off; a row stream piped out of
``npgym generate`` would hold it. The first construction therefore runs with file descriptor 1
pointed at ``/dev/null`` (C buffers flushed before it is restored); a thread writing to standard
output at that moment would lose that write.
"""

from __future__ import annotations

import ctypes
import os
import sys

import highspy

_banner_printed = False


def quiet_highs() -> highspy.Highs:
    """A new ``Highs`` with ``output_flag`` off, whose construction printed nothing."""
    global _banner_printed
    if _banner_printed:
        highs = highspy.Highs()
    else:
        sys.stdout.flush()
        saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            highs = highspy.Highs()
            ctypes.CDLL(None).fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(devnull)
        _banner_printed = True
    highs.setOptionValue("output_flag", False)
    return highs
