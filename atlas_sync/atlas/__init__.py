"""Transport to Apache Atlas: the REST client, its errors, retry policy and counters."""

from atlas_sync.atlas.client import AtlasClient, BasicAuth
from atlas_sync.atlas.errors import (
    AtlasError,
    AuthError,
    BadRequestError,
    ConflictError,
    NotAtlasError,
    NotFoundError,
    ServerError,
    TransportError,
)
from atlas_sync.atlas.mutation import MutationResult
from atlas_sync.atlas.retry import RetryPolicy
from atlas_sync.atlas.stats import CallStats, ClientStats

__all__ = [
    "AtlasClient",
    "AtlasError",
    "AuthError",
    "BadRequestError",
    "BasicAuth",
    "CallStats",
    "ClientStats",
    "ConflictError",
    "MutationResult",
    "NotAtlasError",
    "NotFoundError",
    "RetryPolicy",
    "ServerError",
    "TransportError",
]
