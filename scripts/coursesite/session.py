"""Whether this process serves the site (`mkdocs serve`, `make serve`), and with `--dirty`.

Decided once, when MkDocs starts (coursesite.pipeline's on_startup), and read by every stage that
behaves differently under serve. MkDocs loads the hook file again for each rebuild under serve;
this module is imported as part of the installed package, so it lives as long as the process.
"""

from dataclasses import dataclass


@dataclass
class Session:
    serving: bool = False  # `mkdocs serve`: a failure shows in the browser, the server keeps going
    dirty: bool = False  # `mkdocs serve --dirty`: a save rebuilds the pages it changes


SESSION = Session()


def start(command: str, dirty: bool) -> None:
    SESSION.serving = command == "serve"
    SESSION.dirty = SESSION.serving and dirty
