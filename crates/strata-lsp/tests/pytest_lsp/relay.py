"""Runs the command given with our standard input, and copies its standard output both to
ours and to the file named by $STRATA_LSP_RECORD: every byte the server sends, to search."""

import os
import subprocess
import sys

with open(os.environ["STRATA_LSP_RECORD"], "ab") as record:
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
    out = sys.stdout.buffer
    while chunk := child.stdout.read1(65536):
        record.write(chunk)
        record.flush()
        out.write(chunk)
        out.flush()
    sys.exit(child.wait())
