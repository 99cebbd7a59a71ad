"""The REST gateway: HTTP + JSON in front of the four gRPC services, and the console."""
