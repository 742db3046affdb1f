"""Under `mkdocs serve`, SIGTERM and SIGHUP stop the server the way Ctrl-C does.

`mkdocs serve` builds into a temporary folder (`mkdtemp(prefix="mkdocs_")`, ~30 MB for this
site) and removes it, and calls the hooks' on_shutdown, only when it leaves through
KeyboardInterrupt. A server stopped by a process manager, a test's `terminate()` or a closed
terminal was killed outright and left the folder behind: hundreds of them had filled /tmp.
Turning those signals into KeyboardInterrupt gives them the same clean exit, from the first
build on (at startup; and when the server starts, for `mkdocs serve --clean`, which starts up
as a build).
A signal the server was started to ignore (`nohup make serve`) stays ignored. `make build`
never installs the handlers.
"""

import signal
import threading
from types import FrameType

STOP_SIGNALS = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]


def stop_like_ctrl_c(signum: int, frame: FrameType | None) -> None:
    for stop in STOP_SIGNALS:  # a second signal must not interrupt the cleanup
        signal.signal(stop, signal.SIG_IGN)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def install() -> None:
    if threading.current_thread() is not threading.main_thread():  # signal.signal's rule
        return
    for stop in STOP_SIGNALS:
        if signal.getsignal(stop) is not signal.SIG_IGN:
            signal.signal(stop, stop_like_ctrl_c)
