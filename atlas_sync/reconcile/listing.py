"""The domain's listing, fetched on a thread while the input is rendered.

Listing a domain is server time (Atlas builds a header per entity); rendering is client time. A sync
starts the listing before it renders and takes the headers in between rendered parts, so the two
overlap. Pages wait in a small queue: the listing runs at most ``AHEAD`` pages ahead of the taker,
which keeps memory bounded on huge domains.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable

from atlas_sync.reconcile.actual import ActualHeader

# type, qualifiedName, guid, owner, stored digest, whether it carries its owner's job key
Row = tuple[str, str, str, str | None, str | None]
PAGE = 1_000
AHEAD = 20
_DONE = object()


class BackgroundListing:
    """Runs ``produce`` (an iterator of headers) on a daemon thread; :meth:`take` hands the headers
    over as rows, in pages, on the caller's thread, and re-raises what the listing raised."""

    def __init__(self, produce: Callable[[], Iterable[ActualHeader]]) -> None:
        self._pages: queue.Queue[object] = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self.done = False
        self._thread = threading.Thread(
            target=self._work, args=(produce,), name="atlas-sync-listing", daemon=True
        )
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._pages.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, produce: Callable[[], Iterable[ActualHeader]]) -> None:
        try:
            page: list[Row] = []
            for h in produce():
                page.append((h.type_name, h.qualified_name, h.guid, h.owner, h.digest))
                if len(page) >= PAGE:
                    if not self._put(page):
                        return
                    page = []
            if page:
                self._put(page)
        except BaseException as exc:  # handed to the taker, who raises it
            self._error = exc
        finally:
            self._put(_DONE)

    def take(self, sink: Callable[[list[Row]], None], *, wait: bool) -> None:
        """Give every page listed so far to ``sink``; with ``wait``, until the listing is complete."""
        while not self.done:
            try:
                item = self._pages.get(block=wait)
            except queue.Empty:
                return
            if item is _DONE:
                self.done = True
                self._thread.join()
                if self._error is not None:
                    raise self._error
                return
            sink(item)  # type: ignore[arg-type]

    def cancel(self) -> None:
        """Stop listing (the sync failed): the thread ends after the request in flight."""
        self._stop.set()
        self.done = True
