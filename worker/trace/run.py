# `apiparity trace`'s side inside the environment, run as
#   python -c THIS CONFIG PROGRAM ARGS...
# CONFIG is JSON: {"tracer": the source of sitecustomize.py beside this file,
# "max_cases", "keep_values"}. It writes the tracer into a directory of its
# own, puts that first on PYTHONPATH, and runs PROGRAM with this process's
# stdin and stdout (the program's own) and two pipes: the tracer's journal
# and the program's stderr. On its own stderr it sends frames, each a type
# byte, a 4-byte big-endian length and the payload:
#   b"e": bytes the program wrote to its stderr;
#   b"j": a line of the tracer's journal (JSON, without its newline);
#   b"x": at the end, JSON {"returncode": N} (negative: killed by signal -N)
#         or {"error": why} when PROGRAM could not be started.
# Nothing here reads what the program or the tracer wrote: apiparity does.
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile


def frame(kind, payload):
    data = kind + struct.pack(">I", len(payload)) + payload
    while data:
        data = data[os.write(2, data):]


def main():
    cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
    home = tempfile.mkdtemp(prefix="apiparity-trace-")
    try:
        with open(os.path.join(home, "sitecustomize.py"), "w") as f:
            f.write(cfg["tracer"])
        return run(cfg, argv, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run(cfg, argv, home):
    jr, jw = os.pipe()
    er, ew = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = home + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["APIPARITY_TRACE"] = json.dumps({"fd": jw, "max_cases": cfg.get("max_cases", 8),
                                         "keep_values": cfg.get("keep_values", False)})
    try:
        proc = subprocess.Popen(argv, env=env, pass_fds=(jw,), stderr=ew)
    except OSError as e:
        frame(b"x", json.dumps({"error": "%s: %s" % (argv[0], e.strerror)}).encode())
        return 0
    os.close(jw)
    os.close(ew)
    pending, open_fds = b"", {jr: b"j", er: b"e"}
    while open_fds:
        # after the program has ended, what its children still hold open
        # is not waited for
        ready = select.select(list(open_fds), [], [], 0.2)[0]
        if not ready:
            if proc.poll() is not None:
                break
            continue
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del open_fds[fd]
            elif open_fds[fd] == b"e":
                frame(b"e", chunk)
            else:
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    frame(b"j", line)
    if pending:
        frame(b"j", pending)
    frame(b"x", json.dumps({"returncode": proc.wait()}).encode())
    return 0


sys.exit(main())
