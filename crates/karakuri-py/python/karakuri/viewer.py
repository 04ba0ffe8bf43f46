"""The live viewer: watch a :class:`karakuri.World` in a browser while your own loop steps it,
as MuJoCo's passive viewer does (``mujoco.viewer.launch_passive``).

>>> import karakuri, karakuri.viewer
>>> world = karakuri.World.from_file("tests/scenes/02_bounce.json")
>>> viewer = karakuri.viewer.launch(world)      # returns at once; open viewer.url
>>> for _ in range(1000):
...     world.step()
...     viewer.sync()                          # the page shows the world (<= 60 frames/s)

The page is the one ``karakuri simulate SCENE --live`` serves (a local server on 127.0.0.1,
the frames over a WebSocket): pause, one step, reset, real time, ctrl+drag a body with a
spring, a slider per actuator, live plots. :meth:`Viewer.sync` applies what the page asked
(actuator targets, the spring's push on the next step, reset to the world at launch) and
returns False while the page has paused the run: ``if viewer.sync(): world.step()`` honours
pause and single steps. Closing the page changes nothing for the world; pages may come and go.
"""

from __future__ import annotations

import webbrowser

from ._native import World, _LiveViewer


class Viewer:
    """A live viewer of one world; made by :func:`launch`."""

    def __init__(self, native: _LiveViewer):
        self._native = native

    def sync(self) -> bool:
        """Shows the world as it is now and applies the page's requests; False while paused."""
        return self._native.sync()

    @property
    def url(self) -> str:
        """The page's address, ``http://127.0.0.1:PORT/``."""
        return self._native.url

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return self._native.port

    @property
    def pages(self) -> int:
        """Pages attached now."""
        return self._native.pages

    @property
    def paused(self) -> bool:
        """A page paused the run."""
        return self._native.paused

    def is_running(self) -> bool:
        """False once :meth:`close` was called."""
        return self._native.is_running()

    def close(self) -> None:
        """Stops the server; the world is untouched."""
        self._native.close()

    def __enter__(self) -> "Viewer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def launch(
    world: World,
    port: int = 0,
    host: str = "127.0.0.1",
    allow_remote: bool = False,
    open_browser: bool = False,
) -> Viewer:
    """Starts the live viewer of ``world`` and returns at once.

    ``port``: 0 for any free port (see :attr:`Viewer.url`). ``host``: a loopback address unless
    ``allow_remote`` (the server has no authentication). ``open_browser``: open the page in the
    default browser. Raises ``OSError`` when the address cannot be bound or is refused.
    """
    viewer = Viewer(_LiveViewer(world, port=port, host=host, allow_remote=allow_remote))
    if open_browser:
        webbrowser.open(viewer.url)
    print(f"karakuri live viewer: {viewer.url}")
    return viewer
