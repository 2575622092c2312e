"""The domain's listing, fetched on a thread while the input is rendered.

Listing a domain is server time (Atlas builds a header per entity); rendering is client time. A sync
starts the listing before it renders and takes the headers in between rendered parts, so the two
overlap. Pages wait in a small queue: the listing runs at most ``AHEAD`` pages ahead of the taker,
which keeps memory bounded on huge domains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from atlas_sync.atlas.concurrency import Feed
from atlas_sync.reconcile.actual import ActualHeader

# type, qualifiedName, guid, owner, stored digest, whether it carries its owner's job key
Row = tuple[str, str, str, str | None, str | None]
PAGE = 1_000
AHEAD = 20


class BackgroundListing:
    """Runs ``produce`` (an iterator of headers) on a daemon thread; :meth:`take` hands the headers
    over as rows, in pages, on the caller's thread, and re-raises what the listing raised."""

    def __init__(self, produce: Callable[[], Iterable[ActualHeader]]) -> None:
        self._feed = Feed([lambda: _pages(produce())], buffer=AHEAD, name="atlas-sync-listing")
        self.done = False

    def take(self, sink: Callable[[list[Row]], None], *, wait: bool) -> None:
        """Give every page listed so far to ``sink``; with ``wait``, until the listing is complete."""
        if self.done:
            return
        try:
            for page in self._feed.items(wait=wait):
                sink(page)
        finally:
            self.done = self._feed.done

    def cancel(self) -> None:
        """Stop listing (the sync failed): the thread ends after the request in flight."""
        self._feed.close(join=False)
        self.done = True


def _pages(headers: Iterable[ActualHeader]) -> Iterator[list[Row]]:
    page: list[Row] = []
    for h in headers:
        page.append((h.type_name, h.qualified_name, h.guid, h.owner, h.digest))
        if len(page) >= PAGE:
            yield page
            page = []
    if page:
        yield page
