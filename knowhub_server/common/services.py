"""The services a KnowHub server can host (a light module: the command line lists them)."""

# Service name -> module with `register(host: ServiceHost, runtime) -> full service name`.
SERVICE_MODULES = {
    "knowledge": "knowhub_server.knowledge.servicer",
    "resource": "knowhub_server.resource.servicer",
    "cognition": "knowhub_server.cognition.servicer",
    "dream": "knowhub_server.dream.servicer",
}
