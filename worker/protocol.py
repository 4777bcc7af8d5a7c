# apiparity worker: runs inside the target interpreter, sent on stdin by apiparity.
#
# It holds no policy: apiparity (C) decides what to ask and how to judge the
# answers; this program only does what must happen inside the interpreter.
#
# Protocol: every message is a frame, a 4-byte big-endian length followed by that
# many bytes of UTF-8 JSON, on the stdin/stdout that apiparity gave us. Before
# anything else runs, the protocol descriptors are moved aside and fd 1 is pointed
# at fd 2, so a print() by torch, a plugin or a probe can never corrupt a frame.
#
# Works on Python 3.11 to 3.14 and torch 1.13 to 2.14; keep it that way (no
# match statements beyond 3.10, no new-only stdlib).

import base64
import gc
import io
import json
import math
import os
import re
import struct
import sys
import time

PROTO = 1
MAX_FRAME = 64 << 20
# Written raw just before the hello: whatever the interpreter printed on stdout
# before this program ran (a sitecustomize, a .pth hook) comes before it, and
# apiparity skips it as noise instead of misreading it as a frame.
SYNC = b"\x00apiparity-worker-sync\x00"


def _take_protocol_fds():
    rfd = os.dup(0)
    wfd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return rfd, wfd


def _read_exact(fd, n):
    """n bytes of fd (a bytearray), or None at its end. Read into one
    buffer: os.read(fd, n) would allocate n bytes for each pipe's worth it
    returns, which for a frame of megabytes (a sample's tensors) is most of
    the frame's time."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    f = io.FileIO(fd, "rb", closefd=False)
    while got < n:
        k = f.readinto(view[got:])
        if not k:
            return None
        got += k
    return buf


def recv(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    if n > MAX_FRAME:
        raise ValueError("oversized frame: %d bytes" % n)
    body = _read_exact(fd, n)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


# ---------------------------------------------------------------- values on the wire
#
# Any value a probe, torch or a plugin produces must reach apiparity as data:
# a frame that its strict JSON reader (jansson) refuses would cost the whole
# environment. So every message is sent through _wire(), and:
#  - a string that is clean (encodes as UTF-8, holds no NUL) travels as is;
#  - in a trace value (_norm) any other string travels as {"$bytes": base64 of
#    its UTF-8, lone surrogates encoded as by Python's "surrogatepass"}, so it
#    round-trips exactly and traces compare byte for byte;
#  - in text that people read (reasons, step names, output, messages: _text)
#    a NUL is written as the four characters \x00 and a lone surrogate, which
#    is what Python makes of bytes that are not UTF-8, as \udcNN;
#  - a float that JSON cannot hold travels as {"$float": "nan"|"inf"|"-inf"},
#    an integer beyond 64 bits as {"$int": "digits"} (hex digits with a 0x
#    prefix past Python's limit on decimal conversion);
#  - anything else is its repr(), as text.
# A single-key object named "$bytes", "$float" or "$int" with a string value
# is therefore always such a tagged value (_norm makes no other objects).

_INT64 = 1 << 63


def _clean(s):
    """Whether s can travel as a JSON string as is."""
    if "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(s):
    """s as clean text, for what people read (see above)."""
    if _clean(s):
        return s
    return s.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _number(v):
    """A number as a strict JSON reader takes it (see above)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else {"$float": repr(v)}
    if -_INT64 <= v < _INT64:
        return int(v)
    try:
        return {"$int": str(v)}
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return {"$int": hex(v)}


def _wire(v):
    """v with every string clean text, every number a JSON one, anything
    else its repr: what send() puts in a frame (see above)."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        return _text(v)
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, dict):
        return {_text(str(k)): _wire(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_wire(x) for x in v]
    return _text(repr(v))


def frame(msg):
    """msg as the bytes of one frame (what send writes)."""
    body = json.dumps(_wire(msg), allow_nan=False).encode("utf-8")
    return struct.pack(">I", len(body)) + body


def send_frame(fd, data):
    """Writes data (a frame) whole; a short write goes on from where it
    stopped, without copying what is left."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def send(fd, msg):
    send_frame(fd, frame(msg))


def _exc_text(e):
    return "%s: %s" % (type(e).__name__, e)


class ProtocolError(Exception):
    """A request that lacks what apiparity must send."""


def _limit(req, key):
    """A limit in seconds from the request. apiparity sets every limit; a
    missing one is a protocol error, never a default chosen here."""
    if not isinstance(req.get(key), (int, float)) or isinstance(req.get(key), bool):
        raise ProtocolError("%s request without the limit %r" % (req.get("op"), key))
    return float(req[key])
