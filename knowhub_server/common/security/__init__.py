"""Who a caller is and what it may do: tokens, delegated grants, the local token, TLS,
fair sharing between callers, and secrets kept out of the logs."""
