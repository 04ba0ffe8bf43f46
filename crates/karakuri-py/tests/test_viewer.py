"""karakuri.viewer: the live viewer from Python (MuJoCo's passive-viewer pattern), read and
steered here by a minimal WebSocket client of the standard library, as the page does."""

import base64
import json
import os
import socket
import struct
import time
import urllib.request
from pathlib import Path

import pytest

import karakuri
import karakuri.viewer

SCENE = Path(__file__).resolve().parents[3] / "tests" / "scenes" / "live_arm.yaml"


class Page:
    """A WebSocket client of the viewer's /ws (text frames only)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def send(self, obj):
        data = json.dumps(obj).encode()
        mask = os.urandom(4)
        assert len(data) < 126
        self.sock.sendall(bytes([0x81, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def read(self):
        def exact(n):
            out = b""
            while len(out) < n:
                out += self.sock.recv(n - len(out))
            return out

        b0, b1 = exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", exact(8))[0]
        return json.loads(exact(n)) if b0 & 0x0F == 1 else None


def settle(viewer, world, seconds=0.2):
    """Lets the server take what a page sent (sync applies it), without stepping."""
    time.sleep(seconds)


def test_launch_returns_at_once_serves_the_page_and_sync_applies_the_page():
    world = karakuri.World.from_file(str(SCENE))
    with karakuri.viewer.launch(world) as viewer:
        assert viewer.url == f"http://127.0.0.1:{viewer.port}/" and viewer.port > 0
        html = urllib.request.urlopen(viewer.url, timeout=5).read().decode()
        assert '"kind":"live"' in html and 'id="karakuri-status"' in html
        page = Page(viewer.port)
        time.sleep(0.2)
        assert viewer.pages == 1
        for _ in range(10):
            world.step()
            assert viewer.sync()
        # frames go out at most 60 times a second: a sync 1/60 s later sends the world as it is
        time.sleep(0.05)
        assert viewer.sync()
        frame = page.read()
        while frame["steps"] < 10:
            frame = page.read()
        assert frame["t"] == pytest.approx(world.time) and len(frame["p"]) == 14
        # the slider: the servo's target; the arm follows
        page.send({"cmd": "target", "joint": 0, "value": 1.0})
        settle(viewer, world)
        for _ in range(1000):
            if viewer.sync():
                world.step()
        assert world.q[0] == pytest.approx(1.0, abs=0.05)
        # pause: sync says not to step until a page says so; one step lets one through
        page.send({"cmd": "pause"})
        settle(viewer, world)
        assert viewer.sync() is False and viewer.paused
        page.send({"cmd": "step"})
        settle(viewer, world)
        assert viewer.sync() is True and viewer.sync() is False
        page.send({"cmd": "play"})
        settle(viewer, world)
        assert viewer.sync() is True
        # reset: the world as it was at launch
        page.send({"cmd": "reset"})
        settle(viewer, world)
        viewer.sync()
        assert world.time == 0.0
    assert not viewer.is_running()


def test_other_addresses_than_loopback_are_refused():
    world = karakuri.World.from_file(str(SCENE))
    with pytest.raises(OSError, match="loopback"):
        karakuri.viewer.launch(world, host="0.0.0.0")
    with pytest.raises(ValueError, match="not an IP address"):
        karakuri.viewer.launch(world, host="localhost:80")
