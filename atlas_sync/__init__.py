"""atlas-sync: publish lineage to Apache Atlas, idempotently and with the fewest requests."""

from atlas_sync.errors import AtlasSyncError, InputError

__version__ = "0.1.0"

__all__ = ["AtlasSyncError", "InputError", "__version__"]
