# Unit tests of worker/protocol.py: frames, values on the wire and the
# limits a request must carry (see tests/worker/workertest.py).

import json
import os
import struct
import unittest

from workertest import W, frame


class Framing(unittest.TestCase):
    def test_send_writes_what_recv_reads(self):
        r, w = os.pipe()
        try:
            W.send(w, {"type": "result", "data": [1, "x"]})
            self.assertEqual(W.recv(r), {"type": "result", "data": [1, "x"]})
        finally:
            os.close(r)
            os.close(w)

    def test_a_frame_of_megabytes_crosses_a_pipe_whole(self):
        # far past a pipe's capacity: recv takes it in many reads, send in
        # as many writes as the reader lets through
        big = {"type": "sample", "i": 0, "x": "0123456789abcdef" * (1 << 18)}
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            W.send(w, big)
            os._exit(0)
        os.close(w)
        try:
            self.assertEqual(W.recv(r), big)
            self.assertIsNone(W.recv(r))
        finally:
            os.close(r)
            os.waitpid(pid, 0)

    def test_a_frame_is_a_big_endian_length_then_that_many_bytes_of_json(self):
        r, w = os.pipe()
        try:
            W.send(w, {"k": "\u00e9", "n": [1, 2]})
            data = os.read(r, 1 << 16)
        finally:
            os.close(r)
            os.close(w)
        self.assertEqual(data[:4], struct.pack(">I", len(data) - 4))
        self.assertEqual(json.loads(data[4:].decode("utf-8")), {"k": "\u00e9", "n": [1, 2]})

    def test_recv_answers_none_at_the_end_and_for_a_cut_frame(self):
        for data in (b"", b"\x00\x00", frame({"n": 1})[:-1]):
            r, w = os.pipe()
            try:
                os.write(w, data)
                os.close(w)
                w = None
                self.assertIsNone(W.recv(r), data)
            finally:
                os.close(r)
                if w is not None:
                    os.close(w)

    def test_an_oversized_frame_is_refused(self):
        r, w = os.pipe()
        try:
            os.write(w, struct.pack(">I", W.MAX_FRAME + 1))
            with self.assertRaises(ValueError):
                W.recv(r)
        finally:
            os.close(r)
            os.close(w)


class WireValues(unittest.TestCase):
    """What send() makes of values a strict JSON reader would refuse."""

    def test_clean_text_travels_as_is_and_other_text_is_escaped(self):
        self.assertEqual(W._wire("plain \u00e9"), "plain \u00e9")
        self.assertEqual(W._wire("a\x00b"), "a\\x00b")
        self.assertEqual(W._wire("bad\udc80"), "bad\\udc80")

    def test_numbers_json_cannot_hold_are_tagged(self):
        self.assertEqual(W._wire([float("nan"), float("inf"), -float("inf"), 1.5]),
                         [{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}, 1.5])
        self.assertEqual(W._wire(1 << 63), {"$int": str(1 << 63)})
        self.assertEqual(W._wire(-(1 << 63)), -(1 << 63))
        self.assertIs(W._wire(True), True)

    def test_keys_become_text_and_anything_else_its_repr(self):
        class R(object):
            def __repr__(self):
                return "<r\x00>"
        self.assertEqual(W._wire({1: (2, R()), "k": None}), {"1": [2, "<r\\x00>"], "k": None})

    def test_what_send_writes_a_strict_reader_takes(self):
        def refuse(c):
            raise ValueError(c)
        r, w = os.pipe()
        try:
            W.send(w, {"x": float("nan"), "s": "\udcff", "big": 1 << 80})
            body = os.read(r, 1 << 16)[4:].decode("utf-8")
        finally:
            os.close(r)
            os.close(w)
        self.assertEqual(json.loads(body, parse_constant=refuse),
                         {"x": {"$float": "nan"}, "s": "\\udcff", "big": {"$int": str(1 << 80)}})


class Limits(unittest.TestCase):
    def test_a_limit_is_taken_from_the_request(self):
        self.assertEqual(W._limit({"timeout_s": 3}, "timeout_s"), 3.0)
        self.assertEqual(W._limit({"timeout_s": 0.5}, "timeout_s"), 0.5)

    def test_a_missing_or_malformed_limit_is_a_protocol_error(self):
        for req in ({"op": "probe"}, {"op": "probe", "timeout_s": "30"},
                    {"op": "probe", "timeout_s": None}, {"op": "probe", "timeout_s": True}):
            with self.assertRaises(W.ProtocolError) as cm:
                W._limit(req, "timeout_s")
            self.assertIn("timeout_s", str(cm.exception))

    def test_probe_and_test_runs_refuse_a_request_without_limits(self):
        with self.assertRaises(W.ProtocolError):
            W.op_probe({"op": "probe", "probe": {"name": "p", "code": "pass", "bind": []}})
        with self.assertRaises(W.ProtocolError):
            W.op_tests_run({"op": "tests_run", "root": "/nonexistent", "file": "x.py",
                            "nodes": [], "timeout_s": 1})


if __name__ == "__main__":
    unittest.main()
