"""An OpenLineage HTTP endpoint that publishes lineage to Atlas (``atlas-sync openlineage serve``).

``POST /api/v1/lineage`` (what the openlineage-python HTTP transport and Marquez clients send)
answers fast: validated events go into a bounded queue; a worker batches them per job and syncs
each job through the sync core. See :class:`LineageEndpoint`.
"""

from atlas_sync.openlineage_server.endpoint import Counters, EndpointConfig, LineageEndpoint, serve

__all__ = ["Counters", "EndpointConfig", "LineageEndpoint", "serve"]
