"""Output files and directories: atomic writes, and the one guard every command that
writes a directory goes through.

The guard (:class:`OutputDir`) makes three promises:

* **Only what aquas created is ever deleted or replaced.**  Every entry the tool creates
  in the directory is recorded in a manifest (``.aquas-manifest.json``); replacing or
  removing an entry that is not in the manifest is refused with a diagnostic.  A project
  named ``..`` or an ``-o .`` therefore cannot wipe the user's own ``synth/`` or ``build/``.
* **One writer at a time.**  An exclusive ``flock`` on ``.aquas.lock`` is held for the
  whole command; a second command on the same directory fails at once with a diagnostic
  naming the holder instead of racing it.
* **A failed command leaves nothing new behind** when it asks for that
  (``transactional=True``): the entries it created are removed, and the directory too when
  this command created it.

Written files get the usual ``0666 & ~umask`` mode (``mkstemp`` alone would make them 0600).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from aquas.diagnostics import AquasError

MANIFEST = ".aquas-manifest.json"
LOCK = ".aquas.lock"
_OWN = {MANIFEST, LOCK}

# Read once: os.umask can only be read by setting it, which would race other threads.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK

#: Names of projects and output entries: no path separators, not hidden, not `.`/`..`.
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
MAX_NAME = 100


def check_name(name: object, what: str) -> str:
    """``name`` as a safe single path component, or an AquasError saying why not."""
    if not isinstance(name, str) or not _NAME.match(name) or set(name) == {"."}:
        raise AquasError(
            f"{what} must be a name of letters, digits, '_', '.', '-' that does not start "
            f"with '.' (got {name!r})"
        )
    if len(name) > MAX_NAME:
        raise AquasError(f"{what} is {len(name)} characters long; at most {MAX_NAME} are allowed")
    return name


def _os_error(e: OSError, path: Path, doing: str) -> AquasError:
    reason = e.strerror or str(e)
    if e.errno == errno.ELOOP:
        reason = "too many levels of symbolic links (a symlink loop)"
    return AquasError(f"cannot {doing} {path}: {reason}")


def write_atomic(path: Path, text: str | bytes) -> None:
    """Writes ``path`` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    if path.is_dir():
        raise AquasError(f"{path} is a directory; expected a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", dir=path.parent)
    except OSError as e:
        raise _os_error(e, path, "write") from None
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise _os_error(e, path, "write") from None
        raise


class OutputDir:
    """The guard of one output directory, used as a context manager (see the module doc)."""

    def __init__(self, path: Path, *, transactional: bool = False) -> None:
        self.path = Path(os.path.abspath(path))
        self.transactional = transactional
        self.created_dir = False
        self.entries: set[str] = set()  # every entry aquas created here (the manifest)
        self.new: list[str] = []  # entries created by this command, in order
        self._lock_fd: int | None = None

    # -- entering and leaving ------------------------------------------------------------

    def __enter__(self) -> OutputDir:
        p = self.path
        try:
            if p.exists() and not p.is_dir():
                raise AquasError(f"output directory {p} exists and is not a directory")
            if not p.exists():
                p.mkdir(parents=True)
                self.created_dir = True
            if not os.access(p, os.W_OK | os.X_OK):
                raise AquasError(f"output directory {p} is not writable")
            fd = os.open(p / LOCK, os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError as e:
            raise _os_error(e, p, "create output directory") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise AquasError(
                f"output directory {p} is in use by another aquas command (pid {holder})",
                hint="wait for it to finish, or choose another output directory with -o",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        self._read_manifest()
        self._sweep_temporaries()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if kind is not None and self.transactional:
                for name in reversed(self.new):
                    self._delete(name)
                self._write_manifest()
                if self.created_dir:
                    for own in _OWN:
                        (self.path / own).unlink(missing_ok=True)
                    # not empty: someone else wrote into it meanwhile
                    with contextlib.suppress(OSError):
                        self.path.rmdir()
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None

    # -- the manifest --------------------------------------------------------------------

    def _read_manifest(self) -> None:
        try:
            doc = json.loads((self.path / MANIFEST).read_text())
            self.entries = {e for e in doc.get("entries", []) if isinstance(e, str)}
        except (OSError, ValueError, AttributeError):
            self.entries = set()

    def _write_manifest(self) -> None:
        doc = {"tool": "aquas", "entries": sorted(self.entries)}
        write_atomic(self.path / MANIFEST, json.dumps(doc, indent=1) + "\n")

    def _claim(self, name: str) -> None:
        if name not in self.entries:
            self.entries.add(name)
            self.new.append(name)
            self._write_manifest()

    def _sweep_temporaries(self) -> None:
        """Removes temporaries left by an interrupted command (ours: we hold the lock)."""
        stale = [e for e in self.entries if e.endswith(".tmp")]
        for name in stale:
            self._delete(name)
        if stale:
            self._write_manifest()

    def _delete(self, name: str) -> None:
        target = self.path / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
        self.entries.discard(name)

    # -- what commands call --------------------------------------------------------------

    def owns(self, name: str) -> bool:
        return name in self.entries

    def adopt(self, name: str) -> None:
        """Records ``name`` as aquas' own: for outputs of an aquas version that predates
        the manifest, recognised by the caller from their contents."""
        self._claim(name)

    def entry(self, name: str) -> Path:
        """``path/name`` for writing: refused when it exists and aquas did not create it."""
        target = self.path / name
        if (target.exists() or target.is_symlink()) and name not in self.entries:
            raise AquasError(
                f"{target} exists and was not created by aquas; refusing to overwrite it",
                hint="move it away, or choose another output directory with -o",
            )
        self._claim(name)
        return target

    def temporary(self, stem: str) -> Path:
        """A fresh, empty ``path/.stem.tmp`` (swept if left behind).  The name is stable
        (tools that cache by path see the same one each run); the lock keeps it private."""
        name = f".{stem}.tmp"
        tmp = self.entry(name)
        if tmp.exists() or tmp.is_symlink():
            self._delete(name)
            self.entries.add(name)
        try:
            tmp.mkdir()
        except OSError as e:
            raise _os_error(e, tmp, "create") from None
        return tmp

    def replace(self, name: str, tmp: Path) -> Path:
        """Moves the temporary ``tmp`` to ``path/name``, deleting the old ``name`` only
        when aquas created it."""
        final = self.entry(name)
        if final.exists() or final.is_symlink():
            self._delete(name)
            self.entries.add(name)
        tmp.rename(final)
        self.entries.discard(tmp.name)
        self._write_manifest()
        return final

    def discard(self, path: Path) -> None:
        """Deletes an entry this guard created (a temporary that failed)."""
        if path.parent == self.path and path.name in self.entries:
            self._delete(path.name)
            self._write_manifest()

    def commit_files(self, staging: Path) -> list[Path]:
        """Moves every file of the temporary ``staging`` into the directory (replacing
        only aquas' own files), then removes ``staging``."""
        names = sorted(f.name for f in staging.iterdir())
        for n in names:  # check all before moving any, so a refusal changes nothing
            t = self.path / n
            if (t.exists() or t.is_symlink()) and n not in self.entries:
                raise AquasError(
                    f"{t} exists and was not created by aquas; refusing to overwrite it",
                    hint="move it away, or choose another output directory with -o",
                )
        moved = []
        for n in names:
            self._claim(n)
            os.replace(staging / n, self.path / n)
            moved.append(self.path / n)
        self.discard(staging)
        return moved
