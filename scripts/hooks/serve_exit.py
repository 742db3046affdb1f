"""MkDocs hook: under `mkdocs serve`, SIGTERM and SIGHUP stop the server the way Ctrl-C does.

`mkdocs serve` builds into a temporary folder (`mkdtemp(prefix="mkdocs_")`, ~30 MB for this
site) and removes it, and calls the hooks' on_shutdown, only when it leaves through
KeyboardInterrupt. A server stopped by a process manager, a test's `terminate()` or a closed
terminal was killed outright and left the folder behind: hundreds of them had filled /tmp.
Turning those signals into KeyboardInterrupt gives every way of stopping the same clean exit.
`make build` never calls on_serve.
"""

import signal
import threading
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def stop_like_ctrl_c(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def on_serve(server, config, builder):
    if threading.current_thread() is threading.main_thread():  # signal.signal's requirement
        for signum in STOP_SIGNALS:
            signal.signal(signum, stop_like_ctrl_c)
    return server
