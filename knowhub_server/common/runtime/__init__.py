"""The server process: the gRPC server and what it opens once (Runtime), calls between
services, processes, logs, the HTTP fronts' sockets and the command line's shared options."""
