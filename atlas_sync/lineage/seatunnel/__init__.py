"""SeaTunnel job configs and WhaleTunnel exports -> LineageGraph (readers ``seatunnel``, ``whaletunnel``)."""
