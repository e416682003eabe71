"""Runs a command with its standard input, output and error relayed, and appends every byte the
command writes on standard output and standard error to a log file: `python tee.py LOG CMD
ARG...`. The tests search that log for the canary secret: every byte a client received over
stdio, and every line the server logged."""

import subprocess
import sys
import threading
from typing import IO


def main() -> int:
    log_path, argv = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    child_in, child_out, child_err = child.stdin, child.stdout, child.stderr
    lock = threading.Lock()

    def pump_in() -> None:
        for chunk in iter(lambda: sys.stdin.buffer.read1(65536), b""):
            child_in.write(chunk)
            child_in.flush()
        child_in.close()

    def pump_out(source: "IO[bytes]", sink: "IO[bytes]") -> None:
        with open(log_path, "ab") as log:
            for chunk in iter(lambda: source.read1(65536), b""):  # type: ignore[attr-defined]
                with lock:
                    log.write(chunk)
                    log.flush()
                sink.write(chunk)
                sink.flush()

    threading.Thread(target=pump_in, daemon=True).start()
    errors = threading.Thread(target=pump_out, args=(child_err, sys.stderr.buffer))
    errors.start()
    pump_out(child_out, sys.stdout.buffer)
    errors.join()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
