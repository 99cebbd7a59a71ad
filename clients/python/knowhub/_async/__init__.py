"""The service APIs and the hub, written once as asyncio code here; knowhub/_sync holds
the blocking ones, which `make sdk-sync` generates from these files with unasync."""
