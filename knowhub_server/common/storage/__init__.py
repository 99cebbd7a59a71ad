"""The stores: the vector-store interface and its two Qdrant adapters, Redis, the data
directory's lock, and backups."""
